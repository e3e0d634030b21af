/**
 * `npm run build`: what the packages publish, built from a clean slate.
 *
 * - `@benchmarks/sdk`, `@benchmarks/server`, `@benchmarks/demo`: compiled by the TypeScript compiler
 *   to `dist/` (ES modules, `.d.ts`, source maps with their sources inlined; migrations included).
 * - `@benchmarks/cli`: one bundled, minified ES module, `dist/benchmarks.js`, with every dependency
 *   inside (the SDK too), so that `benchmarks` starts about as fast as Node itself and installs with
 *   nothing else.
 *
 * Inside the monorepo nothing needs this: tests and `npm start` run the sources (scripts/dev/).
 *
 *   npm run build             # everything
 *   npm run build -- --cli    # only the CLI bundle
 */
import { spawnSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const COMPILED = ['sdk', 'server', 'demo'];

/** The compiled packages, from nothing: a stale file of a removed source must not be published. */
function compile(): void {
  for (const name of [...COMPILED, 'cli']) {
    rmSync(join(ROOT, 'packages', name, 'dist'), { recursive: true, force: true });
    rmSync(join(ROOT, 'packages', name, 'tsconfig.tsbuildinfo'), { force: true });
  }
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const projects = COMPILED.map((name) => join('packages', name));
  const run = spawnSync(process.execPath, [tsc, '-b', ...projects], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`tsc -b ${projects.join(' ')} failed`);
}

/** The CLI as one file. Its sources, and the SDK's, are read as TypeScript (the workspace condition). */
export async function bundleCli(): Promise<string> {
  const outfile = join(ROOT, 'packages', 'cli', 'dist', 'benchmarks.js');
  await build({
    entryPoints: [join(ROOT, 'packages', 'cli', 'src', 'main.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    conditions: ['@benchmarks/source'],
    minify: true,
    // No source map: it would triple the download; DEBUG=1 stacks name the bundle's functions.
    sourcemap: false,
    legalComments: 'linked',
    logLevel: 'warning',
    // Dependencies written as CommonJS (commander, ajv) call require() for Node's own modules.
    banner: {
      js: [
        '#!/usr/bin/env node',
        "import { createRequire as __benchmarksCreateRequire } from 'node:module';",
        'const require = __benchmarksCreateRequire(import.meta.url);',
      ].join('\n'),
    },
  });
  return outfile;
}

const onlyCli = process.argv.includes('--cli');
const started = Date.now();
if (!onlyCli) compile();
const cli = await bundleCli();
process.stdout.write(
  `built ${onlyCli ? '' : `${COMPILED.map((n) => `packages/${n}/dist`).join(', ')} and `}` +
    `packages/cli/dist/benchmarks.js (${Math.round(statSync(cli).size / 1024)} KB) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
