/**
 * `benchmarks watch create|list|delete`, `changes feed`, `changes acknowledge|dismiss|reopen` and
 * `--summary` of `changes` and `compare --baseline` against a real server: the gate passes once its
 * regressions are triaged and fails again when one is reopened; the Markdown report is appended to
 * a file or to $GITHUB_STEP_SUMMARY, its names escaped.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, type Client } from '@benchmarks/sdk';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { type CliResult, sandbox, type Sandbox } from './support/cli.ts';

const NAME = 'ghcr.io/cli-test/alerts:1';
const DAY = 86_400_000;
/** Flavor names that are Markdown or HTML: the report must show them as text. */
const PIPE = '|';
const IMG = '<img src=x onerror=alert(1)>';

let t: TestServer;
let box: Sandbox;
let sdk: Client;
let benchmarkId: string;
let steady: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_alerts');
  box = await sandbox();
  box.env.BENCHMARKS_SERVER = t.url;
  box.env.BENCHMARKS_TOKEN = await t.user('watcher');
  sdk = createClient({ baseUrl: t.url, token: await t.admin('alerts-admin') });
  const schema = { type: 'object', properties: { seconds: { type: 'number', 'x-better': 'lower' } } };
  benchmarkId = (await sdk.benchmarks.create({ container_image: 'ghcr.io/cli-test/alerts', container_tag: '1', json_schema: schema })).id;
  const site = await sdk.sites.create({ name: 'CESGA', address: 'x' });
  const flavor = async (name: string) => (await sdk.flavors.create(site.id, { name })).id;
  const [slower, pipe, img, faster] = [await flavor('hpc.slower'), await flavor(PIPE), await flavor(IMG), await flavor('hpc.faster')];
  steady = await flavor('hpc.steady');
  // 40 days: three flavors 20 % slower from day 30 (regressions, one of them slower than hpc.steady), one faster from day 10.
  const start = Date.now() - 41 * DAY;
  const at = (i: number) => new Date(start + i * DAY).toISOString();
  const noise = (i: number) => ((i * 37) % 11) / 100;
  const series: [string, (i: number) => number][] = [
    [slower, (i) => (i < 30 ? 10 : 12)],
    [pipe, (i) => (i < 30 ? 30 : 36)],
    [img, (i) => (i < 30 ? 10 : 12)],
    [faster, (i) => (i < 10 ? 10 : 8)],
    [steady, () => 20],
  ];
  await sdk.results.createMany(
    Array.from({ length: 40 }, (_, i) =>
      series.map(([flavor_id, seconds]) => ({
        benchmark_id: benchmarkId,
        flavor_id,
        execution_datetime: at(i),
        json: { seconds: seconds(i) + noise(i) },
      })),
    ).flat(),
  );
});
test.after(async () => {
  await sdk?.close();
  await box?.cleanup();
  await t?.close();
});

const ok = (res: CliResult) => {
  assert.is(res.code, 0, res.stderr);
  return res;
};
const json = (res: CliResult) => JSON.parse(ok(res).stdout);
const series = ['--benchmark', NAME, '--metric', 'seconds'];
const gate = ['changes', ...series, '--fail-on', 'regression', '-o', 'json'];

/** The table rows of a report: each line starting with `|`, split on the pipes that are not escaped. */
const cells = (markdown: string) =>
  markdown
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) =>
      l
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim()),
    );

test('watch create, list and delete', async () => {
  const created = await box.run(['watch', 'create', ...series, '--stale-after', '7d', '-o', 'json']);
  const watch = json(created);
  assert.match(created.stderr, new RegExp(`^Created watch ${watch.id}`));
  assert.equal([watch.benchmark_id, watch.metric, watch.group_by, watch.stale_after], [benchmarkId, 'json.seconds', 'flavor', '1w']);
  assert.equal(
    json(await box.run(['watch', 'list', '--benchmark', NAME, '-o', 'json'])).map((w: { id: string }) => w.id),
    [watch.id],
  );
  const table = ok(await box.run(['watch', 'list', '-o', 'table']));
  assert.match(table.stdout, /^ID\s+BENCHMARK_ID\s+METRIC/);
  assert.ok(table.stdout.includes(watch.id));
  const missing = await box.run(['watch', 'create', '--benchmark', NAME]);
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /required option '--metric <path>' not specified/);
  const tooSmall = await box.run(['watch', 'create', ...series, '--min-size', '1']);
  assert.is(tooSmall.code, 2);
  assert.match(tooSmall.stderr, /--min-size must be 2 or more/);
  const badDuration = await box.run(['watch', 'create', ...series, '--stale-after', 'soon']);
  assert.is(badDuration.code, 1);
  assert.match(badDuration.stderr, /stale_after/);
  const unconfirmed = await box.run(['watch', 'delete', watch.id]);
  assert.is(unconfirmed.code, 2);
  assert.match(unconfirmed.stderr, /--yes/);
  const others = await box.run(['watch', 'delete', watch.id, '--yes'], { env: { BENCHMARKS_TOKEN: await t.user('stranger') } });
  assert.is(others.code, 4);
  assert.match(others.stderr, /Not allowed: Only the owner of the watch/);
  const deleted = ok(await box.run(['watch', 'delete', watch.id, '--yes']));
  assert.match(deleted.stderr, new RegExp(`Deleted watch ${watch.id}`));
  assert.equal(json(await box.run(['watch', 'list', '-o', 'json'])), []);
});

