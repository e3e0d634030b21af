/**
 * JSON paths: one syntax in filters, sort_by, compare's metric and export's columns (a filter's
 * `json.` prefix optional), and warnings (body and Warning header) about paths the benchmark's
 * JSON Schema does not describe, with the nearest described path.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { queryString, startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let bench: { id: string };
let loose: { id: string };
/** result id → name */
const names: Record<string, string> = {};

const SCHEMA = {
  type: 'object',
  $defs: { cpu: { type: 'object', properties: { count: { type: 'integer' }, model: { type: 'string' } } } },
  properties: {
    machine: { type: 'object', properties: { cpu: { $ref: '#/$defs/cpu' }, ram: { type: 'number' } } },
    result: { allOf: [{ type: 'object' }, { properties: { score: { type: 'number', suggestToUser: true } } }] },
    runs: { type: 'array', items: { type: 'object', properties: { seconds: { type: 'number' } } } },
    json: { type: 'object', properties: { x: { type: 'number' } } },
    flag: { type: 'boolean' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    variant: { oneOf: [{ properties: { a: { type: 'number' } } }, { properties: { b: { type: 'number' } } }] },
  },
  additionalProperties: true,
};

const DATA: Record<string, Record<string, unknown>> = {
  A: {
    machine: { cpu: { count: 8, model: 'AMD EPYC' }, ram: 16 },
    result: { score: 100.5 },
    runs: [{ seconds: 5 }, { seconds: 7 }],
    json: { x: 1 },
    flag: true,
  },
  B: {
    machine: { cpu: { count: 4, model: 'Intel Xeon' }, ram: 8 },
    result: { score: 90 },
    runs: [{ seconds: 6 }],
    json: { x: 2 },
    flag: false,
  },
  C: { machine: { cpu: { count: 2 } }, result: { score: 'n/a' }, x: 1 },
  D: { machine: { cpu: { count: 16, model: 'AMD EPYC' } }, result: { score: 120 }, variant: { b: 3 } },
  E: { machine: { cpu: { count: 8, model: 'Ampere' } }, result: { score: 95 } },
  F: { machine: { cpu: { count: 4 } }, result: { score: 80 } },
};

test.before(async () => {
  t = await startTestServer({}, 'result_paths');
  seed = await createSeeder(t);
  bench = await seed.benchmark({ image: 'ghcr.io/acme/paths', tag: '1', schema: SCHEMA });
  loose = await seed.benchmark({ image: 'ghcr.io/acme/loose', tag: '1', schema: {} });
  const site = await seed.site({ name: 'Paths site' });
  const flavors = [await seed.flavor(site.id, { name: 'small' }), await seed.flavor(site.id, { name: 'large' })];
  const entries = Object.entries(DATA);
  const ids = await seed.results(
    entries.map(([, json], i) => ({
      benchmark_id: bench.id,
      site_id: site.id,
      flavor_id: flavors[i % 2]!.id,
      json,
      execution_datetime: new Date(Date.UTC(2024, 0, i + 1)),
    })),
  );
  ids.forEach((id, i) => {
    names[id] = entries[i]![0];
  });
  await seed.results([
    {
      benchmark_id: loose.id,
      site_id: site.id,
      flavor_id: flavors[0]!.id,
      json: { n: 1 },
      execution_datetime: new Date(Date.UTC(2024, 1, 1)),
    },
  ]);
});
test.after(async () => {
  await t.close();
});

type Query = Record<string, string | number | string[] | undefined>;

const list = (query: Query) => t.request('GET', '/results', { query: { benchmark_id: bench.id, ...query } });

/** Names of the matching results, in list order. */
async function matching(query: Query): Promise<string[]> {
  const res = await list(query);
  assert.is(res.status, 200, res.text);
  return res.body.items.map((r: { id: string }) => names[r.id]);
}

const FILTERS: [string, string[]][] = [
  ['machine.cpu.count >= 8', ['A', 'D', 'E']],
  ['machine.cpu.count == 8', ['A', 'E']],
  ['machine.cpu.count < 8', ['B', 'C', 'F']],
  ['machine.cpu.count <= 4', ['B', 'C', 'F']],
  ['machine.cpu.count > 2', ['A', 'B', 'D', 'E', 'F']],
  ['machine.cpu.model == AMD EPYC', ['A', 'D']],
  ['machine.cpu.model > B', ['B']],
  ['result.score > 95', ['A', 'D']],
  ['result.score == n/a', ['C']],
  ['flag == true', ['A']],
  ['runs.0.seconds == 5', ['A']],
  ['runs.1.seconds > 5', ['A']],
  ['machine.ram >= 8', ['A', 'B']],
  ['nothing.here == 1', []],
];

test('GET /results: a filter path written json.<path> matches exactly the results of <path>', async () => {
  for (const [filter, expected] of FILTERS) {
    assert.equal(await matching({ filters: filter }), expected, filter);
    assert.equal(await matching({ filters: `json.${filter}` }), expected, `json.${filter}`);
  }
  // Mixed forms in one query, and the search and self lists read filters the same way.
  assert.equal(await matching({ filters: ['json.machine.cpu.count >= 4', 'result.score < 100'] }), ['B', 'E', 'F']);
  const search = await t.request('GET', '/results:search', {
    query: { terms: 'paths', filters: ['json.machine.cpu.model == AMD EPYC'] },
  });
  assert.equal(
    search.body.items.map((r: { id: string }) => names[r.id]),
    ['A', 'D'],
  );
});

test('GET /results: json.json.<path> is a top-level key named json; json alone is refused', async () => {
  assert.equal(await matching({ filters: 'json.json.x == 1' }), ['A'], 'the key json of the document');
  assert.equal(await matching({ filters: 'json.x == 1' }), ['C'], 'a leading json. is the prefix, not the key json');
  assert.equal(await matching({ filters: 'x == 1' }), ['C']);
  assert.equal(await matching({ sort_by: '-json.json.x', filters: 'json.json.x > 0' }), ['B', 'A'], 'sort_by reads it the same way');
  for (const filters of ['json == 1', 'json. == 1', 'json..a == 1']) {
    const res = await list({ filters });
    expectProblem(res, 422, 'INVALID_FILTER');
    assert.is(res.body.errors[0].path, 'filters');
  }
  assert.match((await list({ filters: 'json == 1' })).body.detail, 'a top-level key named json is json.json');
});

test('GET /results, :compare, :export: the same json.<path> text works in filters, sort_by, metric and columns', async () => {
  const path = 'json.machine.cpu.count';
  // A and E both have 8 CPUs: their order is their ids' (random), so only the first place is fixed.
  const sorted = await matching({ filters: `${path} >= 8`, sort_by: `-${path}` });
  assert.equal([sorted[0], sorted.slice(1).sort()], ['D', ['A', 'E']]);
  // sort_by and columns take fields too: there a bare path is refused, not read as a field or a path.
  expectProblem(await list({ sort_by: '+machine.cpu.count' }), 422, 'INVALID_SORT');
  const compared = await t.request('GET', '/results:compare', {
    query: { benchmark_id: bench.id, metric: path, filters: `${path} >= 8` },
  });
  assert.is(compared.status, 200, compared.text);
  assert.is(compared.body.matched, 3);
  const bare = await t.request('GET', '/results:compare', {
    query: { benchmark_id: bench.id, metric: path, filters: 'machine.cpu.count >= 8' },
  });
  assert.equal(bare.body.groups, compared.body.groups);
  expectProblem(await t.request('GET', '/results:compare', { query: { benchmark_id: bench.id, metric: 'json' } }), 422, 'INVALID_METRIC');
  const csv = await t.request('GET', '/results:export', {
    query: { benchmark_id: bench.id, format: 'csv', columns: ['id', path], filters: `${path} == 8` },
  });
  assert.is(csv.status, 200, csv.text);
  assert.equal(
    csv.text
      .trim()
      .split('\r\n')
      .map((line) => line.split(',')[1]),
    [path, '8', '8'],
  );
  const ndjson = async (filter: string) =>
    (await fetch(`${t.api}/results:export${queryString({ benchmark_id: bench.id, filters: filter })}`)).text();
  assert.is(await ndjson(`${path} <= 4`), await ndjson('machine.cpu.count <= 4'));
  assert.is((await ndjson(`${path} <= 4`)).trim().split('\n').length, 3);
});

const warningOf = (path: string, suggestion: string | null) =>
  `${path} is not described by the benchmark's schema${suggestion ? `; did you mean ${suggestion}?` : ''}`;

test('GET /results: a misspelled path with benchmark_id is answered, with a Warning header and warnings naming the nearest path', async () => {
  for (const filters of ['json.machine.cpu.cont >= 4', 'machine.cpu.cont >= 4']) {
    const res = await list({ filters });
    assert.is(res.status, 200, res.text);
    assert.is(res.body.total, 0, 'still answered: nothing has that path');
    const message = warningOf('json.machine.cpu.cont', 'json.machine.cpu.count');
    assert.equal(res.body.warnings, [
      { code: 'UNDESCRIBED_PATH', parameter: 'filters', path: 'json.machine.cpu.cont', suggestion: 'json.machine.cpu.count', message },
    ]);
    assert.is(res.headers.get('warning'), `299 - "${message}"`);
  }
  const cases: [Query, string, string, string | null][] = [
    [{ sort_by: '-json.result.scor' }, 'sort_by', 'json.result.scor', 'json.result.score'],
    [{ filters: 'runs.3.secnds > 1' }, 'filters', 'json.runs.3.secnds', 'json.runs.3.seconds'],
    [{ filters: 'score > 1' }, 'filters', 'json.score', 'json.result.score'],
    [{ filters: 'machine.cpu.count.value > 1' }, 'filters', 'json.machine.cpu.count.value', 'json.machine.cpu.count'],
    [{ filters: 'variant.c == 1' }, 'filters', 'json.variant.c', 'json.variant.a'],
    [{ filters: 'labels.region == eu' }, 'filters', 'json.labels.region', null],
    [{ filters: 'zzzzzzzz == 1' }, 'filters', 'json.zzzzzzzz', null],
  ];
  for (const [query, parameter, path, suggestion] of cases) {
    const res = await list(query);
    assert.is(res.status, 200, res.text);
    assert.equal(
      res.body.warnings,
      [{ code: 'UNDESCRIBED_PATH', parameter, path, suggestion, message: warningOf(path, suggestion) }],
      path,
    );
    assert.is(res.headers.get('warning'), `299 - "${warningOf(path, suggestion)}"`);
  }
  // One warning per distinct path, in the order of the query; the self list warns as well.
  const several = await list({
    filters: ['machine.cpu.cont > 1', 'json.machine.cpu.cont < 9', 'result.scor > 1'],
    sort_by: '+json.machne.ram',
  });
  assert.equal(
    several.body.warnings.map((w: { path: string }) => w.path),
    ['json.machine.cpu.cont', 'json.result.scor', 'json.machne.ram'],
  );
  assert.is(several.headers.get('warning'), several.body.warnings.map((w: { message: string }) => `299 - "${w.message}"`).join(', '));
  const token = await t.user('path-user');
  const mine = await t.request('GET', '/users/self/results', { token, query: { benchmark_id: bench.id, filters: 'machine.cpu.cont > 1' } });
  assert.is(mine.status, 200, mine.text);
  assert.is(mine.body.warnings[0].suggestion, 'json.machine.cpu.count');
});

test('GET /results: the Warning header escapes what a header cannot carry; the body keeps the path as it is', async () => {
  const res = await list({ filters: 'machine.cpü."%\\ == 1' });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.warnings[0].path, 'json.machine.cpü."%\\');
  assert.is(res.headers.get('warning'), `299 - "json.machine.cp%C3%BC.\\"%25\\\\ is not described by the benchmark's schema"`);
});

