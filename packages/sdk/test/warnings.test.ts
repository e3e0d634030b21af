/**
 * Warnings through the SDK against a real server: a result page's and a comparison's `warnings`,
 * the client's `onWarning` for every format (CSV, SVG, exports), `where()` with a `json.` prefix,
 * and the Warning header's parser.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, where, type Client } from '../src/index.ts';
import { parseWarningHeader } from '../src/warnings.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let t: TestServer;
let admin: Client;
let anonymous: Client;
let benchmark_id: string;
const heard: string[] = [];
let listening: Client;

const SCHEMA = {
  type: 'object',
  properties: {
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer' } } } } },
    result: { type: 'object', properties: { seconds: { type: 'number' } } },
  },
};
const CONT = "json.machine.cpu.cont is not described by the benchmark's schema; did you mean json.machine.cpu.count?";

test.before(async () => {
  t = await startTestServer('sdk_warnings');
  admin = createClient({ baseUrl: t.url, token: await t.admin('warn-admin') });
  anonymous = createClient({ baseUrl: t.url });
  listening = createClient({ baseUrl: t.url, onWarning: ({ message }) => heard.push(message) });
  benchmark_id = (await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/warnings', container_tag: '1', json_schema: SCHEMA }))
    .id;
  const site = await admin.sites.create({ name: 'Warnings site', address: 'x' });
  const flavor_id = (await admin.flavors.create(site.id, { name: 'w-flavor' })).id;
  await admin.results.createMany(
    [2, 4, 8, 16].map((count, i) => ({
      benchmark_id,
      flavor_id,
      execution_datetime: `2025-04-0${i + 1}T10:00:00Z`,
      json: { machine: { cpu: { count } }, result: { seconds: 100 / count } },
    })),
  );
});
test.after(async () => {
  await Promise.all([admin, anonymous, listening].map((c) => c.close()));
  await t.close();
});

test('results.list: where() with or without json. gives the same results', async () => {
  const bare = await anonymous.results.list({ benchmark_id, filters: [where('machine.cpu.count').gte(8)] });
  const prefixed = await anonymous.results.list({ benchmark_id, filters: [where('json.machine.cpu.count').gte(8)] });
  assert.equal(
    prefixed.items.map((r) => r.id),
    bare.items.map((r) => r.id),
  );
  assert.is(prefixed.total, 2);
  assert.is(prefixed.warnings, undefined, 'a described path: no warnings');
  assert.throws(() => where('json'), /'json' alone is the whole document/);
});

test('results.list: a misspelled path gives the page its warnings, with the nearest described path', async () => {
  const page = await anonymous.results.list({ benchmark_id, filters: [where('machine.cpu.cont').gte(4)] });
  assert.is(page.total, 0);
  assert.equal(page.warnings, [
    { code: 'UNDESCRIBED_PATH', parameter: 'filters', path: 'json.machine.cpu.cont', suggestion: 'json.machine.cpu.count', message: CONT },
  ]);
  // The iterator reads the same pages.
  const request = anonymous.results.list({ benchmark_id, filters: ['json.machine.cpu.cont >= 4'] });
  assert.is((await request).warnings?.[0]?.suggestion, 'json.machine.cpu.count');
  assert.equal(await request.toArray({ max: 10 }), []);
});

test('results.compare: warnings in the comparison', async () => {
  const answer = await anonymous.results.compare({ benchmark_id, metric: 'json.result.secnds' });
  assert.is(answer.matched, 4);
  assert.equal(
    answer.warnings?.map((w) => [w.parameter, w.path, w.suggestion]),
    [['metric', 'json.result.secnds', 'json.result.seconds']],
  );
  const fine = await anonymous.results.compare({ benchmark_id, metric: 'json.result.seconds' });
  assert.is(fine.warnings, undefined);
});

test('onWarning: every answer that warns, JSON, CSV, SVG and exports alike', async () => {
  heard.length = 0;
  await listening.results.list({ benchmark_id, filters: [where('machine.cpu.cont').gte(4)] });
  await listening.results.compareCsv({ benchmark_id, metric: 'json.result.seconds', filters: ['machine.cpu.cont > 1'] });
  await listening.results.compareSvg({ benchmark_id, metric: 'json.result.seconds', filters: ['machine.cpu.cont > 1'] });
  for await (const _ of listening.results.export({ benchmark_id, filters: ['machine.cpu.cont > 1'] })) {
    // nothing matches
  }
  const csv = listening.results.exportCsv({ benchmark_id, columns: ['id', 'json.result.secnds'] });
  await new Response(csv).text();
  assert.equal(heard, [
    CONT,
    CONT,
    CONT,
    CONT,
    "json.result.secnds is not described by the benchmark's schema; did you mean json.result.seconds?",
  ]);
  heard.length = 0;
  await listening.results.list({ benchmark_id, filters: [where('machine.cpu.count').gte(4)] });
  assert.equal(heard, [], 'nothing to warn about: not called');
});

test('parseWarningHeader: quoted pairs, percent-encoding, commas inside messages, dates', () => {
  assert.equal(parseWarningHeader(null), []);
  assert.equal(parseWarningHeader('299 - "a, b", 299 - "c \\"d\\" \\\\ e"'), ['a, b', 'c "d" \\ e']);
  assert.equal(parseWarningHeader('299 - "json.cp%C3%BC 100%25" "Sat, 01 Mar 2025 10:00:00 GMT", 299 - "next"'), ['json.cpü 100%', 'next']);
  assert.equal(parseWarningHeader('299 - "bad %E0%A4%A"'), ['bad %E0%A4%A'], 'not percent-encoding: kept as it is');
});

test.run();
