/**
 * `benchmarks results upload`: a directory of 200 results (JSON files, an NDJSON file with a
 * malformed line, a JSONL file of envelopes naming things by name), some invalid against the
 * benchmark's schema. Checked: the summary, each failure's place and reason, the --report file,
 * the exit code, and what the server stored.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { sandbox, type Sandbox } from './support/cli.ts';
import { seedCatalogue, type Catalogue } from './support/seed.ts';

let t: TestServer;
let box: Sandbox;
let c: Catalogue;
let uploader: string;
let dataDir: string;
let flags: string[];

const EXECUTED = '2025-03-01T08:30:00Z';

/** 100 JSON files (8 invalid), 70 NDJSON lines (4 invalid, 1 malformed), 30 envelopes (2 invalid): 185 valid. */
async function writeResults(dir: string, c: Catalogue): Promise<void> {
  await mkdir(join(dir, 'nested'), { recursive: true });
  for (let i = 0; i < 100; i++) {
    const json = i % 12 === 3 && i < 96 ? { score: 'high' } : { score: i, machine: { cpu: { count: (i % 8) + 1 } } };
    await writeFile(join(dir, `r${String(i).padStart(3, '0')}.json`), JSON.stringify(json, null, 2));
  }
  const ndjson = Array.from({ length: 70 }, (_, i) => {
    if (i === 40) return '{"score": 12,, "broken": true}';
    if (i % 20 === 5) return JSON.stringify({ machine: { cpu: { count: 2 } } });
    return JSON.stringify({ score: 1000 + i });
  });
  await writeFile(join(dir, 'nested', 'batch.ndjson'), `${ndjson.join('\n')}\n\n`);
  const envelopes = Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({
      benchmark_id: c.benchmark.name,
      flavor_id: `${c.site.name}/${c.flavor.name}`,
      execution_datetime: '2025-02-01T00:00:00+01:00',
      tags_ids: [c.tag.name],
      json: i === 7 || i === 21 ? { score: null } : { score: 2000 + i },
    }),
  );
  await writeFile(join(dir, 'nested', 'envelopes.jsonl'), envelopes.join('\n'));
  await writeFile(join(dir, 'notes.txt'), 'not a result file: ignored when walking a directory');
}