test('GET /results: no warning for described paths, without benchmark_id, or for a schema that names nothing', async () => {
  const quiet = async (query: Query, why: string) => {
    const res = await t.request('GET', '/results', { query });
    assert.is(res.status, 200, res.text);
    assert.is(res.body.warnings, undefined, why);
    assert.is(res.headers.get('warning'), null, why);
    assert.equal(Object.keys(res.body), [
      'items',
      'has_next',
      'has_prev',
      'next_num',
      'prev_num',
      'page',
      'pages',
      'per_page',
      'total',
      'next_cursor',
    ]);
  };
  const described = [
    'machine.cpu.count > 1', // through $ref
    'json.result.score > 1', // through allOf
    'variant.b == 3', // through oneOf
    'runs.0.seconds > 1', // array items
    'json.json.x == 1',
    'machine.cpu > 1', // an object: described, if not comparable
  ];
  await quiet({ benchmark_id: bench.id, filters: described, sort_by: '-json.machine.ram,+id' }, 'described paths');
  await quiet({ filters: 'machine.cpu.cont > 1' }, 'no benchmark_id');
  await quiet({ benchmark_id: loose.id, filters: 'whatever.path > 1' }, 'the schema {} describes nothing');
  await quiet({ benchmark_id: '00000000-0000-4000-8000-000000000000', filters: 'machine.cpu.cont > 1' }, 'an unknown benchmark');
});

