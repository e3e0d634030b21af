/**
 * The packages as a user gets them: built, packed by npm, installed from the tarballs into an empty
 * project outside the repository, and used there: the SDK from JavaScript and from strict
 * TypeScript, the server and the demo as installed executables, the CLI installed globally and
 * through npx. Nothing here runs the workspace's sources except the test server the SDK and the CLI
 * talk to.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../packages/server/test/support/harness.ts';
import { seedCatalogue, seedResult } from '../packages/cli/test/support/seed.ts';
import { javascriptFiles, packagesLoadedBy } from './support/imports.ts';
import { PACKAGES, build, entryPoints, includes, manifestOf, pack, packageDir, type PackageName, type Tarball } from './support/packs.ts';
import { createProject, installGlobally, removeNpxEntriesFrom, strictTsconfig, type Project } from './support/project.ts';
import { ROOT, cleanEnv, isInside, ok, processesMentioning, run, start } from './support/run.ts';
import { runPage, servePage } from './support/browser.ts';
import { build as bundle } from 'esbuild';
import { KEPT_README, relativeLinks } from '../scripts/release/packed-docs.ts';

/**
 * Dependencies that the compiled code uses without an import the scan can see. Keep it short.
 * - sdk `undici`: imported by a computed name in src/fetch.ts, so that browser bundlers skip it.
 */
const USED_WITHOUT_IMPORT: Partial<Record<PackageName, string[]>> = { sdk: ['undici'] };

let t: TestServer;
let tmp: string;
/** The web page of the browser test: its origin is trusted by the test server's CORS settings. */
let page: Awaited<ReturnType<typeof servePage>>;
let pageScript = '';
let project: Project | undefined;
const tarballs: Partial<Record<PackageName, Tarball>> = {};

function tarball(name: PackageName): Tarball {
  const found = tarballs[name];
  if (!found) throw new Error(`no ${name} tarball: the build or pack test failed`);
  return found;
}
function installed(): Project {
  if (!project) throw new Error('the sdk and server tarballs were not installed: an earlier test failed');
  return project;
}
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref()),
  ]);
}