test.before(async () => {
  t = await startTestServer({}, 'cli_upload');
  box = await sandbox();
  c = await seedCatalogue(t, 'upload');
  uploader = await t.user('uploader');
  dataDir = join(box.dir, 'results');
  await writeResults(dataDir, c);
  flags = ['--benchmark', c.benchmark.name, '--flavor', `${c.site.name}/${c.flavor.name}`, '--executed-at', EXECUTED];
  box.env.BENCHMARKS_SERVER = t.url;
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

const stored = async (query: Record<string, string> = {}) =>
  (await t.request('GET', '/results', { query: { benchmark_id: c.benchmark.id, per_page: 1, ...query } })).body.total as number;

test('results upload --dry-run: validates all 200 against the schema locally, reports the 15 bad ones, uploads nothing', async () => {
  const report = join(box.dir, 'dry.json');
  const res = await box.run(['results', 'upload', dataDir, ...flags, '--dry-run', '--report', report], {
    env: { BENCHMARKS_TOKEN: uploader },
  });
  assert.is(res.code, 1, res.stderr);
  assert.match(res.stderr, /Dry run: 185 of 200 results valid, 15 invalid; nothing was uploaded\./);
  assert.match(res.stderr, /r003\.json:1: does not satisfy the benchmark's json_schema \(\/score: must be number\)/);
  assert.match(res.stderr, /batch\.ndjson:41: malformed JSON/);
  assert.match(res.stderr, /batch\.ndjson:6: .*must have required property 'score'/);
  const written = JSON.parse(await readFile(report, 'utf8'));
  assert.is(written.dry_run, true);
  assert.equal([written.summary.valid, written.summary.invalid, written.items.length], [185, 15, 200]);
  assert.is(await stored(), 0, 'nothing reached the server');
});

test('results upload <dir>: 185 uploaded in batches, 15 failed with file, line and reason; exit 1; report and server agree', async () => {
  const report = join(box.dir, 'report.json');
  const res = await box.run(
    ['results', 'upload', dataDir, ...flags, '--concurrency', '6', '--report', report, '--output', 'json', '--verbose'],
    {
      env: { BENCHMARKS_TOKEN: uploader },
    },
  );
  assert.is(res.code, 1, res.stderr);
  assert.match(res.stderr, /Uploaded 185 of 200 results: 15 failed, 0 skipped\./);
  assert.match(res.stderr, /r003\.json:1: 422 BATCH_REFUSED: .*\(\/score: must be number\)/, 'the server’s reason, with the pointer');
  assert.match(res.stderr, /nested\/batch\.ndjson:41: malformed JSON/);
  assert.match(res.stderr, /nested\/envelopes\.jsonl:8: 422 BATCH_REFUSED/);
  // 199 readable items in 2 batches of 100: each refused once for its bad items, then stored without them.
  const posts = res.stderr.split('\n').filter((l) => l.startsWith('> POST '));
  assert.is(posts.length, 4, posts.join('\n'));
  assert.ok(
    posts.every((l) => l.endsWith('/api/v1/results:batch')),
    posts.join('\n'),
  );
  assert.match(res.stderr, /^Error: 15 of 200 results were not uploaded/m);
  assert.not.match(res.stderr, /notes\.txt/);

  // stdout: the summary as one JSON object (--output json), the failures with their place
  const outcome = JSON.parse(res.stdout);
  assert.equal(outcome.summary, { total: 200, uploaded: 185, failed: 15, skipped: 0, valid: 0, invalid: 0 });
  assert.equal([outcome.failures.length, outcome.more_failures, outcome.report, outcome.duplicates], [15, 0, report, 0]);
  assert.ok(outcome.failures.some((f: any) => f.source.endsWith('r003.json') && f.line === 1 && f.error.code === 'BATCH_REFUSED'));
  const written = JSON.parse(await readFile(report, 'utf8'));
  assert.equal(written.summary, { total: 200, uploaded: 185, failed: 15, skipped: 0, valid: 0, invalid: 0 });
  const malformed = written.items.find((i: any) => i.source.endsWith('batch.ndjson') && i.line === 41);
  assert.is(malformed.status, 'failed');
  assert.match(malformed.error.message, /malformed JSON/);
  const invalid = written.items.find((i: any) => i.source.endsWith('r003.json'));
  assert.equal([invalid.status, invalid.error.status, invalid.error.code], ['failed', 422, 'BATCH_REFUSED']);
  assert.equal(
    invalid.error.errors.map((e: any) => [e.in, e.path]),
    [['json', '/score']],
    'the item’s own details, relative to it',
  );
  const ids = written.items.filter((i: any) => i.status === 'uploaded').map((i: any) => i.result_id);
  assert.is(new Set(ids).size, 185, 'each uploaded item names its stored result');

  // what the server stored: 185 results; the envelopes' names resolved (tag, time with offset)
  assert.is(await stored(), 185);
  assert.is(await stored({ tags_ids: c.tag.id }), 28);
  const one = await t.request(
    'GET',
    `/results/${written.items.find((i: any) => i.source.endsWith('envelopes.jsonl') && i.status === 'uploaded').result_id}`,
  );
  assert.is(one.body.execution_datetime.slice(0, 19), '2025-01-31T23:00:00');
  assert.equal(
    one.body.tags.map((tag: any) => tag.name),
    [c.tag.name],
  );
});

test('results upload - (stdin) with a tag flag: exit 0, one line summary, CSV outcome', async () => {
  const res = await box.run(['results', 'upload', '-', ...flags, '--tag', c.tag.name, '-o', 'csv'], {
    env: { BENCHMARKS_TOKEN: uploader },
    input: '{"score": 99.5}\n',
  });
  assert.is(res.code, 0, res.stderr);
  assert.match(res.stderr, /Uploaded 1 of 1 results: 0 failed, 0 skipped\./);
  const [header, row] = res.stdout.trim().split(/\r?\n/);
  assert.is(header, 'source,line,index,status,result_id,error');
  assert.match(row, /^<stdin>,1,,uploaded,[0-9a-f-]{36},$/);
  assert.is(await stored({ tags_ids: c.tag.id }), 29);
});

test('results upload as an unregistered user: stops at the first refusal, exit 4 "run benchmarks register", nothing stored', async () => {
  const before = await stored();
  const res = await box.run(['results', 'upload', dataDir, ...flags, '--concurrency', '2', '--batch-size', '10'], {
    env: { BENCHMARKS_TOKEN: await t.token('stranger') },
  });
  assert.is(res.code, 4, res.stderr);
  assert.match(res.stderr, /^Error: Not registered: run `benchmarks register`/m);
  assert.match(res.stderr, /Uploaded 0 of 200 results: \d+ failed, \d+ skipped\./);
  const skipped = Number(/(\d+) skipped/.exec(res.stderr)![1]);
  assert.ok(skipped > 150, `the rest of the batch is skipped, not sent (${skipped} skipped)`);
  assert.is(await stored(), before);
});

test('results upload --batch-size 1: one result per request (POST /results), the server’s own code per item', async () => {
  const dir = join(box.dir, 'singles');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'three.ndjson'), ['{"score": 3001}', '{"score": "bad"}', '{"score": 3003}'].join('\n'));
  const report = join(box.dir, 'singles.json');
  const res = await box.run(['results', 'upload', dir, ...flags, '--batch-size', '1', '--report', report, '--verbose'], {
    env: { BENCHMARKS_TOKEN: uploader },
  });
  assert.is(res.code, 1, res.stderr);
  assert.match(res.stderr, /Uploaded 2 of 3 results: 1 failed, 0 skipped\./);
  assert.match(res.stderr, /three\.ndjson:2: 422 SCHEMA_VIOLATION: .*\(\/score: must be number\)/);
  const posts = res.stderr.split('\n').filter((l) => l.startsWith('> POST '));
  assert.is(posts.length, 3);
  assert.ok(
    posts.every((l) => l.includes('/api/v1/results?')),
    posts.join('\n'),
  );
  const written = JSON.parse(await readFile(report, 'utf8'));
  assert.equal(
    written.items.map((i: any) => i.status),
    ['uploaded', 'failed', 'uploaded'],
  );
});

test('results upload: bad flags are usage errors (2); an unknown benchmark is one clear error (1)', async () => {
  const env = { env: { BENCHMARKS_TOKEN: uploader } };
  const [noZone, missing, unknown, tooBig] = await Promise.all([
    box.run(['results', 'upload', dataDir, '--benchmark', c.benchmark.name, '--executed-at', '2025-01-01T10:00:00'], env),
    box.run(['results', 'upload', join(box.dir, 'nope.json'), ...flags], env),
    box.run(['results', 'upload', dataDir, ...flags.slice(2), '--benchmark', 'ghcr.io/upload/unknown:9'], env),
    box.run(['results', 'upload', dataDir, ...flags, '--batch-size', '501'], env),
  ]);
  assert.is(tooBig.code, 2);
  assert.match(tooBig.stderr, /--batch-size must be an integer from 1 to 500/);
  assert.is(noZone.code, 2);
  assert.match(noZone.stderr, /with a zone, e\.g\. 2025-01-31T10:00:00Z/);
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /No such file or directory: .*nope\.json/);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /^Error: No benchmark ghcr\.io\/upload\/unknown:9/);
});

