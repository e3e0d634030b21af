/**
 * Reading from the command line: every output format of a list, the filters of `results list`,
 * following pages, and the precedence of flag > environment > config file for --server, --output
 * and --profile.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { closedPort, lines, sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, seedResult, type Catalogue } from './support/seed.ts';

let t: TestServer;
let box: Sandbox;
let c: Catalogue;
let unreachable: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_query');
  box = await sandbox();
  c = await seedCatalogue(t, 'query');
  const more = { container_tag: '2.0', json_schema: {}, description: 'Second, with "quotes", and commas' };
  const res = await t.request('POST', '/benchmarks', { token: c.admin, body: { container_image: 'ghcr.io/query/bench', ...more } });
  if (res.status !== 201) throw new Error(res.text);
  for (let i = 0; i < 7; i++) {
    await seedResult(
      t,
      c.admin,
      c,
      { score: i * 10, machine: { cpu: { count: i + 1 } } },
      `2025-01-0${i + 1}T10:00:00Z`,
      i % 2 ? [c.tag.id] : [],
    );
  }
  unreachable = `http://127.0.0.1:${await closedPort()}`;
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

const writeConfig = async (config: unknown) => {
  await mkdir(dirname(box.configPath), { recursive: true });
  await writeFile(box.configPath, JSON.stringify(config));
};

test('benchmarks list: JSON when piped, a table with --output table, CSV with a header and RFC 4180 quoting', async () => {
  const [piped, table, csv] = await Promise.all([
    box.run(['benchmarks', 'list', '--server', t.url]),
    box.run(['benchmarks', 'list', '--server', t.url, '--output', 'table']),
    box.run(['benchmarks', 'list', '--server', t.url, '-o', 'csv']),
  ]);
  for (const res of [piped, table, csv]) assert.is(res.code, 0, res.stderr);
  const items = JSON.parse(piped.stdout);
  assert.equal(
    items.map((b: any) => b.name),
    ['ghcr.io/query/bench:1.0', 'ghcr.io/query/bench:2.0'],
  );
  assert.equal(items[0].json_schema.required, ['score'], 'JSON carries whole objects');

  const rows = lines(table.stdout);
  assert.match(rows[0], /^ID\s+NAME\s+STATUS\s+UPLOAD_DATETIME\s+DESCRIPTION\s+URL$/);
  assert.is(rows.length, 3);
  assert.match(rows[1], new RegExp(`^${c.benchmark.id}\\s+ghcr\\.io/query/bench:1\\.0\\s+approved\\s`));

  const records = csv.stdout.split('\r\n').filter(Boolean);
  assert.is(records[0], 'id,name,status,upload_datetime,description,url');
  assert.is(records.length, 3);
  assert.ok(records[2].includes(',"Second, with ""quotes"", and commas",'), records[2]);
  assert.is(piped.stderr, '', 'nothing but data when all went well');
});

test('BENCHMARKS_OUTPUT and the config file choose the format; the flag wins', async () => {
  await writeConfig({ output: 'csv' });
  const [fromConfig, fromEnv, fromFlag] = await Promise.all([
    box.run(['tags', 'list', '--server', t.url]),
    box.run(['tags', 'list', '--server', t.url], { env: { BENCHMARKS_OUTPUT: 'table' } }),
    box.run(['tags', 'list', '--server', t.url, '-o', 'json'], { env: { BENCHMARKS_OUTPUT: 'table' } }),
  ]);
  assert.match(fromConfig.stdout, /^id,name,status,description\r\n/);
  assert.match(fromEnv.stdout, /^ID\s+NAME\s+STATUS/);
  assert.is(JSON.parse(fromFlag.stdout)[0].name, c.tag.name);
  await writeConfig({});
});

test('results list: names for ids, repeatable --tag, --filter, --sort, date bounds, pages and --all', async () => {
  const base = ['results', 'list', '--server', t.url, '-o', 'json'];
  const [filtered, tagged, dated, page, all, none] = await Promise.all([
    box.run([
      ...base,
      '--benchmark',
      c.benchmark.name,
      '--flavor',
      `${c.site.name}/${c.flavor.name}`,
      '--filter',
      'machine.cpu.count >= 3',
      '--filter',
      'score < 60',
      '--sort',
      '-json.score',
    ]),
    box.run([...base, '--tag', c.tag.name, '--site', c.site.name]),
    box.run([...base, '--executed-after', '2025-01-03', '--executed-before', '2025-01-05T00:00:00Z', '--sort', 'execution_datetime']),
    box.run([...base, '--per-page', '3', '--page', '2', '--sort', '+execution_datetime']),
    box.run([...base, '--per-page', '2', '--all']),
    box.run([...base, '--filter', 'score > 1000']),
  ]);
  for (const res of [filtered, tagged, dated, page, all, none]) assert.is(res.code, 0, res.stderr);
  assert.equal(
    JSON.parse(filtered.stdout).map((r: any) => r.json.score),
    [50, 40, 30, 20],
  );
  assert.equal(
    JSON.parse(tagged.stdout)
      .map((r: any) => r.json.score)
      .sort(),
    [10, 30, 50],
  );
  assert.equal(
    JSON.parse(dated.stdout).map((r: any) => r.json.score),
    [20, 30],
  );
  assert.equal(
    JSON.parse(page.stdout).map((r: any) => r.json.score),
    [30, 40, 50],
  );
  assert.match(page.stderr, /Showing 3 of 7 \(page 2 of 3\): add --page 3 or --all for more\./);
  assert.is(JSON.parse(all.stdout).length, 7, '--all follows every page');
  assert.is(all.stderr, '');
  assert.equal(JSON.parse(none.stdout), [], 'no results is a success');
});

test("results list: a path the benchmark's schema does not describe is one warning line on stderr; stdout keeps the data", async () => {
  const schema = {
    type: 'object',
    properties: { machine: { type: 'object', properties: { cpu: { properties: { count: { type: 'integer' } } } } } },
  };
  const res = await t.request('POST', '/benchmarks', {
    token: c.admin,
    body: { container_image: 'ghcr.io/query/described', container_tag: '1', json_schema: schema },
  });
  assert.is(res.status, 201, res.text);
  for (const count of [2, 4, 8]) {
    const up = await t.request('POST', '/results', {
      token: c.admin,
      body: { machine: { cpu: { count } } },
      query: { benchmark_id: res.body.id, flavor_id: c.flavor.id, execution_datetime: `2025-02-0${count}T10:00:00Z` },
    });
    assert.is(up.status, 201, up.text);
  }
  const base = ['results', 'list', '--server', t.url, '--benchmark', 'ghcr.io/query/described:1'];
  const [typo, table, every, quiet, fine] = await Promise.all([
    box.run([...base, '-o', 'json', '--filter', 'json.machine.cpu.cont >= 4']),
    box.run([...base, '-o', 'table', '--filter', 'machine.cpu.cont >= 4']),
    box.run([...base, '-o', 'json', '--sort', '-json.machine.cpu.cont', '--per-page', '1', '--all']),
    box.run([...base, '-o', 'json', '--filter', 'machine.cpu.cont >= 4', '--quiet']),
    box.run([...base, '-o', 'json', '--filter', 'json.machine.cpu.count >= 4', '--sort', '-json.machine.cpu.count']),
  ]);
  const warning = "warning: json.machine.cpu.cont is not described by the benchmark's schema; did you mean json.machine.cpu.count?\n";
  for (const run of [typo, table, every, quiet, fine]) assert.is(run.code, 0, run.stderr);
  assert.equal(JSON.parse(typo.stdout), [], 'still answered: no result has that path');
  assert.is(typo.stderr, warning);
  assert.is(table.stdout, '');
  assert.is(table.stderr, `${warning}No results.\n`);
  assert.is(JSON.parse(every.stdout).length, 3, 'every page');
  assert.is(every.stderr, warning, 'once, though every page repeats it');
  assert.is(quiet.stderr, warning, 'warnings are not silenced by --quiet');
  assert.equal(
    JSON.parse(fine.stdout).map((r: any) => r.json.machine.cpu.count),
    [8, 4],
    'json.<path> in --filter, as in --sort',
  );
  assert.is(fine.stderr, '');
});

test('--server: config file < BENCHMARKS_SERVER < --server; --profile and BENCHMARKS_PROFILE pick a profile', async () => {
  const list = ['tags', 'list', '-o', 'json'];
  await writeConfig({ server: t.url, profiles: { down: { server: unreachable }, up: { server: `${t.url}/api/v1` } } });
  const [config, envWins, flagWins, profileFlag, profileEnv, profileUp] = await Promise.all([
    box.run(list),
    box.run(list, { env: { BENCHMARKS_SERVER: unreachable } }),
    box.run([...list, '--server', t.api], { env: { BENCHMARKS_SERVER: unreachable } }),
    box.run([...list, '--profile', 'down']),
    box.run(list, { env: { BENCHMARKS_PROFILE: 'down' } }),
    box.run([...list, '--profile', 'up'], { env: { BENCHMARKS_PROFILE: 'down' } }),
  ]);
  assert.is(config.code, 0, config.stderr);
  assert.is(envWins.code, 1, 'the environment wins over the config file');
  assert.match(envWins.stderr, new RegExp(`Cannot reach ${unreachable}`));
  assert.is(flagWins.code, 0, flagWins.stderr);
  assert.is(profileFlag.code, 1);
  assert.is(profileEnv.code, 1);
  assert.is(profileUp.code, 0, 'the flag wins over BENCHMARKS_PROFILE; an /api/v1 URL works too');

  await writeConfig({ profile: 'down', profiles: { down: { server: unreachable }, up: { server: t.url } } });
  const [defaultProfile, other] = await Promise.all([box.run(list), box.run([...list, '-p', 'up'])]);
  assert.is(defaultProfile.code, 1, 'the "profile" key picks the default profile');
  assert.is(other.code, 0);
  await writeConfig({});
});

test.run();
