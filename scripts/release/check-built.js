#!/usr/bin/env node
// `prepack` of every published package (npm pack, npm publish, lerna publish run it in the
// package's directory): refuses to pack a package whose `bin`, `main`, `types` or `exports` name a
// file that is not there, so that nobody publishes a package without its build. One line, exit 1.
//
//   "prepack": "node ../../scripts/release/check-built.js"
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

// Only used inside the monorepo (scripts/dev/): it names sources, which are not published.
const SOURCE_CONDITION = '@benchmarks/source';

const dir = process.cwd();
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/** Every file path an `exports` value can resolve to, except through the source condition. */
function exportTargets(value) {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(exportTargets);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, v]) => (key === SOURCE_CONDITION ? [] : exportTargets(v)));
  }
  return [];
}

/** A path with a `*` (subpath pattern) is there when at least one file matches it. */
function present(path) {
  const file = join(dir, path);
  if (!path.includes('*')) return existsSync(file);
  const [prefix, suffix] = basename(file).split('*');
  const folder = dirname(file);
  return existsSync(folder) && readdirSync(folder).some((f) => f.startsWith(prefix) && f.endsWith(suffix));
}

const bin = typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {});
const wanted = [...bin, pkg.main, pkg.types, ...exportTargets(pkg.exports)].filter(Boolean);
const missing = [...new Set(wanted)].filter((path) => !present(path));
if (missing.length > 0) {
  const list = missing.map((p) => p.replace(/^\.\//, '')).join(', ');
  process.stderr.write(`${pkg.name}: not built (missing ${list}): run \`npm run build\` at the repository root first\n`);
  process.exit(1);
}
