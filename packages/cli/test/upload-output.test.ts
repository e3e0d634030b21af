/**
 * What `benchmarks results upload` prints, through real pipes and a real terminal: in a pipe (every
 * CI job) one summary whatever the size of the upload, -q only the errors, --output ndjson one line
 * per item; on a terminal a progress line on stderr, erased before the summary.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, type Catalogue } from './support/seed.ts';

let t: TestServer;
let box: Sandbox;
let c: Catalogue;
let flags: string[];

/** The upload that flooded CI logs with 160,002 lines (3.6 MB) of per-item JSON, -q included. */
const MANY = 20_000;
/** Lines refused by the schema: more than the summary lists. */
const BAD = 45;

/** `count` results, one per line; every `count / BAD`-th one (from line 8) has a score the schema refuses. */
async function ndjson(name: string, count: number, bad: number, marker: string): Promise<string> {
  const path = join(box.dir, name);
  const every = Math.floor(count / Math.max(1, bad));
  const text = Array.from({ length: count }, (_, i) =>
    JSON.stringify(bad > 0 && i % every === 7 && i < bad * every ? { marker, score: 'high' } : { marker, score: i }),
  ).join('\n');
  await writeFile(path, `${text}\n`);
  return path;
}

test.before(async () => {
  t = await startTestServer({}, 'cli_upload_output');
  box = await sandbox();
  c = await seedCatalogue(t, 'upout');
  flags = ['--benchmark', c.benchmark.name, '--flavor', `${c.site.name}/${c.flavor.name}`, '--executed-at', '2025-03-01T08:30:00Z'];
  box.env.BENCHMARKS_SERVER = t.url;
  box.env.BENCHMARKS_TOKEN = await t.user('upout-uploader');
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

test(`results upload of ${MANY.toLocaleString('en-US')} results, stdout piped: one summary of under 100 lines, nothing on stdout`, async () => {
  const file = await ndjson('many.ndjson', MANY, BAD, 'many');
  const report = join(box.dir, 'many-report.json');
  const res = await box.run(['results', 'upload', file, ...flags, '--report', report]);
  assert.is(res.code, 1, res.stderr);
  assert.is(res.stdout, '', 'stdout carries only what --output asks for');
  const shown = lines(res.stderr);
  assert.ok(shown.length < 100, `${shown.length} lines`);
  assert.ok(res.stderr.length < 10_000, `${res.stderr.length} bytes`);
  assert.not.ok(res.stderr.includes('\r'), 'no progress line in a pipe');
  assert.is(shown[0], 'Failed:');
  const failures = shown.filter((l) => /^ {2}.*many\.ndjson:\d+: 422 BATCH_REFUSED/.test(l));
  assert.is(failures.length, 20, 'the first 20 failures, each with its file and line');
  assert.match(failures[0]!, /many\.ndjson:8: 422 BATCH_REFUSED: .*\(\/score: must be number\)/);
  assert.ok(shown.includes(`  ... and ${BAD - 20} more (every one is in ${report}).`), res.stderr);
  assert.ok(shown.includes(`Uploaded ${MANY - BAD} of ${MANY} results: ${BAD} failed, 0 skipped.`), res.stderr);
  assert.match(res.stderr, new RegExp(`The outcome of every item is in ${report.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')};`));
  assert.match(res.stderr, new RegExp(`^Error: ${BAD} of ${MANY} results were not uploaded`, 'm'));
});

test('results upload -q in a pipe: the failures and the error line only; nothing at all when every result is stored', async () => {
  const bad = await box.run(['results', 'upload', await ndjson('quiet-bad.ndjson', 300, 25, 'quiet-bad'), ...flags, '-q']);
  assert.is(bad.code, 1, bad.stderr);
  assert.is(bad.stdout, '');
  const shown = lines(bad.stderr);
  assert.equal(
    [shown[0], shown.length, shown.at(-2), shown.at(-1)],
    [
      'Failed:',
      1 + 20 + 1 + 1,
      '  ... and 5 more (--report FILE lists every one).',
      'Error: 25 of 300 results were not uploaded (see above).',
    ],
    bad.stderr,
  );
  assert.not.match(bad.stderr, /Uploaded /, 'the counts are not an error');

  const good = await box.run(['results', 'upload', await ndjson('quiet-good.ndjson', 300, 0, 'quiet-good'), ...flags, '-q']);
  assert.is(good.code, 0, good.stderr);
  assert.equal([good.stdout, good.stderr], ['', '']);
});

test('results upload --output ndjson: one JSON line per item on stdout, in input order; the summary on stderr', async () => {
  const res = await box.run(['results', 'upload', await ndjson('items.ndjson', 250, 5, 'items'), ...flags, '--output', 'ndjson']);
  assert.is(res.code, 1, res.stderr);
  const items = res.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.is(items.length, 250);
  assert.equal(
    items.map((i) => i.line),
    Array.from({ length: 250 }, (_, i) => i + 1),
  );
  assert.equal(Object.keys(items[0]), ['source', 'line', 'index', 'status', 'result_id', 'error']);
  assert.is(items.filter((i) => i.status === 'failed').length, 5);
  assert.is(items[7].error.code, 'BATCH_REFUSED');
  assert.match(res.stderr, /Uploaded 245 of 250 results: 5 failed, 0 skipped\./);
});

test('results upload with BENCHMARKS_OUTPUT=json: one summary object on stdout, whatever the size', async () => {
  const file = await ndjson('summary.ndjson', 2_000, 30, 'summary');
  const res = await box.run(['results', 'upload', file, ...flags], { env: { BENCHMARKS_OUTPUT: 'json' } });
  assert.is(res.code, 1, res.stderr);
  const summary = JSON.parse(res.stdout);
  assert.equal(summary.summary, { total: 2000, uploaded: 1970, failed: 30, skipped: 0, valid: 0, invalid: 0 });
  assert.equal([summary.failures.length, summary.more_failures, summary.report, summary.complete], [20, 10, null, true]);
  assert.equal([summary.failures[0].source, summary.failures[0].line], [file, 8]);
  assert.ok(lines(res.stdout).length < 40, res.stdout);
});

test('results upload on a terminal: a progress line on stderr, erased before the summary', async () => {
  const file = await ndjson('tty.ndjson', 1_000, 0, 'tty');
  const res = await box.runInTerminal(['results', 'upload', file, ...flags], { columns: 100, env: { NO_COLOR: '1' } });
  assert.is(res.code, 0, res.output);
  // Drawn at the first finished batch, then at most ten times a second: its count is any multiple of 100.
  assert.match(res.output, /\r\[[#-]{20}\] \d+% {2}[\d,]+ results/);
  // Erased (spaces over it, back to the start of the line), then the summary on a clean line.
  assert.match(res.output, /\r {10,}\rUploaded 1000 of 1000 results: 0 failed, 0 skipped\.\n$/);
});

test.run();
