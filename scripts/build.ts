/**
 * `npm run build`: what the packages publish, built from a clean slate.
 *
 * - `@benchmarks/sdk`, `@benchmarks/server`, `@benchmarks/demo`: compiled by the TypeScript compiler
 *   to `dist/` (ES modules, `.d.ts`, source maps with their sources inlined; migrations included).
 * - `@benchmarks/cli`: one bundled, minified ES module, `dist/benchmarks.js`, with every dependency
 *   inside (the SDK too), so that `benchmarks` starts about as fast as Node itself and installs with
 *   nothing else.
 *
 * Inside the monorepo nothing needs this: tests and `npm start` run the sources (scripts/dev/). The
 * packaging test (test/packaging.test.ts) packs this build when it is the build of the sources in
 * place (scripts/build-stamp.ts), and builds again otherwise.
 *
 * - the explorer (`/explore`): its sources (packages/server/explorer) bundled and minified by esbuild into
 *   `packages/server/assets/explorer/` (explorer.js, explorer.css), which the built server serves.
 *
 * - with `--sea`, also the CLI as a standalone executable for runners without Node
 *   (`packages/cli/dist/benchmarks-<platform>-<arch>`: this Node binary with the CLI inside, a Node
 *   single executable application). Not published to npm: attach it to a release.
 *
 *   npm run build             # everything
 *   npm run build -- --cli    # only the CLI bundle
 *   npm run build:sea         # everything, and the standalone executable
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { writeStamp } from './build-stamp.ts';
import { EXPLORER_ASSETS, explorerBuildOptions } from '../packages/server/src/http/explorer.ts';

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

/**
 * What both CLI bundles share. Its sources, and the SDK's, are read as TypeScript (the workspace
 * condition). The SDK loads undici by a computed name, which a bundle leaves out: the CLI passes
 * Node's own fetch, and the SDK falls back to it when undici cannot be loaded.
 */
const CLI_BUNDLE = {
  entryPoints: [join(ROOT, 'packages', 'cli', 'src', 'main.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20.19',
  conditions: ['@benchmarks/source'],
  minify: true,
  logLevel: 'warning',
} satisfies BuildOptions;

/** The explorer's two files, from nothing. */
async function bundleExplorer(): Promise<void> {
  rmSync(EXPLORER_ASSETS, { recursive: true, force: true });
  await build({ ...explorerBuildOptions(), outdir: EXPLORER_ASSETS });
}

/** The CLI as one file. */
export async function bundleCli(): Promise<string> {
  const outfile = join(ROOT, 'packages', 'cli', 'dist', 'benchmarks.js');
  await build({
    ...CLI_BUNDLE,
    outfile,
    format: 'esm',
    // No source map: it would triple the download; DEBUG=1 stacks name the bundle's functions.
    sourcemap: false,
    legalComments: 'linked',
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

/**
 * The CLI inside a copy of this Node binary. Node 20 runs only a CommonJS main in a single executable,
 * hence a second bundle of the same entry; postject writes it into the copy.
 */
export async function buildStandalone(): Promise<string> {
  const dir = join(ROOT, 'packages', 'cli', 'dist', 'sea');
  mkdirSync(dir, { recursive: true });
  const main = join(dir, 'benchmarks.cjs');
  await build({ ...CLI_BUNDLE, outfile: main, format: 'cjs' });
  const blob = join(dir, 'benchmarks.blob');
  const config = join(dir, 'sea-config.json');
  writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }));
  const prepared = spawnSync(process.execPath, ['--experimental-sea-config', config], { cwd: dir, encoding: 'utf8' });
  if (prepared.status !== 0) throw new Error(`node --experimental-sea-config failed: ${prepared.stderr}`);
  const executable = join(ROOT, 'packages', 'cli', 'dist', `benchmarks-${process.platform}-${process.arch}`);
  rmSync(executable, { force: true });
  copyFileSync(process.execPath, executable);
  const postject = join(ROOT, 'node_modules', 'postject', 'dist', 'cli.js');
  const injected = spawnSync(
    process.execPath,
    [postject, executable, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'],
    { encoding: 'utf8' },
  );
  if (injected.status !== 0) throw new Error(`postject failed: ${injected.stderr}`);
  return executable;
}

const onlyCli = process.argv.includes('--cli');
const started = Date.now();
if (!onlyCli) compile();
if (!onlyCli) await bundleExplorer();
const cli = await bundleCli();
const standalone = process.argv.includes('--sea') ? await buildStandalone() : undefined;
// What this build read, for the steps that reuse it (scripts/build-stamp.ts).
if (!onlyCli) writeStamp(ROOT);
const size = (file: string) => `${Math.round(statSync(file).size / 1024)} KB`;
process.stdout.write(
  `built ${onlyCli ? '' : `${COMPILED.map((n) => `packages/${n}/dist`).join(', ')}, packages/server/assets/explorer, `}packages/cli/dist/benchmarks.js (${size(cli)})` +
    `${standalone ? ` and ${standalone.slice(ROOT.length)} (${size(standalone)})` : ''} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
