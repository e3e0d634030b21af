/**
 * `benchmarks results export` against a real server: NDJSON and CSV to stdout and to a file (written
 * as FILE.partial, renamed when complete), the result filters, a bad column, `| head` ending quietly,
 * and an export cut short midway (a local server that breaks off) exiting 1 with one line and
 * leaving no file that looks complete.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, type Client } from '@benchmarks/sdk';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { CsvRecords } from '../src/commands/results/export.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';

const COUNT = 1_100; // more than two of the server's batches of 500

let t: TestServer;
let box: Sandbox;
let sdk: Client;
let benchmark: string;
let broken: Server;
let brokenUrl: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_export');
  box = await sandbox();
  box.env.BENCHMARKS_SERVER = t.url;
  sdk = createClient({ baseUrl: t.url, token: await t.admin('export-admin') });
  const schema = {
    type: 'object',
    properties: { result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true } } }, note: { type: 'string' } },
  };
  const b = await sdk.benchmarks.create({ container_image: 'ghcr.io/cli-test/export', container_tag: '2', json_schema: schema });
  benchmark = b.name;
  const site = await sdk.sites.create({ name: 'Export site', address: 'x' });
  const small = (await sdk.flavors.create(site.id, { name: 'small' })).id;
  const large = (await sdk.flavors.create(site.id, { name: 'large' })).id;
  const nightly = (await sdk.tags.create({ name: 'export-nightly' })).id;
  const items = Array.from({ length: COUNT }, (_, i) => ({
    benchmark_id: b.id,
    flavor_id: i % 2 ? large : small,
    execution_datetime: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
    tags_ids: i % 10 === 0 ? [nightly] : [],
    json: { result: { score: i }, note: `ñ, "quoted" #${i}` },
  }));
  for (let i = 0; i < items.length; i += 500) await sdk.results.createMany(items.slice(i, i + 500));
  // Answers 200 and half an NDJSON line (or CSV row), then breaks the connection.
  broken = createServer((req, res) => {
    const csv = req.url?.includes('format=csv');
    res.writeHead(200, { 'content-type': csv ? 'text/csv' : 'application/x-ndjson' });
    res.write(csv ? 'id,flavor_name\r\na,small\r\nb,la' : '{"id":"1"}\n{"id":"2","json":{"sco');
    setTimeout(() => res.socket?.destroy(), 20);
  });
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
  brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
});
test.after(async () => {
  broken?.closeAllConnections();
  broken?.close();
  await sdk?.close();
  await box?.cleanup();
  await t?.close();
});

const scores = (ndjson: string) => lines(ndjson).map((l) => JSON.parse(l).json.result.score as number);

test('results export: every result as NDJSON on stdout, one per line, each as GET /results/{id} returns it', async () => {
  const res = await box.run(['results', 'export', '--benchmark', benchmark]);
  assert.is(res.code, 0, res.stderr);
  assert.ok(res.stdout.endsWith('\n'));
  assert.equal(
    scores(res.stdout),
    Array.from({ length: COUNT }, (_, i) => i),
  );
  const last = JSON.parse(lines(res.stdout).at(-1)!);
  assert.equal(last, await sdk.results.get(last.id));
  assert.match(res.stderr, /^Exported 1100 results \(\d+(\.\d)? [KM]iB\)\.\n$/);
});

test('results export --format csv: the default columns with the suggested metric; --columns chooses them (and implies csv)', async () => {
  const all = await box.run(['results', 'export', '--benchmark', benchmark, '--format', 'csv']);
  assert.is(all.code, 0, all.stderr);
  const rows = all.stdout.split('\r\n');
  assert.is(rows[0], 'id,execution_datetime,benchmark_name,site_name,flavor_name,tags,json.result.score');
  assert.is(rows.length, COUNT + 2, 'a header, a row per result, and the empty string after the last CRLF');
  assert.match(rows[1]!, /^[0-9a-f-]{36},2025-01-01T00:00:00\.000,ghcr\.io\/cli-test\/export:2,Export site,small,export-nightly,0$/);
  const chosen = await box.run(['results', 'export', '--benchmark', benchmark, '--columns', 'flavor_name, json.result.score,json.note']);
  assert.is(chosen.code, 0, chosen.stderr);
  assert.equal(chosen.stdout.split('\r\n').slice(0, 3), [
    'flavor_name,json.result.score,json.note',
    'small,0,"ñ, ""quoted"" #0"',
    'large,1,"ñ, ""quoted"" #1"',
  ]);
});

test('results export: the result filters apply (flavor, tag, JSON filter, dates)', async () => {
  const res = await box.run([
    'results',
    'export',
    '--flavor',
    'Export site/small',
    '--tag',
    'export-nightly',
    '--filter',
    'result.score >= 500',
    '--executed-before',
    '2025-01-01T15:00:00Z',
  ]);
  assert.is(res.code, 0, res.stderr);
  assert.equal(
    scores(res.stdout),
    Array.from({ length: 40 }, (_, i) => 500 + 10 * i), // small (even), tagged (every tenth), >= 500, before minute 900
  );
});

test('results export --out FILE: written whole to FILE (via FILE.partial), stdout empty; CSV too', async () => {
  const file = join(box.dir, 'all.ndjson');
  const res = await box.run(['results', 'export', '--benchmark', benchmark, '--out', file]);
  assert.is(res.code, 0, res.stderr);
  assert.is(res.stdout, '');
  assert.match(res.stderr, /^Exported 1100 results \(\d+(\.\d)? [KM]iB\) to .*all\.ndjson\.\n$/);
  assert.is(scores(await readFile(file, 'utf8')).length, COUNT);
  const csv = join(box.dir, 'scores.csv');
  const written = await box.run(['results', 'export', '--benchmark', benchmark, '--columns', 'id,json.result.score', '--out', csv]);
  assert.is(written.code, 0, written.stderr);
  assert.is((await readFile(csv, 'utf8')).split('\r\n').length, COUNT + 2);
  assert.match(written.stderr, /^Exported 1100 results \(\d+(\.\d)? [KM]iB\) to .*scores\.csv\.\n$/, 'the line docs/cli.md shows, CSV too');
  assert.equal(
    (await readdir(box.dir)).filter((f) => f.endsWith('.partial')),
    [],
  );
});

test('results export --out FILE on a terminal: a progress line on stderr, erased before the summary; none in a pipe', async () => {
  const file = join(box.dir, 'tty.ndjson');
  const tty = await box.runInTerminal(['results', 'export', '--benchmark', benchmark, '--out', file], {
    columns: 100,
    env: { NO_COLOR: '1' },
  });
  assert.is(tty.code, 0, tty.output);
  // Drawn at the first results (the total may come later, from a count asked alongside).
  assert.match(tty.output, /\r(\[[#-]{20}\] \d+% {2})?[\d,]+ (of 1,100 )?results/);
  // Erased (spaces over it, back to the start of the line), then the summary on a clean line.
  assert.match(tty.output, /\r {10,}\rExported 1100 results \(\d+(\.\d)? [KM]iB\) to .*tty\.ndjson\.\n$/);
  assert.is(scores(await readFile(file, 'utf8')).length, COUNT);
  const piped = await box.run(['results', 'export', '--benchmark', benchmark, '--out', join(box.dir, 'piped.ndjson')]);
  assert.is(piped.code, 0, piped.stderr);
  assert.not.ok(piped.stderr.includes('\r'), 'no progress line in a pipe');
});

test('CsvRecords counts records, not lines: a line break inside a quoted cell, quotes doubled, chunks cut anywhere', () => {
  const csv = 'id,note\r\n1,"two\r\nlines"\r\n2,"say ""hi""\n"\r\n3,plain\r\n';
  for (let cut = 0; cut <= csv.length; cut++) {
    const records = new CsvRecords();
    records.add(Buffer.from(csv.slice(0, cut)));
    records.add(Buffer.from(csv.slice(cut)));
    assert.is(records.count, 4, `cut at ${cut}`);
  }
});

test('results export: a bad column is a usage error (exit 2, one line), and no file is left; --columns with ndjson too', async () => {
  const file = join(box.dir, 'bad.csv');
  const res = await box.run(['results', 'export', '--columns', 'id,password', '--out', file]);
  assert.is(res.code, 2);
  assert.is(res.stdout, '');
  assert.equal(lines(res.stderr).length, 1, res.stderr);
  assert.match(res.stderr, /^Error: Invalid option: 422 INVALID_COLUMN: columns\[1\] 'password' is neither a field/);
  assert.equal(
    (await readdir(box.dir)).filter((f) => f.startsWith('bad.csv')),
    [],
  );
  const mixed = await box.run(['results', 'export', '--format', 'ndjson', '--columns', 'id']);
  assert.is(mixed.code, 2);
  assert.is(mixed.stderr, 'Error: --columns chooses CSV columns: it does not go with --format ndjson.\n');
});

test('results export | head: a reader that stops early ends the export quietly (exit 0, nothing on stderr)', async () => {
  const running = box.start(['results', 'export', '--benchmark', benchmark]);
  const stdout = running.child.stdout!;
  await new Promise((resolve) => stdout.once('data', resolve));
  stdout.destroy(); // as `head` does once it has its lines
  const res = await running.exited;
  assert.is(res.code, 0);
  assert.is(res.stderr, '');
});

test('an export cut short midway exits 1 with one line; with --out only FILE.partial is left, never FILE', async () => {
  const piped = await box.run(['results', 'export', '--server', brokenUrl]);
  assert.is(piped.code, 1);
  assert.is(piped.stdout, '{"id":"1"}\n', 'what arrived whole');
  assert.equal(lines(piped.stderr).length, 1, piped.stderr);
  assert.match(
    piped.stderr,
    /^Error: The answer of GET .*results:export\?format=ndjson broke off after 33 bytes: .*What was written before is incomplete\.\n$/,
  );
  const file = join(box.dir, 'cut.csv');
  const res = await box.run(['results', 'export', '--server', brokenUrl, '--format', 'csv', '--out', file]);
  assert.is(res.code, 1);
  assert.equal(lines(res.stderr).length, 1, res.stderr);
  assert.match(
    res.stderr,
    /^Error: The export is incomplete \(29 bytes written to .*cut\.csv\.partial\): The answer of GET .*format=csv broke off after 29 bytes: [^\n]+\n$/,
  );
  assert.equal(
    (await readdir(box.dir)).filter((f) => f.startsWith('cut.csv')),
    ['cut.csv.partial'],
  );
  assert.is(await readFile(`${file}.partial`, 'utf8'), 'id,flavor_name\r\na,small\r\nb,la');
});

test.run();