test.before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'benchmarks-packaging-'));
  await chmod(tmp, 0o755); // the embedded PostgreSQL runs as the postgres user when we are root
  page = await servePage(() => pageScript);
  t = await startTestServer({ corsOrigins: page.origin }, 'packaging');
});
// How long each step takes, printed at the end (`TEST_VERBOSE=1 npm test -- packaging`): the
// file must stay well under the runner's 5 minutes.
const timings: string[] = [];
let started = Date.now();
test.before.each(() => {
  started = Date.now();
});
test.after.each((context) => {
  timings.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${context.__test__}`);
});
test.after(async () => {
  console.log(`\n${timings.join('\n')}`);
  try {
    await t?.close();
    await page?.close();
  } finally {
    if (tmp) removeNpxEntriesFrom(tmp);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
});

test('the build of these sources (npm run build, unless CI built them already) is packed by npm pack into a tarball per package, none bloated', async () => {
  console.log(`  ${await build()}`);
  const destination = join(tmp, 'tarballs');
  await mkdir(destination);
  const readmes = PACKAGES.map((name) => readFileSync(join(packageDir(name), 'README.md'), 'utf8'));
  for (const name of PACKAGES) tarballs[name] = await pack(name, destination);
  // prepack writes the README with its links to the guides packed beside it; postpack puts the
  // repository's back, and the copies are ignored by git.
  assert.equal(
    PACKAGES.map((name) => readFileSync(join(packageDir(name), 'README.md'), 'utf8')),
    readmes,
    'the READMEs are the repository’s after npm pack',
  );
  for (const name of PACKAGES) {
    assert.not.ok(existsSync(join(packageDir(name), KEPT_README)), `${name}: ${KEPT_README} is left`);
    if (existsSync(join(packageDir(name), 'docs'))) {
      const ignored = await run('git', ['check-ignore', '-q', `packages/${name}/docs/`], { cwd: ROOT, env: cleanEnv(), timeoutMs: 10_000 });
      assert.is(ignored.code, 0, `packages/${name}/docs/ is ignored by git`);
    }
  }
  for (const name of PACKAGES) {
    const { file, size, unpackedSize, files } = tarball(name);
    console.log(`  ${name}: ${(size / 1024).toFixed(1)} KB packed, ${(unpackedSize / 1024).toFixed(1)} KB unpacked, ${files.length} files`);
    assert.ok(existsSync(file), file);
    assert.ok(size < 1024 * 1024, `${name} tarball is ${size} bytes`);
  }
});

test('each tarball has package.json, README.md, LICENSE and every file its exports and bins name, and no sources, tests, build info or fixtures', () => {
  const problems: string[] = [];
  for (const name of PACKAGES) {
    const { files, manifest } = tarball(name);
    for (const required of ['package.json', 'README.md', 'LICENSE'])
      if (!files.includes(required)) problems.push(`${name}: no ${required}`);
    if (!files.some((f) => f.startsWith('dist/') && f.endsWith('.js'))) problems.push(`${name}: no dist/*.js`);
    for (const entry of entryPoints(manifest)) {
      if (!includes(files, entry)) problems.push(`${name}: package.json names ${entry}, which is not in the tarball`);
    }
    const unwanted = files.filter(
      (f) => /(^|\/)(src|test|tests|fixtures|__fixtures__)\//.test(f) || /\.tsbuildinfo$|\.test\.[jt]s$/.test(f),
    );
    if (unwanted.length) problems.push(`${name}: holds ${unwanted.join(', ')}`);
  }
  assert.equal(problems, []);
});

test('the server tarball holds the built explorer and none of its sources', () => {
  const { files } = tarball('server');
  assert.equal(
    files.filter((f) => f.startsWith('assets/explorer/')),
    ['assets/explorer/explorer.css', 'assets/explorer/explorer.js'],
  );
  assert.equal(
    files.filter((f) => f.startsWith('explorer/')),
    [],
  );
});

test('the CLI tarball is exactly package.json, README.md, LICENSE, its guide and the one bundled dist/benchmarks.js', () => {
  assert.equal(tarball('cli').files, ['LICENSE', 'README.md', 'dist/benchmarks.js', 'docs/cli.md', 'package.json']);
});

test('every relative link of each packed README, and of the guides packed with it, leads to a file in the tarball', async () => {
  const broken: string[] = [];
  const seen: string[] = [];
  for (const name of PACKAGES) {
    const { file, files } = tarball(name);
    const unpacked = join(tmp, 'unpacked', name);
    await mkdir(unpacked, { recursive: true });
    await ok('tar', ['-xzf', file, '-C', unpacked], { cwd: tmp, env: cleanEnv(), timeoutMs: 30_000 });
    for (const doc of files.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(join(unpacked, 'package', doc), 'utf8');
      for (const link of relativeLinks(text)) {
        const target = posix.normalize(posix.join(posix.dirname(doc), link.path));
        seen.push(`${name}/${doc} → ${target}`);
        if (!files.includes(target)) broken.push(`${name}: ${doc} links ${link.path}${link.anchor}, not in the tarball`);
      }
    }
  }
  assert.equal(broken, []);
  assert.ok(seen.includes('cli/README.md → docs/cli.md'), seen.join('\n'));
});

test('sdk, server and demo declare as dependencies exactly the packages their compiled code loads', () => {
  const problems: string[] = [];
  for (const name of ['sdk', 'server', 'demo'] as const) {
    const loaded = packagesLoadedBy(javascriptFiles(join(packageDir(name), 'dist')));
    const withoutImport = USED_WITHOUT_IMPORT[name] ?? [];
    const declared = Object.keys(tarball(name).manifest.dependencies ?? {});
    for (const dep of withoutImport.filter((d) => loaded.includes(d)))
      problems.push(`${name}: ${dep} is imported now: drop it from USED_WITHOUT_IMPORT`);
    for (const dep of loaded.filter((d) => !declared.includes(d)))
      problems.push(`${name}: dist/ loads ${dep}, which is not in dependencies`);
    for (const dep of declared.filter((d) => !loaded.includes(d) && !withoutImport.includes(d)))
      problems.push(`${name}: depends on ${dep}, which dist/ never loads`);
  }
  assert.equal(problems, []);
});

test('the CLI bundle loads nothing but Node’s own modules and declares no dependencies', () => {
  assert.equal(packagesLoadedBy([join(packageDir('cli'), 'dist', 'benchmarks.js')]), [], 'bare imports or require() calls in the bundle');
  assert.is(tarball('cli').manifest.dependencies, undefined);
});

test('npm install of the sdk and server tarballs works in an empty project outside the repository', async () => {
  const p = await createProject(join(tmp, 'consumer'));
  assert.not.ok(isInside(p.dir, ROOT), `${p.dir} is inside the repository`);
  await p.install(tarball('sdk').file, tarball('server').file);
  assert.ok(existsSync(p.bin('benchmarks-server')), 'node_modules/.bin/benchmarks-server');
  assert.not.ok(
    existsSync(join(p.dir, 'node_modules/@benchmarks/server/node_modules/@benchmarks/sdk')),
    'the server uses the sdk from its tarball, not a second copy',
  );
  project = p;
});

test('a plain Node script imports the installed SDK and its contract and reads results from a running server', async () => {
  const p = installed();
  const c = await seedCatalogue(t, 'pkgsdk');
  const token = await t.user('sdk-user');
  for (const score of [1, 2, 3, 4, 5]) await seedResult(t, token, c, { score }, `2025-01-0${score}T10:00:00Z`);
  const env = cleanEnv({ BENCHMARKS_SERVER: t.url, BENCHMARKS_TOKEN: token, BENCHMARK_ID: c.benchmark.id });
  const { stdout } = await ok(process.execPath, [p.copyFixture('consumer.mjs')], { cwd: p.dir, env, timeoutMs: 30_000 });
  const seen = JSON.parse(stdout);
  assert.ok(String(seen.resolved).startsWith(pathToFileURL(join(p.dir, 'node_modules/@benchmarks/sdk/')).href), seen.resolved);
  assert.is(seen.sdkVersion, manifestOf('sdk').version);
  assert.is(seen.healthPath, '/api/v1/health');
  assert.equal(seen.health, { status: 'ok', version: manifestOf('server').version });
  assert.is(seen.self, 'sdk-user');
  assert.equal(seen.firstPage, { total: 4, pages: 2, scores: [5, 4] });
  assert.equal(seen.every, [1, 2, 3, 4, 5], 'every page, in execution order');
  assert.is(seen.missing, 'NotFoundError 404');
});

test('a web page bundles the installed SDK with esbuild and reads results from the server in Chromium (cross-origin)', async () => {
  const p = installed();
  const c = await seedCatalogue(t, 'pkgweb');
  const token = await t.user('web-user');
  for (const score of [1, 2, 3]) await seedResult(t, token, c, { score }, `2025-02-0${score}T10:00:00Z`);
  const out = await bundle({
    entryPoints: [p.copyFixture('browser-app.js')],
    absWorkingDir: p.dir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const js = out.outputFiles[0]!.text;
  assert.not.match(js, /["']node:/, 'no Node module in the browser bundle');
  pageScript = `window.API = ${JSON.stringify(t.url)}; window.TOKEN = ${JSON.stringify(token)}; window.BENCHMARK_ID = ${JSON.stringify(c.benchmark.id)};\n${js}`;
  const { result } = await runPage(page.origin);
  assert.equal(result, {
    health: { status: 'ok', version: manifestOf('server').version },
    self: 'web-user',
    total: 2,
    scores: [3, 2],
    missing: 'NotFoundError 404',
  });
});

for (const [module, file] of [
  ['node16', 'consumer.mts'],
  ['bundler', 'consumer.mts'],
  ['nodenext', 'consumer.cts'],
] as const) {
  test(`a strict TypeScript project type-checks against the installed SDK (${file}, ${module} resolution, exactOptionalPropertyTypes, skipLibCheck off)`, async () => {
    const p = installed();
    if (!existsSync(p.bin('tsc'))) await p.install('typescript@6.0.3', '@types/node@20.19.25');
    p.copyFixture(file);
    const config = p.writeJson(`tsconfig.${module}.json`, strictTsconfig(module, file));
    const tsc = await run(p.bin('tsc'), ['-p', config], { cwd: p.dir, timeoutMs: 90_000 });
    assert.is(tsc.code, 0, `tsc -p tsconfig.${module}.json:\n${tsc.stdout}${tsc.stderr}`);
  });
}

test('the installed benchmarks-server runs on its embedded PostgreSQL, answers /health with its version and stops on SIGTERM leaving no process', async () => {
  const p = installed();
  const dataDir = join(tmp, 'data');
  const server = start(p.bin('benchmarks-server'), ['start', '--port', '0', '--data-dir', dataDir, '--log-level', 'info'], {
    cwd: p.dir,
    timeoutMs: 120_000,
  });
  try {
    const [line] = await server.waitFor('stderr', /^\{.*"msg":"serving on http:\/\/.*\}$/m, 60_000);
    const { url } = JSON.parse(line) as { url: string };
    const health = await fetch(`${url}/api/v1/health`);
    assert.is(health.status, 200);
    assert.equal(await health.json(), { status: 'ok', version: manifestOf('server').version });
    // The explorer, from the bundle the build put in the package's assets.
    const explorer = await fetch(`${url}/explore/rank`);
    assert.is(explorer.status, 200);
    assert.match(explorer.headers.get('content-security-policy') ?? '', "script-src 'self'");
    for (const file of ['explorer.js', 'explorer.css']) {
      const asset = await fetch(`${url}/explore/assets/${file}`);
      assert.is(asset.status, 200, file);
      assert.ok((await asset.text()).length > 1000, `${file} is the bundle`);
    }
    assert.ok(processesMentioning(dataDir).length >= 2, 'the server and its PostgreSQL run with the data directory');
    server.child.kill('SIGTERM');
    const { code, stderr } = await within(server.exited, 30_000, 'stopping on SIGTERM');
    assert.is(code, 0, stderr);
    assert.equal(processesMentioning(dataDir), [], 'processes left behind');
  } finally {
    await server.kill();
  }
});

test('benchmarks-server start --demo without @benchmarks/demo installed exits 1 with one line naming it', async () => {
  const p = installed();
  const s = await run(p.bin('benchmarks-server'), ['start', '--demo', '--port', '0', '--data-dir', join(tmp, 'no-demo')], {
    cwd: p.dir,
    timeoutMs: 30_000,
  });
  assert.is(s.code, 1, s.stderr);
  const lines = s.stderr.trim().split('\n');
  assert.is(lines.length, 1, s.stderr);
  assert.match(lines[0]!, /@benchmarks\/demo/);
  assert.match(lines[0]!, /npm install @benchmarks\/demo|npx @benchmarks\/demo/, 'says how to get it');
});

test('the installed benchmarks-demo serves a seeded catalogue, prints tokens that work and stops on SIGTERM leaving no process', async () => {
  const p = installed();
  await p.install(tarball('demo').file);
  const dataDir = join(tmp, 'demo-data');
  const demo = start(p.bin('benchmarks-demo'), ['--port', '0', '--data-dir', dataDir], { cwd: p.dir, timeoutMs: 120_000 });
  try {
    const [, adminToken] = await demo.waitFor('stdout', /Demo admin token[^\n]*\n(\S+)/, 60_000);
    const [, url] = await demo.waitFor('stderr', /"msg":"serving on (http:\/\/[^"]+)"/, 60_000);
    const sites = await fetch(`${url}/api/v1/sites`);
    assert.is(sites.status, 200);
    assert.ok(((await sites.json()) as { items: unknown[] }).items.length > 0, 'the demo catalogue has sites');
    const self = await fetch(`${url}/api/v1/users/self`, { headers: { authorization: `Bearer ${adminToken}` } });
    assert.is(self.status, 200, 'the printed admin token is accepted');
    demo.child.kill('SIGTERM');
    const { code, stderr } = await within(demo.exited, 30_000, 'stopping on SIGTERM');
    assert.is(code, 0, stderr);
    assert.equal(processesMentioning(dataDir), [], 'processes left behind');
  } finally {
    await demo.kill();
  }
});

test('benchmarks installed globally from its tarball prints its version and brings nothing else', async () => {
  const prefix = join(tmp, 'global');
  await mkdir(prefix);
  await installGlobally(prefix, tarball('cli').file);
  assert.equal(readdirSync(join(prefix, 'lib', 'node_modules')), ['@benchmarks']);
  assert.not.ok(existsSync(join(prefix, 'lib/node_modules/@benchmarks/cli/node_modules')), 'no dependency installed');
  const { stdout } = await ok(join(prefix, 'bin', 'benchmarks'), ['--version'], { cwd: tmp, timeoutMs: 30_000 });
  assert.is(stdout.trim(), manifestOf('cli').version);
});

test('npx with the CLI tarball runs benchmarks from an empty directory', async () => {
  const empty = join(tmp, 'empty');
  await mkdir(empty);
  const npx = await ok('npm', ['exec', '--yes', '--prefer-offline', `--package=${tarball('cli').file}`, '--', 'benchmarks', '--version'], {
    cwd: empty,
    timeoutMs: 60_000,
  });
  assert.is(npx.stdout.trim(), manifestOf('cli').version);
  assert.equal(readdirSync(empty), [], 'npx leaves the directory as it was');
});

test('the globally installed benchmarks uploads result files, which the server then lists', async () => {
  const benchmarks = join(tmp, 'global', 'bin', 'benchmarks');
  if (!existsSync(benchmarks)) throw new Error('the global install test failed');
  const c = await seedCatalogue(t, 'pkgcli');
  const dir = join(tmp, 'results');
  await mkdir(dir);
  for (const score of [11, 12, 13]) await writeFile(join(dir, `run-${score}.json`), JSON.stringify({ score }));
  const env = cleanEnv({ HOME: join(tmp, 'runner-home'), BENCHMARKS_SERVER: t.url, BENCHMARKS_TOKEN: await t.user('runner') });
  const flags = ['--benchmark', c.benchmark.name, '--flavor', `${c.site.name}/${c.flavor.name}`, '--executed-at', '2025-03-01T08:30:00Z'];
  const upload = await run(benchmarks, ['results', 'upload', dir, ...flags], { cwd: tmp, env, timeoutMs: 60_000 });
  assert.is(upload.code, 0, upload.stderr);
  const stored = await t.request('GET', '/results', { query: { benchmark_id: c.benchmark.id, sort_by: '+json.score' } });
  assert.equal(
    stored.body.items.map((r: { json: { score: number } }) => r.json.score),
    [11, 12, 13],
  );
  assert.ok(stored.body.items.every((r: { execution_datetime: string }) => r.execution_datetime.startsWith('2025-03-01T08:30:00')));
});

test.run();
