#!/usr/bin/env node
// The root `version` lifecycle script, run by `lerna version` after it has bumped every package
// and before it commits (docs/release.md). Brings along what lerna does not know about:
//
// - `SDK_VERSION` (packages/sdk/src/version.ts) and `CLI_VERSION` (packages/cli/src/version.ts)
//   get the new version of their package.json;
// - CHANGELOG.md: the entries under "## Unreleased" move under "## <version> - <today, UTC>";
// - `git add` of what changed, so that it is part of lerna's release commit.
//
//   node scripts/release/version.js           # after the bump (the `version` script)
//   node scripts/release/version.js --check   # before it: fails, changing nothing, if the release
//                                             # would have no changelog entry (the `preversion` script)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['sdk', 'server', 'demo', 'cli'];
const CONSTANTS = [
  { file: 'packages/sdk/src/version.ts', name: 'SDK_VERSION', pkg: 'sdk' },
  { file: 'packages/cli/src/version.ts', name: 'CLI_VERSION', pkg: 'cli' },
];
const CHANGELOG = 'CHANGELOG.md';
const UNRELEASED = /^## Unreleased[ \t]*$/m;

function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}

const read = (file) => readFileSync(join(ROOT, file), 'utf8');
const versionOf = (name) => JSON.parse(read(`packages/${name}/package.json`)).version;

/** The text under "## Unreleased" up to the next "## " heading, and where it is. */
function unreleased(changelog) {
  const heading = UNRELEASED.exec(changelog);
  if (!heading) fail(`${CHANGELOG} has no "## Unreleased" heading`);
  const start = heading.index + heading[0].length;
  const next = changelog.slice(start).search(/^## /m);
  const end = next === -1 ? changelog.length : start + next;
  return { start, end, body: changelog.slice(start, end).trim() };
}

function check() {
  for (const { file, name } of CONSTANTS) {
    if (!new RegExp(`^export const ${name} = '[^']*';$`, 'm').test(read(file)))
      fail(`${file} has no line \`export const ${name} = '...';\``);
  }
  if (!unreleased(read(CHANGELOG)).body) fail(`nothing under "## Unreleased" in ${CHANGELOG}: say what this release changes first`);
}

function apply() {
  const versions = new Set(PACKAGES.map(versionOf));
  if (versions.size !== 1) fail(`the packages do not share one version (${[...versions].join(', ')}): lerna.json is in fixed mode`);
  const [version] = versions;
  const changed = [];

  for (const { file, name, pkg } of CONSTANTS) {
    const text = read(file);
    const line = new RegExp(`^export const ${name} = '[^']*';$`, 'm');
    if (!line.test(text)) fail(`${file} has no line \`export const ${name} = '...';\``);
    const next = text.replace(line, `export const ${name} = '${versionOf(pkg)}';`);
    if (next !== text) {
      writeFileSync(join(ROOT, file), next);
      changed.push(file);
    }
  }

  const changelog = read(CHANGELOG);
  if (new RegExp(`^## ${version.replaceAll('.', '\\.')}( |$)`, 'm').test(changelog)) {
    fail(`${CHANGELOG} already has a heading for ${version}`);
  }
  const { start, end, body } = unreleased(changelog);
  if (!body) fail(`nothing under "## Unreleased" in ${CHANGELOG}`);
  const today = new Date().toISOString().slice(0, 10);
  const rest = changelog.slice(end).trim();
  const moved = `${changelog.slice(0, start)}\n\n## ${version} - ${today}\n\n${body}\n${rest ? `\n${rest}\n` : ''}`;
  writeFileSync(join(ROOT, CHANGELOG), moved);
  changed.push(CHANGELOG);

  execFileSync('git', ['add', '--', ...changed], { cwd: ROOT, stdio: 'inherit' });
  process.stdout.write(`release: ${version}: ${changed.join(', ')} updated\n`);
}

if (process.argv.includes('--check')) check();
else apply();
