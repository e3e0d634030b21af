/**
 * `benchmarks changes` against a real server: the table of change points (a sparkline per series on a
 * terminal), JSON, CSV and SVG, --since, and the CI gate --fail-on (exit 1 naming the changes, 0
 * otherwise), with clear errors for bad options.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, type Client } from '@benchmarks/sdk';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { run as changes, sinceOf, type Options } from '../src/commands/changes.ts';
import type { Io } from '../src/io.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';

const NAME = 'ghcr.io/cli-test/changes:1';
const DAY = 86_400_000;

let t: TestServer;
let box: Sandbox;
let sdk: Client;

test.before(async () => {
  t = await startTestServer({}, 'cli_changes');
  box = await sandbox();
  box.env.BENCHMARKS_SERVER = t.url;
  sdk = createClient({ baseUrl: t.url, token: await t.admin('changes-admin') });
  const schema = { type: 'object', properties: { seconds: { type: 'number', 'x-better': 'lower' } } };
  const benchmark_id = (
    await sdk.benchmarks.create({ container_image: 'ghcr.io/cli-test/changes', container_tag: '1', json_schema: schema })
  ).id;
  const site = await sdk.sites.create({ name: 'CESGA', address: 'x' });
  const slower = (await sdk.flavors.create(site.id, { name: 'hpc.slower' })).id;
  const faster = (await sdk.flavors.create(site.id, { name: 'hpc.faster' })).id;
  const steady = (await sdk.flavors.create(site.id, { name: 'hpc.steady' })).id;
  // 40 days ending yesterday; hpc.slower takes 20 % longer from 10 days ago, hpc.faster 20 % less from 30 days ago.
  const start = Date.now() - 41 * DAY;
  const at = (i: number) => new Date(start + i * DAY).toISOString();
  const noise = (i: number) => ((i * 37) % 11) / 100;
  await sdk.results.createMany(
    Array.from({ length: 40 }, (_, i) => [
      { benchmark_id, flavor_id: slower, execution_datetime: at(i), json: { seconds: (i < 30 ? 10 : 12) + noise(i) } },
      { benchmark_id, flavor_id: faster, execution_datetime: at(i), json: { seconds: (i < 10 ? 10 : 8) + noise(i) } },
      { benchmark_id, flavor_id: steady, execution_datetime: at(i), json: { seconds: 20 + noise(i) } },
    ]).flat(),
  );
});
test.after(async () => {
  await sdk?.close();
  await box?.cleanup();
  await t?.close();
});

const base = ['changes', '--benchmark', NAME, '--metric', 'seconds'];

test('changes: piped, a table of each group and its change points, plain ASCII', async () => {
  const res = await box.run(base);
  assert.is(res.code, 0, res.stderr);
  assert.is(res.stderr, '');
  assert.ok(/^[\x20-\x7e\n]*$/.test(res.stdout), 'ASCII only, no colour');
  const out = lines(res.stdout);
  assert.is(out[0], `${NAME}: json.seconds over time (lower is better), by flavor`);
  assert.match(out[1]!, /^CESGA \/ hpc\.faster \(40\) {2}1 change$/);
  assert.match(out[2]!, /^ {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}improvement {4}-19\.\d+% {2}10\.0\d* -> 8\.0\d* {2}p=/);
  assert.match(out[3]!, /^CESGA \/ hpc\.slower \(40\) {2}1 change$/);
  assert.match(out[4]!, /regression {4}\+19\.\d+% {2}10\.0\d* -> 12\.0\d* {2}p=/);
  assert.is(out[5], 'CESGA / hpc.steady (40)  no change');
  assert.is(out[6], '120 results matched, 0 without a number at json.seconds.');
});

test('changes: on a terminal, a sparkline of each series and colour', async () => {
  let stdout = '';
  const io: Io = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: () => true },
    stdin: process.stdin,
    isTTY: { stdin: false, stdout: true, stderr: true },
    env: { ...box.env },
    columns: 100,
  };
  await changes({ benchmark: NAME, metric: 'seconds' } as Options, io);
  const shown = stdout.replaceAll('\u001b', '<ESC>');
  // hpc.slower: low for three quarters of its span, then high; hpc.steady flat.
  assert.match(shown, /hpc\.slower<ESC>\[0m \(40\) {2}▁{17,18}█{6,7} {2}1 change/);
  assert.match(shown, /hpc\.steady<ESC>\[0m \(40\) {2}▅{24} {2}no change/);
  assert.match(shown, /<ESC>\[31mregression <ESC>\[0m/, 'a regression in red');
  assert.match(shown, /<ESC>\[32mimprovement<ESC>\[0m/, 'an improvement in green');
});

test('changes --fail-on: exit 1 naming the regression; 0 when none is reported since --since', async () => {
  const failed = await box.run([...base, '--fail-on', 'regression', '-o', 'json']);
  assert.is(failed.code, 1);
  assert.match(
    failed.stderr,
    /^Error: 1 regression found:\nCESGA \/ hpc\.slower: regression at \d{4}-\d\d-\d\dT[\d:.]+ \(\+\d+(\.\d+)?%, p=[\d.e-]+, result [0-9a-f-]{36}\)\n$/,
  );
  assert.is(JSON.parse(failed.stdout).groups.length, 3, 'the answer is written first');
  const any = await box.run([...base, '--fail-on', 'any', '-o', 'csv']);
  assert.is(any.code, 1);
  assert.match(any.stderr, /^Error: 2 changes found:/);
  // hpc.slower changed 10 days ago: since 5 days ago, nothing is reported, and the gate passes.
  const recent = await box.run([...base, '--since', '5d', '--fail-on', 'any']);
  assert.is(recent.code, 0, recent.stderr);
  assert.match(recent.stdout, /hpc\.slower \(40\) {2}no change/);
  const since = await box.run([...base, '--since', new Date(Date.now() - 20 * DAY).toISOString().slice(0, 10), '--fail-on', 'regression']);
  assert.is(since.code, 1, 'the regression of 10 days ago is after 20 days ago');
});

test('changes -o csv and svg: the server’s CSV and the SDK’s chart', async () => {
  const csv = await box.run([...base, '-o', 'csv']);
  assert.is(csv.code, 0, csv.stderr);
  const rows = csv.stdout.split('\r\n');
  assert.is(rows[0], 'site_name,flavor_name,at,result_id,index,before_mean,after_mean,magnitude,pvalue,direction');
  assert.is(rows.length, 4);
  const svg = await box.run([...base, '-o', 'svg']);
  assert.is(svg.code, 0, svg.stderr);
  assert.ok(svg.stdout.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.match(svg.stdout, `${NAME}: json.seconds over time (lower is better)`);
  assert.match(svg.stdout, '<g class="change regression">');
});

test('changes: bad options exit 2 with one line', async () => {
  const bad = [
    [...base, '--since', 'yesterday'],
    [...base, '--fail-on', 'everything'],
    [...base, '--max-pvalue', '0.5'],
    [...base, '--min-size', '1'],
  ];
  const runs = await Promise.all(bad.map((args) => box.run(args)));
  for (const r of runs) assert.is(r.code, 2, r.stderr);
  assert.match(runs[0]!.stderr, /--since must be a number of days \(30d\), a date/);
  assert.match(runs[1]!.stderr, /argument 'everything' is invalid/);
  assert.match(runs[2]!.stderr, /--max-pvalue must be a number above 0 below 0\.5/);
  assert.match(runs[3]!.stderr, /--min-size must be 2 or more/);
  assert.is(sinceOf('30d', Date.UTC(2026, 0, 31)), '2026-01-01T00:00:00.000Z');
  assert.is(sinceOf('2026-05-01'), '2026-05-01');
});

test.run();
