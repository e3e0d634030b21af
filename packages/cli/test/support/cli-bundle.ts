/**
 * The CLI as one file, bundled from its sources as `npm run build` bundles the published one
 * (scripts/build.ts), for the tests that run `benchmarks` as a process. bin/benchmarks.js runs the
 * same sources through tsx, which costs about a second of CPU per command; the bundle about a tenth
 * of that, and the tests run a few hundred commands.
 *
 * Bundled once per version of the sources: kept in `node_modules/.cache/benchmarks-test-cli/` under
 * the digest of what goes into it (the CLI's and the SDK's sources and manifests, the lockfile), so
 * that every test file of a run, and the next run, use the same file until a source changes.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'benchmarks-test-cli');

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

/** A digest of the names and contents of what the bundle is made of. */
function digestOfSources(): string {
  const hash = createHash('sha256');
  const files = [
    ...['cli', 'sdk'].flatMap((name) => [join(ROOT, 'packages', name, 'package.json'), ...filesUnder(join(ROOT, 'packages', name, 'src'))]),
    join(ROOT, 'package-lock.json'),
  ];
  for (const file of files)
    hash
      .update(`${file.slice(ROOT.length)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex').slice(0, 20);
}

let bundled: Promise<string> | undefined;

/** The path of the bundle of the CLI's current sources, made if need be. */
export function cliBundle(): Promise<string> {
  bundled ??= (async () => {
    const file = join(CACHE, `benchmarks-${digestOfSources()}.mjs`);
    if (existsSync(file)) return file;
    mkdirSync(CACHE, { recursive: true });
    // Written under a name of its own, then renamed: test files bundling at once never read half a file.
    const partial = `${file}.${process.pid}.partial`;
    await build({
      entryPoints: [join(ROOT, 'packages', 'cli', 'src', 'main.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20.19',
      conditions: ['@benchmarks/source'],
      format: 'esm',
      outfile: partial,
      logLevel: 'warning',
      // Dependencies written as CommonJS (commander, ajv) call require() for Node's own modules.
      banner: { js: "import { createRequire as __testRequire } from 'node:module';\nconst require = __testRequire(import.meta.url);" },
    });
    renameSync(partial, file);
    return file;
  })();
  return bundled;
}