test('GET /results: a changed schema is read again', async () => {
  const own = await seed.benchmark({ schema: { properties: { speed: { type: 'number' } } } });
  const before = await t.request('GET', '/results', { query: { benchmark_id: own.id, filters: 'sped > 1' } });
  assert.is(before.body.warnings[0].suggestion, 'json.speed');
  await seed.sql('update benchmark set json_schema = ? where id = ?', [
    JSON.stringify({ properties: { sped: { type: 'number' } } }),
    own.id,
  ]);
  const after = await t.request('GET', '/results', { query: { benchmark_id: own.id, filters: 'sped > 1' } });
  assert.is(after.body.warnings, undefined);
});

test('GET /results:compare and :export: undescribed metric, filter and column paths are warned about', async () => {
  const compared = await t.request('GET', '/results:compare', {
    query: { benchmark_id: bench.id, metric: 'json.result.scor', filters: 'machine.cpu.count >= 1' },
  });
  assert.is(compared.status, 200, compared.text);
  assert.is(compared.body.matched, 6);
  assert.equal(compared.body.warnings, [
    {
      code: 'UNDESCRIBED_PATH',
      parameter: 'metric',
      path: 'json.result.scor',
      suggestion: 'json.result.score',
      message: warningOf('json.result.scor', 'json.result.score'),
    },
  ]);
  assert.is(compared.headers.get('warning'), `299 - "${warningOf('json.result.scor', 'json.result.score')}"`);
  const csv = await t.request('GET', '/results:compare', {
    query: { benchmark_id: bench.id, metric: 'json.result.score', filters: 'machine.cpu.cont >= 1', format: 'csv' },
  });
  assert.is(csv.status, 200);
  assert.is(csv.headers.get('warning'), `299 - "${warningOf('json.machine.cpu.cont', 'json.machine.cpu.count')}"`);
  const fine = await t.request('GET', '/results:compare', { query: { benchmark_id: bench.id, metric: 'json.result.score' } });
  assert.is(fine.body.warnings, undefined);
  assert.is(fine.headers.get('warning'), null);

  const exported = await t.request('GET', '/results:export', {
    query: { benchmark_id: bench.id, format: 'csv', columns: ['id', 'json.machine.ram', 'json.machne.ram'], filters: 'result.scre > 1' },
  });
  assert.is(exported.status, 200, exported.text);
  assert.is(
    exported.headers.get('warning'),
    `299 - "${warningOf('json.result.scre', 'json.result.score')}", 299 - "${warningOf('json.machne.ram', 'json.machine.ram')}"`,
  );
  const plain = await t.request('GET', '/results:export', {
    query: { benchmark_id: bench.id, format: 'csv', columns: ['json.machine.ram'] },
  });
  assert.is(plain.headers.get('warning'), null);
});