test('results upload run twice (a re-run after an interruption or a timeout): each result is stored once, the same ids reported', async () => {
  const dir = join(box.dir, 'rerun');
  await mkdir(dir, { recursive: true });
  const marker = `rerun-${process.pid}`;
  // Two identical lines are two results, as before keys existed; a bad line fails both times.
  const lines = [1, 2, 2, 3, 'bad', 4].map((score) => JSON.stringify({ marker, score }));
  await writeFile(join(dir, 'runs.ndjson'), lines.join('\n'));
  await writeFile(join(dir, 'single.json'), JSON.stringify({ marker, score: 5 }));
  const count = async () =>
    (await t.request('GET', '/results', { query: { benchmark_id: c.benchmark.id, filters: `marker == ${marker}`, per_page: 1 } })).body
      .total as number;
  const runOnce = async (extra: string[], name: string, counts: string) => {
    const report = join(box.dir, `${name}.json`);
    const res = await box.run(['results', 'upload', dir, ...flags, '--batch-size', '3', '--report', report, ...extra], {
      env: { BENCHMARKS_TOKEN: uploader },
    });
    assert.is(res.code, 1, res.stderr);
    assert.ok(res.stderr.split('\n').includes(counts), res.stderr);
    const written = JSON.parse(await readFile(report, 'utf8'));
    return written.items.map((i: any) => `${i.source.split('/').pop()}:${i.line}:${i.status}:${i.result_id ?? ''}`) as string[];
  };
  const first = await runOnce([], 'rerun-1', 'Uploaded 6 of 7 results: 1 failed, 0 skipped.');
  assert.is(await count(), 6);
  assert.is(new Set(first.map((i) => i.split(':')[3]).filter(Boolean)).size, 6, 'identical lines are stored apart');
  const second = await runOnce([], 'rerun-2', 'Stored 0 new of 7 results: 6 already stored, 1 failed, 0 skipped.');
  assert.equal(second, first, 'the second run reports the results the first one stored');
  assert.is(await count(), 6, 'nothing stored twice');
  // One result per request (--batch-size 1) keys each result the same way on every run.
  const one = await box.run(['results', 'upload', join(dir, 'single.json'), ...flags, '--batch-size', '1', '-o', 'ndjson'], {
    env: { BENCHMARKS_TOKEN: uploader },
  });
  const oneAgain = await box.run(['results', 'upload', join(dir, 'single.json'), ...flags, '--batch-size', '1', '-o', 'ndjson'], {
    env: { BENCHMARKS_TOKEN: uploader },
  });
  assert.is(one.code, 0, one.stderr);
  assert.is(JSON.parse(oneAgain.stdout).result_id, JSON.parse(one.stdout).result_id);
  assert.match(oneAgain.stderr, /^Stored 0 new of 1 results: 1 already stored, 0 failed, 0 skipped\.$/m);
  assert.is(await count(), 7);
});

test.run();
