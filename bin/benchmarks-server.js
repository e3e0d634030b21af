#!/usr/bin/env node
// From a clone: runs the server from its TypeScript sources (no build step). Installed users get
// the compiled `benchmarks-server` of the @benchmarks/server package instead.
import '../scripts/dev/register.js';

await import('../packages/server/src/cli.ts');
