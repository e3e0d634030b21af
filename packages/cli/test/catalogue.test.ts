/**
 * `benchmarks benchmarks|sites|flavors|tags update|delete` against a real server: updates change
 * only the fields given; deletes ask on a terminal, need --yes without one (exit 2), refuse a
 * referenced item with a hint about --cascade, and with --cascade take what refers to the item along.
 */
import { Readable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import type { Io } from '../src/io.ts';
import { benchmarks, runVerb } from '../src/commands/catalogue.ts';
import { sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, seedResult, type Catalogue } from './support/seed.ts';

let t: TestServer;
let box: Sandbox;
let c: Catalogue;
let admin: { env: Record<string, string> };
let asUser: { env: Record<string, string> };

test.before(async () => {
  t = await startTestServer({}, 'cli_catalogue');
  box = await sandbox();
  c = await seedCatalogue(t, 'catalogue');
  box.env.BENCHMARKS_SERVER = t.url;
  admin = { env: { BENCHMARKS_TOKEN: c.admin } };
  asUser = { env: { BENCHMARKS_TOKEN: await t.user('someone') } };
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

const ok = (res: { code: number | null; stdout: string; stderr: string }) => {
  assert.is(res.code, 0, res.stderr);
  return res.stdout ? JSON.parse(res.stdout) : undefined;
};
const status = async (path: string) => (await t.request('GET', path)).status;

/** A fresh benchmark, site, flavor and tag, with `results` results using all four. */
async function scratch(name: string, results: number) {
  const s = await seedCatalogue(t, name);
  for (let i = 0; i < results; i++) await seedResult(t, s.admin, s, { score: i }, '2025-01-01T10:00:00Z', [s.tag.id]);
  return s;
}

/** In-process run with a terminal on stdin that answers `answer`. */
function terminal(answer: string): Io & { err: () => string } {
  let err = '';
  return {
    stdout: { write: () => true },
    stderr: { write: (s: string) => (err += s) },
    stdin: Readable.from([answer]),
    isTTY: { stdin: true, stdout: false, stderr: false },
    env: { ...box.env },
    err: () => err,
  };
}

test('benchmarks update: changes the fields given, keeps the others; name and schema too', async () => {
  const s = await scratch('upd-bench', 0);
  const updated = ok(await box.run(['benchmarks', 'update', s.benchmark.name, '--description', 'second version', '-o', 'json'], admin));
  assert.is(updated.description, 'second version');
  assert.is(updated.url, 'https://example.org/bench', 'url kept');
  assert.is(updated.json_schema.required[0], 'score', 'schema kept');
  const renamed = ok(
    await box.run(
      [
        'benchmarks',
        'update',
        s.benchmark.id,
        '--name',
        'ghcr.io/upd-bench/bench:2.0',
        '--schema',
        '{"type":"object"}',
        '--url',
        '',
        '-o',
        'json',
      ],
      admin,
    ),
  );
  assert.equal(
    [renamed.name, renamed.json_schema, renamed.url, renamed.description],
    ['ghcr.io/upd-bench/bench:2.0', { type: 'object' }, null, 'second version'],
  );
  const stored = (await t.request('GET', `/benchmarks/${s.benchmark.id}`)).body;
  assert.is(stored.name, 'ghcr.io/upd-bench/bench:2.0');
});

test('sites, flavors and tags update: by name, only the fields given', async () => {
  const s = await scratch('upd-rest', 0);
  const site = ok(await box.run(['sites', 'update', s.site.name, '--address', 'Vigo, Spain', '-o', 'json'], admin));
  assert.equal([site.name, site.address], [s.site.name, 'Vigo, Spain']);
  const flavor = ok(
    await box.run(
      ['flavors', 'update', `${s.site.name}/${s.flavor.name}`, '--name', 'c4.xlarge', '--description', '', '-o', 'json'],
      admin,
    ),
  );
  assert.equal([flavor.name, flavor.description, flavor.site_id], ['c4.xlarge', null, s.site.id]);
  const tag = ok(await box.run(['tags', 'update', s.tag.name, '--description', 'every night', '-o', 'json'], admin));
  assert.equal([tag.name, tag.description], [s.tag.name, 'every night']);
  assert.is((await t.request('GET', `/flavors/${s.flavor.id}`)).body.name, 'c4.xlarge');
});

test('update: nothing to change is a usage error (2); a user who is not an admin gets 4; a taken name 1', async () => {
  const [nothing, notAdmin, taken] = await Promise.all([
    box.run(['tags', 'update', c.tag.name], admin),
    box.run(['tags', 'update', c.tag.name, '--description', 'mine now'], asUser),
    box.run(['sites', 'update', c.site.name, '--name', (await seedCatalogue(t, 'taken')).site.name], admin),
  ]);
  assert.is(nothing.code, 2);
  assert.match(nothing.stderr, /Nothing to change: give --name or --description\./);
  assert.is(notAdmin.code, 4, notAdmin.stderr);
  assert.match(notAdmin.stderr, /^Error: Not allowed: this needs an administrator/m);
  assert.is(taken.code, 1, taken.stderr);
  assert.is((await t.request('GET', `/tags/${c.tag.id}`)).body.description, null, 'nothing changed');
});

test('delete without a terminal and without --yes: exit 2 with one line, nothing deleted (no request made)', async () => {
  const res = await box.run(['benchmarks', 'delete', c.benchmark.name], admin);
  assert.is(res.code, 2);
  assert.match(res.stderr, /^Error: Deleting cannot be undone and there is no terminal to ask on: pass --yes to delete the benchmark /m);
  assert.is(await status(`/benchmarks/${c.benchmark.id}`), 200);
});

test('delete of a referenced item without --cascade: exit 1 naming what refers to it and --cascade; with it, all gone', async () => {
  const s = await scratch('del-bench', 3);
  const refused = await box.run(['benchmarks', 'delete', s.benchmark.name, '--yes'], admin);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /^Error: .*referenced by 3 results; pass --cascade to delete them too\./m);
  assert.is(await status(`/benchmarks/${s.benchmark.id}`), 200);

  const done = await box.run(['benchmarks', 'delete', s.benchmark.name, '--cascade', '--yes'], admin);
  assert.is(done.code, 0, done.stderr);
  assert.match(done.stderr, /Deleted benchmark ghcr\.io\/del-bench\/bench:1\.0 \(.*\) and its results\./);
  assert.is(await status(`/benchmarks/${s.benchmark.id}`), 404);
  assert.is((await t.request('GET', '/results', { query: { flavor_id: s.flavor.id, per_page: 1 } })).body.total, 0);
});

test('tags delete --cascade removes the tag from its results, which stay; flavors and sites delete with --cascade', async () => {
  const s = await scratch('del-rest', 2);
  ok(await box.run(['tags', 'delete', s.tag.name, '--cascade', '--yes'], admin));
  assert.is(await status(`/tags/${s.tag.id}`), 404);
  const results = (await t.request('GET', '/results', { query: { flavor_id: s.flavor.id } })).body;
  assert.is(results.total, 2, 'the results stay');
  assert.equal(
    results.items.map((r: any) => r.tags.length),
    [0, 0],
  );

  const site = await box.run(['sites', 'delete', s.site.name, '--yes'], admin);
  assert.is(site.code, 1);
  assert.match(site.stderr, /pass --cascade to delete its flavors and their results too/);
  ok(await box.run(['flavors', 'delete', `${s.site.name}/${s.flavor.name}`, '--cascade', '--yes'], admin));
  assert.is(await status(`/flavors/${s.flavor.id}`), 404);
  ok(await box.run(['sites', 'delete', s.site.id, '--yes'], admin));
  assert.is(await status(`/sites/${s.site.id}`), 404);
});

test('delete: a user who is not an admin gets exit 4; an unknown name exit 1', async () => {
  const [notAdmin, unknown] = await Promise.all([
    box.run(['tags', 'delete', c.tag.name, '--yes'], asUser),
    box.run(['sites', 'delete', 'No such site', '--yes'], admin),
  ]);
  assert.is(notAdmin.code, 4, notAdmin.stderr);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /^Error: No site named 'No such site'/m);
  assert.is(await status(`/tags/${c.tag.id}`), 200);
});

test('delete on a terminal asks first: "n" deletes nothing, "y" deletes', async () => {
  const s = await scratch('del-ask', 0);
  const options = { ref: s.benchmark.name, server: t.url, token: c.admin };
  const no = terminal('n\n');
  const declined = await runVerb(benchmarks, 'delete', options, no).then(
    () => undefined,
    (err: Error) => err,
  );
  assert.match(String(declined?.message), /^Nothing deleted\.$/);
  assert.match(no.err(), /Delete benchmark ghcr\.io\/del-ask\/bench:1\.0 \(.*\)\? This cannot be undone\. \[y\/N\] /);
  assert.is(await status(`/benchmarks/${s.benchmark.id}`), 200);
  const yes = terminal('y\n');
  await runVerb(benchmarks, 'delete', options, yes);
  assert.is(await status(`/benchmarks/${s.benchmark.id}`), 404);
});

test.run();