test('changes feed lists the records; acknowledged and dismissed the gate passes, reopened it fails again', async () => {
  const first = await box.run(gate);
  assert.is(first.code, 1);
  assert.match(first.stderr, /^Created watch [0-9a-f-]{36} for this series/, first.stderr);
  assert.match(first.stderr, /Error: 3 regressions found:/);
  // The answer marks the points with their records, the watch being made before it was asked.
  const marked = JSON.parse(first.stdout).groups.flatMap((g: any) => g.changes.map((c: any) => c.record?.state));
  assert.equal(marked, ['open', 'open', 'open', 'open']);
  const open = json(await box.run(['changes', 'feed', '-o', 'json']));
  assert.is(open.length, 4, 'three regressions and one improvement');
  const regressions = json(
    await box.run(['changes', 'feed', '--direction', 'regression', '--benchmark', NAME, '--metric', 'seconds', '-o', 'json']),
  );
  assert.equal(regressions.map((r: any) => r.flavor.name).sort(), [IMG, PIPE, 'hpc.slower'].sort());
  const paged = ok(await box.run(['changes', 'feed', '--per-page', '1', '-o', 'table']));
  assert.match(paged.stdout, /^ID\s+FIRST_SEEN\s+STATE\s+DIRECTION/);
  assert.match(paged.stderr, /Showing 1 of 4 .*--page 2 or --all/);
  assert.is(json(await box.run(['changes', 'feed', '--per-page', '1', '--all', '-o', 'json'])).length, 4, 'every page');
  assert.equal(json(await box.run(['changes', 'feed', '--since', '2999-01-01', '-o', 'json'])), []);

  const [a, b, c] = regressions as { id: string }[];
  const acknowledged = await box.run(['changes', 'acknowledge', a!.id, '--note', 'new kernel', '-o', 'json']);
  assert.equal([json(acknowledged).state, json(acknowledged).note], ['acknowledged', 'new kernel']);
  assert.match(acknowledged.stderr, new RegExp(`^Acknowledged change ${a!.id}\\.`));
  ok(await box.run(['changes', 'acknowledge', b!.id]));
  assert.is(json(await box.run(['changes', 'dismiss', c!.id, '--note', 'noisy neighbour', '-o', 'json'])).state, 'dismissed');
  const passing = ok(await box.run(gate));
  assert.is(passing.stderr, '', 'nothing to say');
  const states = JSON.parse(passing.stdout).groups.flatMap((g: any) => g.changes.map((x: any) => x.record.state));
  assert.equal(states.sort(), ['acknowledged', 'acknowledged', 'dismissed', 'open'].sort());
  assert.is(json(await box.run(['changes', 'feed', '--state', 'acknowledged', '-o', 'json'])).length, 2);

  assert.is(json(await box.run(['changes', 'reopen', c!.id, '-o', 'json'])).state, 'open');
  const failing = await box.run(gate);
  assert.is(failing.code, 1);
  assert.match(failing.stderr, new RegExp(`Error: 1 regression found:\\n.*change ${c!.id}`));
  ok(await box.run(['changes', 'dismiss', c!.id]));
  ok(await box.run(gate));

  const unknown = await box.run(['changes', 'dismiss', '00000000-0000-4000-8000-000000000000']);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /Not found/);
  const others = await box.run(['changes', 'acknowledge', a!.id], { env: { BENCHMARKS_TOKEN: await t.user('stranger2') } });
  assert.is(others.code, 4);
});

