/**
 * `benchmarks compare` against a real server: the ranked table and its chart (plain ASCII when
 * piped, Unicode and colour on a terminal, scaled to the width), JSON, CSV and SVG (the same as the
 * server's), --out, the result filters and the ranking options, and clear errors for bad options.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, type Client, type CompareQuery } from '@benchmarks/sdk';
import { renderCompareSvg } from '@benchmarks/sdk/chart';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { run as compare, type Options } from '../src/commands/compare.ts';
import type { Io } from '../src/io.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';

const NAME = 'ghcr.io/cli-test/compare:1';

let t: TestServer;
let box: Sandbox;
let sdk: Client;
let benchmark_id: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_compare');
  box = await sandbox();
  box.env.BENCHMARKS_SERVER = t.url;
  sdk = createClient({ baseUrl: t.url, token: await t.admin('compare-admin') });
  const schema = { type: 'object', properties: { seconds: { type: 'number', 'x-better': 'lower' }, cores: { type: 'integer' } } };
  benchmark_id = (await sdk.benchmarks.create({ container_image: 'ghcr.io/cli-test/compare', container_tag: '1', json_schema: schema })).id;
  const cesga = await sdk.sites.create({ name: 'CESGA', address: 'x' });
  const ifca = await sdk.sites.create({ name: 'IFCA', address: 'y' });
  const fast = (await sdk.flavors.create(cesga.id, { name: 'hpc.fast', price_per_hour: 0.5, currency: 'EUR' })).id;
  const slow = (await sdk.flavors.create(cesga.id, { name: 'hpc.slow' })).id;
  const tiny = (await sdk.flavors.create(ifca.id, { name: 'cpu.tiny', price_per_hour: 0.1, currency: 'EUR' })).id;
  const at = (day: number) => `2025-03-0${day}T10:00:00Z`;
  await sdk.results.createMany(
    [1, 2, 3, 4, 5, 6, 7, 8].flatMap((i) => [
      { benchmark_id, flavor_id: fast, execution_datetime: at(i), json: { seconds: 10 + i * 1.37, cores: 8 } },
      { benchmark_id, flavor_id: slow, execution_datetime: at(i), json: { seconds: 100 + i * 2.1, cores: 4 } },
      ...(i < 3 ? [{ benchmark_id, flavor_id: tiny, execution_datetime: at(i), json: { seconds: 50 + i, cores: 1 } }] : []),
    ]),
  );
});
test.after(async () => {
  await sdk?.close();
  await box?.cleanup();
  await t?.close();
});

const base = ['compare', '--benchmark', NAME, '--metric', 'seconds'];
const query = (): CompareQuery => ({ benchmark_id, metric: 'json.seconds' });

test('compare: piped, the default is the ranked table with its chart, in plain ASCII at 80 columns; unranked groups marked', async () => {
  const res = await box.run(base);
  assert.is(res.code, 0, res.stderr);
  assert.is(res.stderr, '');
  const out = lines(res.stdout);
  assert.ok(/^[\x20-\x7e\n]*$/.test(res.stdout), 'ASCII only, no colour');
  assert.ok(Math.max(...out.map((l) => l.length)) <= 80, 'fits 80 columns');
  assert.is(out[0], `${NAME}: json.seconds (lower is better), by flavor`);
  // At 80 columns, p5-p95 (drawn by the chart) and the interval per price are left out of the table.
  assert.match(out[1]!, /^RANK {2}SITE \/ FLAVOR \(N\) +MEDIAN {2}MEDIAN 95% CI +PRICE {6}MEDIAN x PRICE$/);
  assert.match(out[2]!, /^ {3}1 {2}CESGA \/ hpc\.fast \(8\) +16\.16 {2}\[11\.37, 20\.96\] +0\.5 EUR\/h +8\.082$/);
  assert.match(out[3]!, /^ {3}2 {2}CESGA \/ hpc\.slow \(8\) +109\.5 {2}\[102\.1, 116\.8\]$/);
  assert.match(out[4]!, /^ {3}- {2}IFCA \/ cpu\.tiny \(2\) +51\.5 {2}\[51, 52\] +0\.1 EUR\/h +5\.15$/);
  // The chart: each row's interval bar and median mark, in ranking order, on one scale.
  const chart = out.slice(5, 8);
  assert.match(chart[0]!, /^1 {2}CESGA \/ hpc\.fast \(8\) {2}\[=*\|=*\]$/);
  assert.match(chart[1]!, /^2 {2}CESGA \/ hpc\.slow \(8\) {2} +\[=*\|=*\]$/);
  assert.match(chart[2]!, /^- {2}IFCA \/ cpu\.tiny \(2\) {2} +\|=?$/);
  assert.ok(chart[0]!.indexOf('|') < chart[2]!.indexOf('|') && chart[2]!.indexOf('|') < chart[1]!.indexOf('|'), 'medians on one scale');
  assert.match(out[8]!, /^ +-+\+[-+]*$/, 'the axis');
  assert.match(out[9]!, /^ +20 +40 +60 +80 +100$/, 'its values');
  assert.ok(out.includes('- not ranked: fewer than 5 values.'));
  assert.ok(out.includes('18 results matched, 0 without a number at json.seconds.'));
});

test('compare: the table and chart take the width they have (COLUMNS), drawn in Unicode and colour on a terminal', async () => {
  const wide = lines((await box.run(base, { env: { COLUMNS: '140' } })).stdout);
  const width = (text: string[]) => Math.max(...text.map((l) => l.length));
  assert.ok(width(wide) > 120 && width(wide) <= 140, `wide: ${width(wide)}`);
  assert.match(wide[1]!, /MEDIAN 95% CI {3}P5-P95 +PRICE {6}MEDIAN x PRICE {2}MEDIAN x PRICE CI$/);
  assert.match(wide[2]!, /\[11\.85, 20\.48\] +0\.5 EUR\/h {11}8\.082 {2}\[5\.685, 10\.48\]$/);
  assert.ok(width(wide.slice(5, 8)) > width(lines((await box.run(base)).stdout).slice(5, 8)) + 50, 'a wider chart');
  let stdout = '';
  const io: Io = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: () => true },
    stdin: process.stdin,
    isTTY: { stdin: false, stdout: true, stderr: true },
    env: { ...box.env },
    columns: 100,
  };
  await compare({ benchmark: NAME, metric: 'seconds' } as Options, io);
  // Escape sequences made visible: ESC [ 1 m is bold, 2 m dim, 36 m cyan, 0 m back to plain.
  const shown = stdout.replaceAll('\u001b', '<ESC>');
  assert.match(shown, /<ESC>\[1m.*RANK/, 'bold header');
  assert.match(shown, /<ESC>\[36m━*<ESC>\[0m<ESC>\[1m┃/, 'a cyan interval bar with the median mark');
  assert.match(shown, /── p5–p95 {3}━━ median's 95% interval {3}┃ median/, 'the legend');
  assert.match(shown, /\n<ESC>\[2m {3}– {2}IFCA \/ cpu\.tiny \(2\)/, 'an unranked group: a dash, dimmed');
  assert.match(shown, /MEDIAN × PRICE/);
  const plain = shown.replace(/<ESC>\[\d+m/g, '').split('\n');
  assert.ok(width(plain) <= 100 && width(plain) > 90, 'the terminal width');
  stdout = '';
  await compare({ benchmark: NAME, metric: 'seconds' } as Options, { ...io, env: { ...box.env, NO_COLOR: '1' } });
  assert.not.ok(stdout.includes('\u001b'), 'NO_COLOR: no colour');
  assert.match(stdout, /┃/, 'still Unicode');
});

test('compare --output json, csv and svg: the answer, the server CSV, and the same SVG the server draws', async () => {
  const [json, csv, svg] = await Promise.all(['json', 'csv', 'svg'].map((o) => box.run([...base, '--output', o])));
  for (const res of [json, csv, svg]) assert.is(res.code, 0, res.stderr);
  const answer = await sdk.results.compare(query());
  assert.equal(JSON.parse(json.stdout), answer);
  assert.is(csv.stdout, await sdk.results.compareCsv(query()));
  assert.is(svg.stdout, renderCompareSvg(answer, NAME));
  assert.is(svg.stdout, await sdk.results.compareSvg(query()), "the server's chart");
});

test('compare --out FILE: written there, stdout empty; the benchmark by id names the chart all the same', async () => {
  const file = join(box.dir, 'compare.svg');
  const res = await box.run(['compare', '--benchmark', benchmark_id, '--metric', 'json.seconds', '-o', 'svg', '--out', file]);
  assert.is(res.code, 0, res.stderr);
  assert.is(res.stdout, '');
  assert.match(res.stderr, /Wrote .*compare\.svg\./);
  assert.is(await readFile(file, 'utf8'), renderCompareSvg(await sdk.results.compare(query()), NAME));
  const table = join(box.dir, 'compare.txt');
  assert.is((await box.run([...base, '--out', table])).code, 0);
  assert.match(await readFile(table, 'utf8'), /^ {3}1 {2}CESGA \/ hpc\.fast \(8\)/m);
  assert.equal(
    (await readdir(box.dir)).filter((f) => f.endsWith('.partial')),
    [],
  );
});

test('compare: filters, --by site, --better, --confidence, --min-samples and --rank-by price reach the server', async () => {
  const json = async (...args: string[]) => {
    const res = await box.run([...base, '-o', 'json', ...args]);
    assert.is(res.code, 0, res.stderr);
    return JSON.parse(res.stdout);
  };
  const fast = await json('--filter', 'cores >= 8', '--better', 'higher', '--confidence', '0.9');
  assert.equal([fast.better, fast.confidence, fast.matched, fast.groups.length], ['higher', 0.9, 8, 1]);
  const sites = await json('--by', 'site', '--site', 'CESGA', '--executed-after', '2025-03-05');
  assert.equal(
    sites.groups.map((g: { site: { name: string }; n: number }) => [g.site.name, g.n]),
    [['CESGA', 8]],
  );
  const strict = await json('--min-samples', '9');
  assert.equal(
    strict.groups.map((g: { rank: number | null }) => g.rank),
    [null, null, null],
  );
  const value = await json('--rank-by', 'price', '--currency', 'eur', '--flavor', 'CESGA/hpc.fast');
  assert.equal([value.rank_by, value.groups[0].rank, value.groups[0].per_price.median], ['price', 1, 8.0825]);
});

test('compare: two results one float step apart (1815.85 and 1815.8500000000001, 2^53 and 2^53 + 2) draw a text chart and an SVG', async () => {
  // Drawing these once looped forever; a small heap makes that fail at once instead of taking the machine's memory.
  const env = { NODE_OPTIONS: '--max-old-space-size=128' };
  const schema = { type: 'object', properties: { score: { type: 'number' }, big: { type: 'number' } } };
  const near = (await sdk.benchmarks.create({ container_image: 'ghcr.io/cli-test/near', container_tag: '1', json_schema: schema })).id;
  const site = await sdk.sites.create({ name: 'Near', address: 'z' });
  const [a, b] = [(await sdk.flavors.create(site.id, { name: 'a' })).id, (await sdk.flavors.create(site.id, { name: 'b' })).id];
  await sdk.results.createMany([
    { benchmark_id: near, flavor_id: a, execution_datetime: '2025-03-01T10:00:00Z', json: { score: 1815.85, big: 2 ** 53 } },
    { benchmark_id: near, flavor_id: b, execution_datetime: '2025-03-01T10:00:00Z', json: { score: 1815.8500000000001, big: 2 ** 53 + 2 } },
  ]);
  for (const [metric, axis] of [
    ['score', /^ +1700 +1800 +1900$/],
    ['big', /^ +8\.5e\+15 +9e\+15 +9\.5e\+15$/],
  ] as const) {
    const args = ['compare', '--benchmark', near, '--metric', metric];
    const text = await box.run(args, { env });
    assert.is(text.code, 0, text.stderr);
    const out = lines(text.stdout);
    const rows = out.filter((l) => /^- {2}Near \/ [ab] \(1\) +\|$/.test(l));
    assert.is(rows.length, 2, text.stdout);
    assert.is(rows[0]!.length, rows[1]!.length, 'both medians drawn in one column');
    assert.ok(
      out.some((l) => axis.test(l)),
      text.stdout,
    );
    const svg = await box.run([...args, '-o', 'svg'], { env });
    assert.is(svg.code, 0, svg.stderr);
    assert.not.match(svg.stdout, /NaN|Infinity/);
    assert.is(svg.stdout, await sdk.results.compareSvg({ benchmark_id: near, metric: `json.${metric}` }), "the server's chart");
  }
});

test('compare: a metric or filter path the schema does not describe is warned about on stderr, whatever the output', async () => {
  const [table, csv, svg, json] = await Promise.all([
    box.run(['compare', '--benchmark', NAME, '--metric', 'secnds']),
    box.run([...base, '-o', 'csv', '--filter', 'json.core >= 1']),
    box.run([...base, '-o', 'svg', '--filter', 'core >= 1']),
    box.run([...base, '-o', 'json', '--filter', 'core >= 1']),
  ]);
  for (const res of [table, csv, svg, json]) assert.is(res.code, 0, res.stderr);
  assert.is(
    table.stderr,
    "warning: json.secnds is not described by the benchmark's schema; did you mean json.seconds?\n" +
      'No result has a number at json.secnds (18 matched the filters).\n',
  );
  const core = "warning: json.core is not described by the benchmark's schema; did you mean json.cores?\n";
  for (const res of [csv, svg, json]) assert.is(res.stderr, core);
  assert.ok(csv.stdout.startsWith('site_name,flavor_name,n,'), csv.stdout);
  assert.ok(svg.stdout.startsWith('<svg'), svg.stdout.slice(0, 40));
  assert.is(JSON.parse(json.stdout).warnings[0].suggestion, 'json.cores', 'the JSON answer carries them too');
});

test('compare --baseline: a ratio column "0.148x [..]" from the server\'s vs_baseline; by name or id, by flavor or site', async () => {
  const slow = (await sdk.flavors.list((await sdk.sites.list({ name: 'CESGA' })).items[0]!.id, { name: 'hpc.slow' })).items[0]!;
  const answer = await sdk.results.compare({ ...query(), baseline: slow.id });
  assert.is(answer.baseline, slow.id);
  const fast = answer.groups.find((g) => g.flavor?.name === 'hpc.fast')!.vs_baseline!;
  assert.ok(fast.ratio > 0.1 && fast.ratio < 0.2 && fast.ratio_ci !== null, JSON.stringify(fast));
  const r = (v: number) => v.toPrecision(3);
  for (const ref of ['CESGA/hpc.slow', slow.id]) {
    const res = await box.run([...base, '--baseline', ref], { env: { COLUMNS: '160' } });
    assert.is(res.code, 0, res.stderr);
    const out = lines(res.stdout);
    // The column after the median's interval, before the prices.
    assert.match(out[1]!, /MEDIAN 95% CI +P5-P95 +RATIO TO BASELINE \[95% CI\] +PRICE/);
    assert.ok(out[2]!.includes(`  ${r(fast.ratio)}x [${r(fast.ratio_ci![0])}, ${r(fast.ratio_ci![1])}]  `), out[2]);
    assert.match(out[3]!, /hpc\.slow .* baseline$/);
    assert.match(out[4]!, /cpu\.tiny \(2\)/);
    assert.not.match(out[4]!, /x \[|baseline/, 'two values: no ratio');
    assert.ok(out.some((l) => l.startsWith("Ratio: how many times the baseline's values")));
  }
  // On a terminal, the times sign.
  let stdout = '';
  const io: Io = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: () => true },
    stdin: process.stdin,
    isTTY: { stdin: false, stdout: true, stderr: true },
    env: { ...box.env, NO_COLOR: '1' },
    columns: 160,
  };
  await compare({ benchmark: NAME, metric: 'seconds', baseline: 'CESGA/hpc.slow' } as Options, io);
  assert.ok(stdout.includes(`${r(fast.ratio)}× [`), stdout);
  // JSON and CSV carry the p-value; the SVG marks the baseline.
  const json = JSON.parse((await box.run([...base, '--baseline', 'CESGA/hpc.slow', '-o', 'json'])).stdout);
  assert.equal(json.groups.find((g: any) => g.flavor.name === 'hpc.fast').vs_baseline, fast);
  const csv = lines((await box.run([...base, '--baseline', 'CESGA/hpc.slow', '-o', 'csv'])).stdout);
  assert.ok(csv[0]!.endsWith(',ratio,ratio_ci_low,ratio_ci_high,ratio_pvalue'));
  const svg = (await box.run([...base, '--baseline', 'CESGA/hpc.slow', '-o', 'svg'])).stdout;
  assert.match(svg, /<g class="row baseline"/);
  // By site: the site's name.
  const sites = await box.run([...base, '--by', 'site', '--baseline', 'IFCA', '--min-samples', '2', '-o', 'json']);
  assert.is(sites.code, 0, sites.stderr);
  assert.ok(JSON.parse(sites.stdout).groups.find((g: any) => g.site.name === 'CESGA').vs_baseline.ratio < 1);
  // Unknown names, and a baseline the filters leave out.
  const unknown = await box.run([...base, '--baseline', 'CESGA/hpc.none']);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /^Error: No flavor 'hpc\.none' at site 'CESGA'/);
  const filtered = await box.run([...base, '--flavor', 'CESGA/hpc.fast', '--baseline', 'CESGA/hpc.slow']);
  assert.is(filtered.code, 2, filtered.stderr);
  assert.match(filtered.stderr, /is not among the groups/);
});

test('compare: bad options are usage errors (exit 2) with one clear line; an unknown benchmark exits 1', async () => {
  const runs = await Promise.all([
    box.run(['compare', '--benchmark', NAME]),
    box.run([...base, '--confidence', '2']),
    box.run([...base, '--rank-by', 'price']),
    box.run([...base, '--currency', 'euro']),
    box.run([...base, '--by', 'region']),
    box.run(['compare', '--benchmark', NAME, '--metric', 'json.']),
    box.run(['results', 'list', '-o', 'svg']),
  ]);
  for (const res of runs) {
    assert.is(res.code, 2, res.stderr);
    assert.is(res.stdout, '');
  }
  assert.match(runs[0]!.stderr, /required option '--metric <path>' not specified/);
  assert.match(runs[1]!.stderr, /--confidence must be a number from 0\.5 to 0\.999/);
  assert.is(runs[2]!.stderr, 'Error: --rank-by price needs --currency (e.g. --currency EUR).\n');
  assert.match(runs[3]!.stderr, /^Error: --currency must be an ISO 4217 code/);
  assert.match(runs[4]!.stderr, /argument 'region' is invalid/);
  assert.match(runs[5]!.stderr, /^Error: Invalid option: 422 INVALID_METRIC/);
  assert.match(runs[6]!.stderr, /^Error: --output svg draws a chart: only `benchmarks compare` and `benchmarks changes` have one/);
  const unknown = await box.run(['compare', '--benchmark', 'ghcr.io/nothing/here:1', '--metric', 'seconds']);
  assert.is(unknown.code, 1);
  assert.is(unknown.stderr, 'Error: No benchmark ghcr.io/nothing/here:1: see `benchmarks benchmarks list`.\n');
});

test.run();
