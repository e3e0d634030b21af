/**
 * Every administrator review step from the command line: submissions created with the CLI by a
 * user, listed and approved or rejected by an admin; claims filed, upheld and rejected; result
 * tags replaced by their uploader; users listed, searched and removed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, seedResult, type Catalogue } from './support/seed.ts';

let t: TestServer;
let box: Sandbox;
let c: Catalogue;
let user: string;
let admin: { env: Record<string, string> };
let asUser: { env: Record<string, string> };

test.before(async () => {
  t = await startTestServer({}, 'cli_review');
  box = await sandbox();
  c = await seedCatalogue(t, 'review');
  user = await t.user('submitter');
  box.env.BENCHMARKS_SERVER = t.url;
  admin = { env: { BENCHMARKS_TOKEN: c.admin } };
  asUser = { env: { BENCHMARKS_TOKEN: user } };
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

const json = (res: { code: number | null; stdout: string; stderr: string }) => {
  assert.is(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
};

test('a user submits with the CLI; the admin lists, approves and rejects each kind with `review`', async () => {
  const benchmark = json(
    await box.run(
      ['benchmarks', 'create', 'ghcr.io/review/new:2.1', '--schema', '{"type":"object"}', '--url', 'https://example.org/new', '-o', 'json'],
      asUser,
    ),
  );
  const site = json(await box.run(['sites', 'create', 'IFCA', '--address', 'Santander, Spain', '-o', 'json'], asUser));
  const [flavor, tag] = await Promise.all([
    box.run(['flavors', 'create', 'IFCA', 'gpu.xl', '--description', '1 GPU', '-o', 'json'], asUser).then(json),
    box.run(['tags', 'create', 'typo-tag', '-o', 'json'], asUser).then(json),
  ]);
  assert.equal([benchmark.status, site.status, flavor.status, tag.status], ['on_review', 'on_review', 'on_review', 'on_review']);

  const pending = json(await box.run(['review', 'list', '-o', 'json'], admin));
  assert.equal(
    pending.map((s: any) => `${s.resource_type} ${s.resource_id}`).sort(),
    [`benchmark ${benchmark.id}`, `flavor ${flavor.id}`, `site ${site.id}`, `tag ${tag.id}`].sort(),
  );
  assert.equal(json(await box.run(['review', 'list', '--type', 'site', '-o', 'json'], admin)).length, 1);
  assert.equal(Object.keys(pending[0]).sort(), ['resource_id', 'resource_type', 'upload_datetime', 'uploader'], 'JSON: the API item');
  const table = await box.run(['review', 'list', '-o', 'table', '--sort', '+resource_type'], admin);
  assert.is(table.code, 0, table.stderr);
  const rows = table.stdout.trim().split('\n');
  assert.match(rows[0]!, /^RESOURCE_TYPE +RESOURCE_ID +NAME +UPLOADER +UPLOAD_DATETIME$/);
  const expected = [
    ['benchmark', benchmark.id, benchmark.name],
    ['flavor', flavor.id, 'gpu.xl'],
    ['site', site.id, 'IFCA'],
    ['tag', tag.id, 'typo-tag'],
  ];
  assert.equal(
    rows.slice(1).map((r) => r.split(/ {2,}/)),
    expected.map((cells) => [
      ...cells,
      `submitter @ ${t.issuer.issuer}`,
      pending.find((s: any) => s.resource_id === cells[1]).upload_datetime,
    ]),
    'kind, id, name, uploader, upload time',
  );

  const approved = await box.run(['review', 'approve', 'site', site.id], admin);
  assert.is(approved.code, 0, approved.stderr);
  const [more, rejected] = await Promise.all([
    box
      .run(['review', 'approve', 'benchmark', benchmark.id], admin)
      .then(async (r) => [r, await box.run(['review', 'approve', 'flavor', flavor.id], admin)]),
    box.run(['review', 'reject', 'tag', tag.id], admin),
  ]);
  for (const r of [...more, rejected]) assert.is(r.code, 0, r.stderr);
  assert.match(rejected.stderr, /Rejected tag/);

  assert.is((await t.request('GET', `/benchmarks/${benchmark.id}`)).body.status, 'approved');
  assert.is((await t.request('GET', `/sites/${site.id}`)).body.status, 'approved');
  assert.is((await t.request('GET', `/flavors/${flavor.id}`)).body.status, 'approved');
  assert.is((await t.request('GET', `/tags/${tag.id}`)).status, 404, 'a rejected item is deleted');

  const [empty, again, bad] = await Promise.all([
    box.run(['review', 'list', '-o', 'table'], admin),
    box.run(['review', 'approve', 'site', site.id], admin),
    box.run(['review', 'approve', 'planet', site.id], admin),
  ]);
  assert.is(empty.code, 0);
  assert.is(empty.stdout, '');
  assert.match(empty.stderr, /No results\./);
  assert.is(again.code, 1);
  assert.match(again.stderr, /already approved.*\[ALREADY_APPROVED\]/);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /'planet' is invalid for argument 'kind'. Allowed choices are benchmark, site, flavor, tag/);
});

test('review approve and reject by name, as docs/cli.md promises wherever an id works: image:tag, site, site/flavor, tag', async () => {
  const [benchmark, site] = await Promise.all([
    box.run(['benchmarks', 'create', 'ghcr.io/review/named:1.0', '-o', 'json'], asUser).then(json),
    box.run(['sites', 'create', 'Named Site', '--address', 'Oviedo, Spain', '-o', 'json'], asUser).then(json),
  ]);
  const [flavor, tag] = await Promise.all([
    box.run(['flavors', 'create', 'Named Site', 'cpu.named', '-o', 'json'], asUser).then(json),
    box.run(['tags', 'create', 'named-tag', '-o', 'json'], asUser).then(json),
  ]);
  const approved = await box.run(['review', 'approve', 'benchmark', 'ghcr.io/review/named:1.0'], admin);
  assert.is(approved.code, 0, approved.stderr);
  assert.match(approved.stderr, new RegExp(`^Approved benchmark ghcr\\.io/review/named:1\\.0 \\(${benchmark.id}\\)\\.$`, 'm'));
  const [sites, flavors, tags] = await Promise.all([
    box.run(['review', 'approve', 'site', 'Named Site'], admin),
    box.run(['review', 'approve', 'flavor', 'Named Site/cpu.named'], admin),
    box.run(['review', 'reject', 'tag', 'named-tag'], admin),
  ]);
  for (const r of [sites, flavors, tags]) assert.is(r.code, 0, r.stderr);
  assert.is((await t.request('GET', `/benchmarks/${benchmark.id}`)).body.status, 'approved');
  assert.is((await t.request('GET', `/sites/${site.id}`)).body.status, 'approved');
  assert.is((await t.request('GET', `/flavors/${flavor.id}`)).body.status, 'approved');
  assert.is((await t.request('GET', `/tags/${tag.id}`)).status, 404);

  const unknown = await box.run(['review', 'approve', 'benchmark', 'ghcr.io/review/none:9'], admin);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /^Error: No benchmark ghcr\.io\/review\/none:9: see `benchmarks benchmarks list`\.$/m);
});

test('claims: a user claims a result; the admin lists, inspects and upholds it; rejecting another restores the result', async () => {
  const first = await seedResult(t, user, c, { score: 1 });
  const second = await seedResult(t, user, c, { score: 2 });
  const claimant = { env: { BENCHMARKS_TOKEN: await t.user('claimant') } };
  const claim = json(await box.run(['results', 'claim', first.id, '--message', 'impossible score', '-o', 'json'], claimant));
  const other = json(await box.run(['results', 'claim', second.id, '-m', 'looks wrong', '-o', 'json'], claimant));
  assert.is((await t.request('GET', `/results/${first.id}`)).body.hidden, true);

  const listed = json(await box.run(['claims', 'list', '-o', 'json'], admin));
  assert.equal(listed.map((x: any) => x.id).sort(), [claim.id, other.id].sort());
  const shown = json(await box.run(['claims', 'get', claim.id, '-o', 'json'], admin));
  assert.equal([shown.resource_id, shown.message, shown.status], [first.id, 'impossible score', 'on_review']);

  const [upheld, rejected] = await Promise.all([
    box.run(['claims', 'approve', claim.id], admin),
    box.run(['claims', 'reject', other.id], admin),
  ]);
  assert.is(upheld.code, 0, upheld.stderr);
  assert.is(rejected.code, 0, rejected.stderr);
  assert.is((await t.request('GET', `/results/${first.id}`)).body.hidden, true, 'an upheld claim keeps the result hidden');
  assert.is((await t.request('GET', `/results/${second.id}`)).body.hidden, false, 'a rejected claim restores it');
  const upheldList = json(await box.run(['claims', 'list', '--status', 'approved', '-o', 'json'], admin));
  assert.equal(
    upheldList.map((x: any) => x.id),
    [claim.id],
  );
  const notAdmin = await box.run(['claims', 'list'], claimant);
  assert.is(notAdmin.code, 4);
});

test('results tags set: the uploader replaces and clears the tags; someone else gets exit 4', async () => {
  const result = await seedResult(t, user, c, { score: 3 });
  const set = json(await box.run(['results', 'tags', 'set', result.id, '--tag', c.tag.name, '-o', 'json'], asUser));
  assert.equal(
    set.tags.map((x: any) => x.id),
    [c.tag.id],
  );
  const cleared = json(await box.run(['results', 'tags', 'set', result.id, '--clear', '-o', 'json'], asUser));
  assert.equal(cleared.tags, []);
  const stranger = await box.run(['results', 'tags', 'set', result.id, '--tag', c.tag.name], {
    env: { BENCHMARKS_TOKEN: await t.user('stranger') },
  });
  assert.is(stranger.code, 4);
  assert.match(stranger.stderr, /^Error: Not allowed: /);
});

test('users list, search and remove (with --yes; without it and without a terminal: exit 2)', async () => {
  await t.user('leaving');
  const listed = json(await box.run(['users', 'list', '--sub', 'leaving', '-o', 'json'], admin));
  assert.equal(
    listed.map((u: any) => [u.sub, u.email, u.removed]),
    [['leaving', 'leaving@test.example', false]],
  );
  const found = json(await box.run(['users', 'search', 'leaving@test', '-o', 'json'], admin));
  assert.is(found.length, 1);

  const unconfirmed = await box.run(['users', 'remove', '--sub', 'leaving'], admin);
  assert.is(unconfirmed.code, 2);
  assert.match(unconfirmed.stderr, /pass --yes/);
  const removed = await box.run(['users', 'remove', '--sub', 'leaving', '--yes'], admin);
  assert.is(removed.code, 0, removed.stderr);
  const after = (await t.request('GET', '/users', { token: c.admin, query: { sub: 'leaving' } })).body.items[0];
  assert.equal([after.removed, after.email], [true, null]);
});

test.run();
