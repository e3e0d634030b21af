#!/usr/bin/env node
// From a clone: runs the CLI from its TypeScript sources (no build step). Installed users get the
// bundled `benchmarks` of the @benchmarks/cli package instead.
import '../scripts/dev/register.js';

await import('../packages/cli/src/main.ts');