test('GET /results:changes: the same path forms as compare (metric json.<path>, filters with or without json.), warnings included', async () => {
  const changes = (query: Query) => t.request('GET', '/results:changes', { query: { benchmark_id: bench.id, ...query } });
  const prefixed = await changes({ metric: 'json.result.score', filters: 'json.machine.cpu.count >= 4' });
  const bare = await changes({ metric: 'json.result.score', filters: 'machine.cpu.count >= 4' });
  assert.is(prefixed.status, 200, prefixed.text);
  // A (8 CPUs), B (4), D (16), E (8) and F (4) carry a number at result.score; C's is text and has 2 CPUs.
  assert.is(prefixed.body.matched, 5);
  assert.equal(bare.body, prefixed.body, 'a filter reads the same with or without json.');
  assert.is(prefixed.body.warnings, undefined, 'described paths: no warnings');
  assert.is(prefixed.headers.get('warning'), null);

  const typo = await changes({ metric: 'json.result.scor', filters: 'machine.cpu.cont >= 4' });
  assert.is(typo.status, 200, typo.text);
  assert.is(typo.body.matched, 0, 'still answered: nothing has those paths');
  assert.equal(
    typo.body.warnings.map((w: { parameter: string; path: string; suggestion: string }) => [w.parameter, w.path, w.suggestion]),
    [
      ['metric', 'json.result.scor', 'json.result.score'],
      ['filters', 'json.machine.cpu.cont', 'json.machine.cpu.count'],
    ],
  );
  assert.is(
    typo.headers.get('warning'),
    `299 - "${warningOf('json.result.scor', 'json.result.score')}", 299 - "${warningOf('json.machine.cpu.cont', 'json.machine.cpu.count')}"`,
  );
  const csv = await changes({ metric: 'json.result.scor', format: 'csv' });
  assert.is(csv.status, 200, csv.text);
  assert.is(csv.headers.get('warning'), `299 - "${warningOf('json.result.scor', 'json.result.score')}"`);
  expectProblem(await changes({ metric: 'json' }), 422, 'INVALID_METRIC');
});

test.run();
