// Runs the workspace from its TypeScript sources, with no build step: `node --import
// ./scripts/dev/register.js file.ts`. tsx compiles TypeScript on the fly, and every import of a
// workspace package (`@benchmarks/sdk`, ...) resolves to its `src/` through the package's
// `@benchmarks/source` export condition instead of the compiled `dist/` that users get.
import { register } from 'node:module';
import 'tsx';

register(new URL('./source-condition.js', import.meta.url));
