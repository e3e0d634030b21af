/**
 * `benchmarks results upload` streams: an NDJSON file several times larger than the CLI's heap
 * (run with --max-old-space-size=64) is uploaded whole, each result stored once, with bounded RSS;
 * a JSON array file is read element by element; an upload killed midway resumes from its report
 * (--resume) without sending what was stored and without storing anything twice.
 */
import { createWriteStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, type Catalogue } from './support/seed.ts';

/** Size of the generated file: 4x the heap the CLI is given (64 MB) by default. */
const BIG_MB = Number(process.env.CLI_UPLOAD_TEST_MB ?? 256);
const HEAP_MB = 64;

let t: TestServer;
let box: Sandbox;
let c: Catalogue;
let uploader: string;
let flags: string[];

test.before(async () => {
  t = await startTestServer({}, 'cli_upload_stream');
  box = await sandbox();
  c = await seedCatalogue(t, 'stream');
  uploader = await t.user('streamer');
  flags = ['--benchmark', c.benchmark.name, '--flavor', `${c.site.name}/${c.flavor.name}`, '--executed-at', '2025-04-01T00:00:00Z'];
  box.env.BENCHMARKS_SERVER = t.url;
  box.env.BENCHMARKS_TOKEN = uploader;
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

const count = async (marker: string) =>
  (await t.request('GET', '/results', { query: { benchmark_id: c.benchmark.id, filters: `marker == ${marker}`, per_page: 1 } })).body
    .total as number;

/** Writes `lines` NDJSON results of about `bytesEach` bytes; resolves to the file's size. */
async function writeNdjson(path: string, marker: string, lines: number, bytesEach: number): Promise<number> {
  const out = createWriteStream(path);
  const pad = 'x'.repeat(Math.max(0, bytesEach - 60));
  for (let i = 0; i < lines; i++) {
    if (!out.write(`{"marker":"${marker}","seq":${i},"score":${i % 997},"pad":"${pad}"}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return (await stat(path)).size;
}

/** Peak RSS (VmHWM) of a process, sampled until it exits, in MB. */
function peakRss(pid: number, exited: Promise<unknown>): Promise<number> {
  return new Promise((resolve) => {
    let peak = 0;
    const sample = async () => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb / 1024);
    };
    const timer = setInterval(() => void sample(), 100);
    void exited.then(() => {
      clearInterval(timer);
      resolve(peak);
    });
  });
}

const posts = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('> POST ')).length;

test(`results upload of a ${BIG_MB} MB NDJSON file with a ${HEAP_MB} MB heap: every result stored once, RSS bounded`, async () => {
  const marker = `big-${process.pid}`;
  const path = join(box.dir, 'big.ndjson');
  const lines = Math.round((BIG_MB * 1024 * 1024) / 4096);
  const size = await writeNdjson(path, marker, lines, 4096);
  assert.ok(size > HEAP_MB * 3 * 1024 * 1024, `the file (${(size / 1048576).toFixed(0)} MB) is several times the heap`);
  const report = join(box.dir, 'big-report.json');
  // The whole heap bounded: Node 24's V8 sizes the young generation from the machine's memory (about
  // 200 MB of semi-spaces on 24 GiB, whatever the old space), which would measure V8, not the reader.
  const env = { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB} --max-semi-space-size=8` };

  const dry = box.start(['results', 'upload', path, ...flags, '--dry-run'], { env });
  const [dryRes, dryPeak] = await Promise.all([dry.exited, peakRss(dry.child.pid!, dry.exited)]);
  assert.is(dryRes.code, 0, dryRes.stderr.slice(-2000));
  assert.match(dryRes.stderr, new RegExp(`Dry run: ${lines} of ${lines} results valid, 0 invalid`));

  const started = Date.now();
  const run = box.start(['results', 'upload', path, ...flags, '--report', report, '--concurrency', '4'], { env });
  const [res, peak] = await Promise.all([run.exited, peakRss(run.child.pid!, run.exited)]);
  const seconds = (Date.now() - started) / 1000;
  assert.is(res.code, 0, res.stderr.slice(-2000));
  assert.match(res.stderr, new RegExp(`Uploaded ${lines} of ${lines} results: 0 failed, 0 skipped\\.`));
  assert.is(await count(marker), lines, 'each result stored once');
  const written = JSON.parse(await readFile(report, 'utf8'));
  assert.is(written.items.length, lines);
  assert.is(new Set(written.items.map((i: { result_id: string }) => i.result_id)).size, lines);
  assert.equal(
    written.items.slice(0, 2).map((i: { line: number }) => i.line),
    [1, 2],
    'the report is in input order',
  );
  console.log(
    `    ${(size / 1048576).toFixed(0)} MB, ${lines} results in ${seconds.toFixed(1)} s; peak RSS upload ${peak.toFixed(0)} MB, dry run ${dryPeak.toFixed(0)} MB`,
  );
  assert.ok(peak > 0 && peak < 200, `peak RSS ${peak.toFixed(0)} MB stays bounded`);
  assert.ok(dryPeak > 0 && dryPeak < 200, `dry-run peak RSS ${dryPeak.toFixed(0)} MB stays bounded`);
});

test('results upload of a JSON array file: element by element, a malformed element fails alone at its index', async () => {
  const marker = `array-${process.pid}`;
  const path = join(box.dir, 'array.json');
  const items = Array.from({ length: 250 }, (_, i) => JSON.stringify({ marker, score: i, note: `say "hi" [${i}], {ok}\\` }));
  items[120] = '{"marker": "x", "score": }';
  await writeFile(path, `[\n  ${items.join(',\n  ')}\n]\n`);
  const res = await box.run(['results', 'upload', path, ...flags, '-o', 'ndjson']);
  assert.is(res.code, 1, res.stderr);
  assert.match(res.stderr, /Uploaded 249 of 250 results: 1 failed, 0 skipped\./);
  assert.match(res.stderr, /array\.json\[120\]: malformed JSON/);
  const outcomes = res.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(
    outcomes.map((o: { index: number }) => o.index),
    Array.from({ length: 250 }, (_, i) => i),
    'stdout lists every item in order',
  );
  assert.is(await count(marker), 249);
});

test('results upload killed midway, then --resume REPORT: the rest is sent, what was stored is not sent again, nothing twice', async () => {
  const marker = `resume-${process.pid}`;
  const path = join(box.dir, 'resume.ndjson');
  const lines = 3000;
  await writeNdjson(path, marker, lines, 200);
  const report = join(box.dir, 'resume-report.json');
  const args = ['results', 'upload', path, ...flags, '--batch-size', '50', '--concurrency', '1', '--report', report, '--verbose'];
  const first = box.start(args);
  // Killed hard (no chance to finish the report) once some batches were stored.
  const deadline = Date.now() + 60_000;
  while ((first.stderr().match(/^< 20\d POST /gm) ?? []).length < 10) {
    assert.ok(Date.now() < deadline, `no 10 stored batches within 60 s:\n${first.stderr().slice(-1000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  first.child.kill('SIGKILL');
  await first.exited;
  const stored = await count(marker);
  assert.ok(stored >= 450 && stored < lines, `part of the file was stored (${stored})`);

  // A changed flag would make other batches (other keys): refused.
  const changed = await box.run(['results', 'upload', '--resume', report, '--batch-size', '100']);
  assert.is(changed.code, 2);
  assert.match(changed.stderr, /records an upload with --batch-size 50: leave --batch-size out/);

  const resumed = await box.run(['results', 'upload', '--resume', report, '--verbose']);
  assert.is(resumed.code, 0, resumed.stderr.slice(-2000));
  // The batch in flight when the first run was killed may have been stored: sent again, it is replayed.
  const done = new RegExp(`Stored (\\d+) new of ${lines} results: (\\d+) already stored, 0 failed, 0 skipped\\.`).exec(resumed.stderr);
  assert.ok(done, resumed.stderr.slice(-2000));
  const skipped = Number(/Resumed from .*: (\d+) results it records as uploaded were not sent again/.exec(resumed.stderr)?.[1]);
  assert.is(Number(done[1]) + Number(done[2]), lines);
  assert.ok(Number(done[2]) - skipped < lines - skipped, `only some of those sent again were stored already (${done[2]})`);
  assert.ok(skipped >= 400, `the report's stored results were skipped (${skipped})`);
  assert.ok(
    posts(resumed.stderr) <= (lines - skipped) / 50 + 1,
    `only the rest was sent (${posts(resumed.stderr)} requests for ${lines - skipped} results)`,
  );
  assert.is(await count(marker), lines, 'every result stored exactly once');

  // The report now covers the whole upload, each item with its own result.
  const written = JSON.parse(await readFile(report, 'utf8'));
  assert.equal(written.summary, { total: lines, uploaded: lines, failed: 0, skipped: 0, valid: 0, invalid: 0 });
  assert.is(new Set(written.items.map((i: { result_id: string }) => i.result_id)).size, lines);
  assert.is(written.command.batch_size, 50);

  // Resuming a finished upload sends nothing, to the report's server when none is configured; --server names another: refused.
  const again = await box.run(['results', 'upload', '--resume', report, '--verbose'], { env: { BENCHMARKS_SERVER: undefined } });
  assert.is(again.code, 0, again.stderr);
  assert.is(posts(again.stderr), 0);
  assert.ok(
    again.stderr.split('\n').includes(`Stored 0 new of ${lines} results: ${lines} already stored, 0 failed, 0 skipped.`),
    again.stderr,
  );
  assert.is(await count(marker), lines);
  const elsewhere = await box.run(['results', 'upload', '--resume', report, '--server', 'http://127.0.0.1:9']);
  assert.is(elsewhere.code, 2, elsewhere.stderr);
  assert.match(elsewhere.stderr, /records an upload to http:\/\/127\.0\.0\.1:\d+\/api\/v1, not http:\/\/127\.0\.0\.1:9\/api\/v1/);
});

test('results upload interrupted with Ctrl-C: stops reading, finishes what is in flight, leaves a whole report; --resume sends the rest', async () => {
  const marker = `sigint-${process.pid}`;
  const path = join(box.dir, 'sigint.ndjson');
  const lines = 2000;
  await writeNdjson(path, marker, lines, 200);
  const report = join(box.dir, 'sigint-report.json');
  const first = box.start([
    'results',
    'upload',
    path,
    ...flags,
    '--batch-size',
    '50',
    '--concurrency',
    '1',
    '--report',
    report,
    '--verbose',
  ]);
  const deadline = Date.now() + 60_000;
  while ((first.stderr().match(/^< 20\d POST /gm) ?? []).length < 5) {
    assert.ok(Date.now() < deadline, `no 5 stored batches within 60 s:\n${first.stderr().slice(-1000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  first.child.kill('SIGINT');
  const res = await first.exited;
  assert.is(res.code, 1, res.stderr.slice(-2000));
  assert.match(res.stderr, /Interrupted: finishing the requests in flight/);
  assert.match(res.stderr, /Uploaded (\d+) of \1 results: 0 failed, 0 skipped; the rest of the input was not read\./);
  assert.match(res.stderr, /^Error: Upload interrupted\.$/m);
  const written = JSON.parse(await readFile(report, 'utf8'));
  const uploaded = written.summary.uploaded as number;
  assert.ok(uploaded >= 250 && uploaded < lines, `a whole report of what was done (${uploaded})`);
  assert.is(await count(marker), uploaded, 'the report names every stored result');

  const resumed = await box.run(['results', 'upload', '--resume', report]);
  assert.is(resumed.code, 0, resumed.stderr.slice(-2000));
  assert.match(resumed.stderr, new RegExp(`Resumed from .*: ${uploaded} results it records as uploaded were not sent again`));
  assert.is(await count(marker), lines);
});

test('--resume refuses a dry run report and a file that is no report (exit 2)', async () => {
  const path = join(box.dir, 'small.ndjson');
  await writeNdjson(path, `small-${process.pid}`, 3, 100);
  const dryReport = join(box.dir, 'dry-report.json');
  assert.is((await box.run(['results', 'upload', path, ...flags, '--dry-run', '--report', dryReport])).code, 0);
  const [fromDry, fromData] = await Promise.all([
    box.run(['results', 'upload', '--resume', dryReport]),
    box.run(['results', 'upload', '--resume', path]),
  ]);
  assert.is(fromDry.code, 2);
  assert.match(fromDry.stderr, /is the report of a dry run: there is nothing to resume/);
  assert.is(fromData.code, 2);
  assert.match(fromData.stderr, /is not a report of `benchmarks results upload --report`/);
});

test.run();