test('changes --summary FILE appends the verdict, the table and the link, names escaped; --fail-on keeps its exit code', async () => {
  const file = join(box.dir, 'summary.md');
  const open = await sdk.changes.list({ direction: 'regression', state: 'all' }).toArray({ max: 10 });
  const pipe = open.find((r) => r.flavor?.name === PIPE)!;
  await sdk.changes.reopen(pipe.id);
  const failed = await box.run([...gate, '--summary', file]);
  assert.is(failed.code, 1, 'the gate fails as without --summary');
  assert.match(failed.stderr, /1 regression found/);
  const report = await readFile(file, 'utf8');
  const lines = report.split('\n');
  assert.is(lines[0], '❌ **1 open regression** in `json.seconds` of ghcr\\.io/cli\\-test/alerts\\:1 (lower is better)');
  const rows = cells(report);
  assert.equal(rows[0], ['Site / flavor', 'Points', 'Change', 'At (UTC)', 'Δ mean', 'Before → after', 'p', 'Record']);
  assert.is(rows.length, 2 + 5, 'header, alignment, one row per change point or group without one');
  assert.ok(
    rows.every((r) => r.length === 8),
    'no name adds a column',
  );
  const byName = new Map(rows.slice(2).map((r) => [r[0], r]));
  assert.equal(byName.get('CESGA / \\|')!.slice(2, 3), ['🔴 regression']);
  assert.is(byName.get('CESGA / \\|')![7], 'open');
  const img = open.find((r) => r.flavor?.name === IMG)!;
  assert.is(byName.get('CESGA / &lt;img src=x onerror=alert\\(1\\)&gt;')![7], img.state, 'acknowledged or dismissed before');
  assert.equal(byName.get('CESGA / hpc\\.steady')!.slice(1, 3), ['40', 'no change']);
  assert.not.match(report, /<img/);
  const link = /^\[Open in the explorer\]\((\S+)\)$/m.exec(report)![1]!;
  const url = new URL(link);
  assert.is(url.origin + url.pathname, `${new URL(t.url).origin}/explore/series`);
  assert.equal([url.searchParams.get('benchmark_id'), url.searchParams.get('metric')], [benchmarkId, 'json.seconds']);

  await sdk.changes.dismiss(pipe.id);
  ok(await box.run([...gate, '--summary', file]));
  const twice = await readFile(file, 'utf8');
  assert.ok(twice.startsWith(report), 'appended, the first report kept');
  assert.match(twice.slice(report.length), /^✅ \*\*No open regression\*\* in `json\.seconds`/);
});

test('--summary alone writes to $GITHUB_STEP_SUMMARY; unset, a usage error before any request', async () => {
  const file = join(box.dir, 'step-summary.md');
  ok(await box.run(['changes', ...series, '--summary'], { env: { GITHUB_STEP_SUMMARY: file } }));
  const report = await readFile(file, 'utf8');
  assert.match(report.split('\n')[0]!, /^⚠️ \*\*4 change points\*\* \(3 regressions, 1 improvement\) in `json\.seconds`/);
  assert.match(report, /\n\| Site \/ flavor \| Points \|/);
  assert.match(report, /\n\[Open in the explorer\]\(http:\/\/[^)]+\/explore\/series\?benchmark_id=/);
  const unset = await box.run(['changes', ...series, '--summary', '--server', 'http://127.0.0.1:9']);
  assert.is(unset.code, 2);
  assert.match(unset.stderr, /--summary without a file writes to \$GITHUB_STEP_SUMMARY, which is not set/);
});

test('compare --baseline X --summary FILE: the verdict against the baseline, the table, the link to the ranking', async () => {
  const file = join(box.dir, 'compare.md');
  const res = ok(await box.run(['compare', ...series, '--baseline', 'CESGA/hpc.steady', '--summary', file, '-o', 'json']));
  assert.is(JSON.parse(res.stdout).baseline, steady, 'stdout as without --summary');
  const report = await readFile(file, 'utf8');
  assert.is(
    report.split('\n')[0],
    '❌ **1 flavor worse** than the baseline CESGA / hpc\\.steady in `json.seconds` of ghcr\\.io/cli\\-test/alerts\\:1 (lower is better); 3 better',
  );
  const rows = cells(report);
  assert.ok(
    rows.every((r) => r.length === 8),
    'no name adds a column',
  );
  const verdicts = new Map(rows.slice(2).map((r) => [r[1], r[7]]));
  assert.is(verdicts.get('CESGA / \\|'), 'worse');
  assert.is(verdicts.get('CESGA / hpc\\.steady'), 'baseline');
  assert.is(verdicts.get('CESGA / &lt;img src=x onerror=alert\\(1\\)&gt;'), 'better');
  assert.not.match(report, /<img/);
  const url = new URL(/^\[Open in the explorer\]\((\S+)\)$/m.exec(report)![1]!);
  assert.is(url.pathname, '/explore/rank');
  assert.equal(
    ['benchmark_id', 'metric', 'baseline'].map((k) => url.searchParams.get(k)),
    [benchmarkId, 'json.seconds', steady],
  );
  const noBaseline = await box.run(['compare', ...series, '--summary', file]);
  assert.is(noBaseline.code, 2);
  assert.match(noBaseline.stderr, /--summary reports against a baseline: add --baseline/);
});

test.run();
