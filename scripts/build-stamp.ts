/**
 * Whether the packages' build (scripts/build.ts) is the build of the sources as they are now: the build
 * writes a digest of what it read into `dist/build.json`; the steps that need the build reuse it when
 * the digest of the sources now is the same and every output is there, and build again otherwise
 * (scripts/current-build.ts): the test runner before the first file, the tests that start the
 * compiled server as a process (packages/server/test/support/process.ts, the documentation's
 * examples) and the packaging test, which packs it. CI then compiles once.
 *
 * What the build reads: every file under `packages/<name>/src` and `packages/server/explorer`, each package's package.json and
 * tsconfig.json, tsconfig.base.json, package-lock.json (the CLI bundle holds its dependencies), and
 * the build script with this module.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export const BUILT_PACKAGES = ['sdk', 'server', 'demo', 'cli'] as const;

/** Where the digest of the last build is kept (ignored by git with the rest of dist/). */
export const stampFile = (root: string) => join(root, 'dist', 'build.json');

/** The outputs a build leaves: each compiled package's dist/ and the CLI bundle. */
const outputs = (root: string) => [
  ...['sdk', 'server', 'demo'].map((name) => join(root, 'packages', name, 'dist', 'index.js')),
  join(root, 'packages', 'cli', 'dist', 'benchmarks.js'),
  join(root, 'packages', 'server', 'assets', 'explorer', 'explorer.js'),
];

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The files the build reads, relative to `root`, sorted. */
export function buildInputs(root: string): string[] {
  const files = [
    ...BUILT_PACKAGES.flatMap((name) => {
      const dir = join(root, 'packages', name);
      return [join(dir, 'package.json'), join(dir, 'tsconfig.json'), ...filesUnder(join(dir, 'src'))];
    }),
    // The explorer's sources, bundled into the server's assets.
    ...filesUnder(join(root, 'packages', 'server', 'explorer')),
    ...['tsconfig.base.json', 'package-lock.json', 'scripts/build.ts', 'scripts/build-stamp.ts'].map((f) => join(root, f)),
  ];
  return files
    .filter((f) => existsSync(f))
    .map((f) => relative(root, f))
    .sort();
}

/** A digest of the names and contents of the files the build reads. */
export function digestOfInputs(root: string): string {
  const hash = createHash('sha256');
  for (const file of buildInputs(root)) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Records that the outputs now in place are the build of the sources now in place. */
export function writeStamp(root: string): void {
  const file = stampFile(root);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ inputs: digestOfInputs(root) })}\n`);
}

/** Why the build in place cannot be reused, or `undefined` when it can. */
export function staleBuild(root: string): string | undefined {
  let recorded: unknown;
  try {
    recorded = (JSON.parse(readFileSync(stampFile(root), 'utf8')) as { inputs?: unknown }).inputs;
  } catch {
    return 'no build recorded';
  }
  const missing = outputs(root).filter((f) => !existsSync(f));
  if (missing.length) return `${missing.map((f) => relative(root, f)).join(', ')} missing`;
  if (recorded !== digestOfInputs(root)) return 'the sources changed since the last build';
  return undefined;
}
