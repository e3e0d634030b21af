/**
 * The scenarios measured under load (docs/performance.md lists them; 16, 17 and 27, measured once, are in
 * bench/changes-runs.ts): the request variants each sends, how an answer is checked, and which of the
 * statements the server issued make its raw SQL baseline.
 */
import type pg from 'pg';
import { table } from './catalogue.ts';
import { PAGE_STATEMENT, sqlLiteral } from './database.ts';
import { ingestDocuments, metricQuantile, valueAt, type BenchmarkRow, type Catalogue, type GenerateOptions } from './generate.ts';
import { RESULT_COLUMNS } from './load.ts';
import { parseJson, type HttpRequestSpec } from './measure.ts';

/** `check`: a reason the answer is wrong, or null; `consume` reads a 2xx answer's body (default: the text, as JSON when it is). */
export type Variant = { label: string; request: HttpRequestSpec; consume?(res: Response): Promise<unknown>; check: Check };
type Check = (status: number, body: unknown) => string | null;
/**
 * `kind` export: one streamed request, measured once; `storedIds`: the results an upload stored;
 * `reference`: the scenario each run's 2xx/s is divided by; `baseline`: the statements of a variant's
 * raw SQL baseline, given those the server issued for it; `explained`: those to EXPLAIN (default: all).
 */
export type Scenario = Record<'key' | 'title' | 'endpoint' | 'baselineMethod', string> &
  Record<'id' | 'resultsPerRequest', number> & {
    kind: 'read' | 'ingest' | 'export';
    variants: Variant[];
    baseline(index: number, issued: string[]): string[];
    explained?(issued: string[]): string[];
    storedIds?(body: unknown): string[];
    reference?: number;
    selectivity?: Selectivity;
  };
/** The share `>= threshold` keeps of the benchmark's visible results, and the share aimed at. */
export type Selectivity = { path: string; target: number; threshold: number; passing: number; total: number; share: number };

/**
 * Ids of loaded results (for GET /results/{id}); the uploads' token and its identity; how many variants
 * a scenario cycles through at most; the visible results (counted again before each capture); the
 * users' shape (`shapeInputs`), when it runs.
 */
export type ScenarioInputs = { catalogue: Catalogue; options: GenerateOptions; resultIds: string[]; token: string; variants: number } & {
  identity: { iss: string; sub: string };
  visible: { total: number; byBenchmark: Map<string, number> };
  shape?: { benchmark: BenchmarkRow; resultIds: string[]; cuts: Selectivity[] };
};

/** id, key, title and endpoint of each scenario (19 to 24 are made from the data; 18's and 25's titles name their benchmark). */
const TABLE = `
1|list-by-benchmark|List results of a benchmark|GET /results?benchmark_id=…&per_page=100
2|json-filter-sort|Two numeric JSON filters, sorted by a JSON metric|GET /results?benchmark_id=…&filters=machine.cpu.count >= 4&filters=<metric> > <p25>&sort_by=-json.<metric>&per_page=100
3|search-terms|Search by a site, flavor or tag name|GET /results:search?terms=…&per_page=100
4|get-by-id|One result by id|GET /results/{id}
5|catalogue|Benchmarks list and flavors of a site (alternating)|GET /benchmarks, GET /sites/{id}/flavors
6|ingest|Upload a result (schema validation)|POST /results
7|ingest-batch|Upload results in batches of 100 (schema validation)|POST /results:batch (100 results per request)
8|compare-by-flavor|Compare the flavors of a benchmark of ~50k results|GET /results:compare?benchmark_id=…&metric=json.<metric>
9|compare-json-filter|Compare the flavors of a benchmark, one JSON filter (about half kept)|GET /results:compare?benchmark_id=…&metric=json.<metric>&filters=<metric> > <its median>
10|export-ndjson|Export every visible result as NDJSON|GET /results:export?format=ndjson
18|shape-list|A benchmark's results|GET /results?benchmark_id=B&per_page=100
25|shape-get-by-id|One result by id|GET /results/{id}
26|shape-benchmarks|The benchmarks list|GET /benchmarks`;
const META = new Map(table(TABLE).map(([id, key, title, endpoint]) => [Number(id), { key: key!, title: title!, endpoint: endpoint! }]));
export const SCENARIOS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27];
export const MEASURED_ONCE: Record<number, string> = { 16: 'changes', 17: 'compare-baseline', 27: 'health-under-load' };
export const SHAPE_SCENARIOS = [18, 19, 20, 21, 22, 23, 24, 25, 26, 27];
const BATCH_SIZE = 100;
/** The issue's filter on a suggested path, and a continuous numeric path every schema describes without suggesting it. */
const FILTER_PATHS = ['machine.cpu.count', 'machine.memory.available_mb'];
const SELECTIVITY_TARGETS = [0.01, 0.75, 1];
const SHAPE_SORT = 'result.score';

export const API = '/api/v1';
/** A query string, each name and value encoded; an array value repeats its name. */
type Param = string | number | (string | number)[];
const pairs = ([k, v]: [string, Param]) => [v].flat().map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(String(x))}`);
export const query = (params: Record<string, Param>) => Object.entries(params).flatMap(pairs).join('&');
const get = (path: string): HttpRequestSpec => ({ method: 'GET', path: `${API}${path}` });
const post = (path: string, token: string, body: unknown): HttpRequestSpec => {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return { method: 'POST', path: `${API}${path}`, headers, body: JSON.stringify(body) };
};

/** GET of a page of 100 results of `b`, `extra` before `per_page`. */
const resultsPage = (b: BenchmarkRow, extra: Record<string, Param> = {}) =>
  get(`/results?${query({ benchmark_id: b.id, ...extra, per_page: 100 })}`);
/** GET /results:compare of a benchmark's headline metric (without the API's prefix). */
export const comparisonPath = (b: BenchmarkRow, extra: Record<string, string> = {}) =>
  `/results:compare?${query({ benchmark_id: b.id, metric: `json.${b.def.metric}`, ...extra })}`;

/** The benchmark of scenarios 18 to 27: the one a user created through the API, else the first. */
export const shapeBenchmark = (c: Catalogue) => c.benchmarks.find((b) => b.createdBy === 'user') ?? c.benchmarks[0]!;

/** The benchmarks of the most typical size: those whose generator weight is nearest the mean (four at the default seed). */
export function typicalBenchmarks(catalogue: Catalogue): BenchmarkRow[] {
  const weights = catalogue.benchmarks.map((b) => b.def.weight);
  const mean = weights.reduce((a, b) => a + b, 0) / weights.length;
  const nearest = Math.min(...weights.map((w) => Math.abs(w - mean)));
  return catalogue.benchmarks.filter((b) => Math.abs(b.def.weight - mean) === nearest);
}

const percent = (share: number) => `${(100 * share).toFixed(share < 0.1 ? 2 : 1)} %`;
const expect =
  (expected: number, then: (body: any) => string | null): Check =>
  (status, body) =>
    status === expected ? then(body) : `status ${status}, expected ${expected}: ${JSON.stringify(body).slice(0, 400)}`;

type Page = { items: Record<string, any>[]; total: number };
/** A page of at most 100 visible results (of `benchmark` when given), then `extra`. */
const listCheck = (benchmark: BenchmarkRow | null, extra: (items: Page['items'], body: Page) => string | null) =>
  expect(200, (body: Page) => {
    if (!Array.isArray(body?.items) || typeof body.total !== 'number') return 'not a page';
    if (body.items.length > 100) return `${body.items.length} items on a page of 100`;
    if (body.total > 0 && body.items.length === 0) return 'no items although total > 0';
    if (benchmark && body.items.some((r) => r.benchmark.id !== benchmark.id)) return 'an item of another benchmark';
    if (body.items.some((r) => r.hidden !== false)) return 'a hidden result in a default list';
    return extra(body.items, body);
  });
const nonEmpty = (benchmark: BenchmarkRow | null, what: string) => listCheck(benchmark, (items) => (items.length ? null : what));

/** A page sorted by -json.`sort`, every item passing each filter (`<path> >= <number>` or `<path> > <number>`). */
const sortedCheck = (benchmark: BenchmarkRow, filters: string[], sort: string) =>
  listCheck(benchmark, (items) => {
    if (items.length === 0) return 'nothing matched the filters';
    for (const [path, op, value] of filters.map((f) => f.split(' '))) {
      const values = items.map((r) => valueAt(r.json, path!) as number);
      if (!values.every((v) => (op === '>=' ? v >= Number(value) : v > Number(value)))) return `${path} filter not applied`;
    }
    const sorted = items.map((r) => valueAt(r.json, sort) as number);
    return sorted.every((v, i) => i === 0 || v <= sorted[i - 1]!) ? null : `not sorted by -json.${sort}`;
  });

const pick = (issued: string[], re: RegExp, what: string) => {
  const picked = issued.filter((s) => re.test(s));
  if (picked.length === 0) throw new Error(`cannot find the ${what} among:\n${issued.slice(0, 20).join('\n')}`);
  return picked;
};
/**
 * The page of a result list: one statement `… limit N offset M`; its total: `select count(*) … as
 * total` (not the server's other counts); and, for a list sorted from the metric values table, the
 * counts of its walk, which answer the page too. Catalogue lists count with the page (`count(*) over ()`).
 */
const TOTAL = /^\s*select count\(\*\)(::int)? as total\b/i;
function pageAndTotal(_index: number, issued: string[]): string[] {
  const [page] = pick(issued, PAGE_STATEMENT, 'page statement');
  if (/\bcount\(\*\) over \(\)/i.test(page!) && !issued.some((s) => TOTAL.test(s))) return [page!];
  const [total] = pick(issued, TOTAL, 'total statement');
  return [page!, total!, ...issued.filter((s) => /^\s*select count\(\*\)::int as n from metric_value s\b/i.test(s))];
}
const read = (id: number, s: Partial<Scenario> & Pick<Scenario, 'variants'>): Scenario => ({
  id,
  ...META.get(id)!,
  kind: 'read',
  resultsPerRequest: 1,
  baseline: pageAndTotal,
  baselineMethod:
    'the page statement (`… limit 100 offset 0`) and the total (`select count(*) … as total`, or `count(*) over ()` in the page statement), with the counts of a walk of the metric values table when there are any, exactly as the server issued them',
  ...s,
});

/** GET /results/{id} of each id, its baseline the result row's statement. */
const resultsById = (ids: string[]) => ({
  variants: ids.map((id) => ({
    label: id,
    request: get(`/results/${id}`),
    check: expect(200, (r) => (r.id === id ? null : 'another result')),
  })),
  baseline: (_i: number, issued: string[]) => pick(issued, /\bfrom result r where r\.id = /i, 'result row statement').slice(0, 1),
  baselineMethod: 'the select of the result row by id exactly as the server issued it',
});
const benchmarkList = (count: number): Variant => {
  const check = expect(200, (body: Page) => (body?.total === count ? null : 'not every benchmark'));
  return { label: 'benchmarks', request: get('/benchmarks'), check };
};

/**
 * A compare answer of `benchmark` by flavor: `matched` as expected, the groups' n summing to the
 * numbers counted, each group's statistics in order with its median inside its interval, the groups
 * of 5 values or more ranked and first, from rank 1 in order, no flavor twice; then `extra`.
 */
const compareCheck = (benchmark: BenchmarkRow, matched: (m: number) => string | null, extra?: (body: any) => string | null) =>
  expect(200, (body: { benchmark_id: string; group_by: string; matched: number; excluded: number; groups: any[] }) => {
    if (!Array.isArray(body?.groups)) return 'not a comparison';
    if (body.benchmark_id !== benchmark.id || body.group_by !== 'flavor') return 'another benchmark or grouping';
    const wrongCount = matched(body.matched);
    if (wrongCount) return wrongCount;
    if (body.groups.length === 0) return 'no groups';
    const numbers = body.groups.reduce((s, g) => s + g.n, 0);
    if (numbers !== body.matched - body.excluded) return `groups hold ${numbers} values, ${body.matched - body.excluded} numbers matched`;
    if (new Set(body.groups.map((g) => g.flavor?.id)).size !== body.groups.length) return 'a flavor listed twice';
    if (body.groups.some((g) => (g.rank !== null) !== g.n >= 5)) return 'a group of 5 values or more unranked, or one of fewer ranked';
    const ranks = body.groups.map((g) => g.rank);
    if (ranks[0] !== 1 && ranks[0] !== null) return `first rank ${ranks[0]}`;
    if (ranks.some((r, i) => i > 0 && r !== null && (ranks[i - 1] === null || r < ranks[i - 1]!))) return 'groups not in rank order';
    for (const g of body.groups) {
      const [order, flavor] = [[g.min, g.p5, g.p25, g.median, g.p75, g.p95, g.max], `flavor ${g.flavor?.id}`];
      const [lo = Number.NaN, hi = Number.NaN] = g.median_ci;
      if (!(g.n >= 1)) return `${flavor}: a group of n = ${g.n}`;
      if (order.some((v, i) => i > 0 && !(order[i - 1]! <= v))) return `${flavor}: statistics out of order: ${order.join(' ')}`;
      if (!(g.min <= lo && lo <= g.median && g.median <= hi && hi <= g.max))
        return `${flavor}: median ${g.median} outside its interval [${lo}, ${hi}]`;
    }
    return extra?.(body) ?? null;
  });

const NOT_JSON = {};
/** `declare export_rows no scroll cursor for <select>`: the select. */
const DECLARE = /^\s*declare\s+\w+\s+no\s+scroll\s+cursor\s+for\s+/i;
const cursorSelect = (issued: string[]) => [pick(issued, DECLARE, "export's cursor")[0]!.replace(DECLARE, '')];

/**
 * Reads an NDJSON export as a stream, checking each line: a result as GET /results/{id} returns it,
 * visible, in strictly increasing (execution_datetime, id) order; the text ends with a line end.
 * Answers the lines counted and the first problem found.
 */
async function readExport(res: Response): Promise<{ lines: number; problem: string | null }> {
  const out = { lines: 0, problem: null as string | null };
  const decoder = new TextDecoder();
  let rest = '';
  let previous = { at: Number.NEGATIVE_INFINITY, id: '' };
  const line = (text: string) => {
    const r = parseJson(text, NOT_JSON) as { id?: unknown; hidden?: unknown; execution_datetime?: unknown; benchmark?: { id?: unknown } };
    if (r === NOT_JSON) return `line ${out.lines} is not JSON: ${text.slice(0, 200)}`;
    const at = Date.parse(String(r.execution_datetime));
    if (typeof r.id !== 'string' || typeof r.benchmark?.id !== 'string' || Number.isNaN(at))
      return `line ${out.lines} is not a result: ${text.slice(0, 200)}`;
    if (r.hidden !== false) return `line ${out.lines}: a hidden result`;
    if (at < previous.at || (at === previous.at && r.id <= previous.id)) return `line ${out.lines}: not in (execution_datetime, id) order`;
    previous = { at, id: r.id };
    return null;
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = lines.pop()!;
    for (const text of lines) {
      out.lines++;
      out.problem ??= line(text);
    }
  }
  if (rest + decoder.decode() !== '') out.problem ??= 'the last line has no line end';
  return out;
}

/**
 * For each path and target share, the threshold X whose `>= X` keeps the share of the benchmark's
 * visible results nearest the target (the distinct values counted from the top); and a sample of its
 * result ids.
 */
export async function shapeInputs(client: pg.Client, benchmark: BenchmarkRow): Promise<NonNullable<ScenarioInputs['shape']>> {
  const cuts: Selectivity[] = [];
  for (const path of FILTER_PATHS) {
    const { rows } = await client.query<{ target: number; threshold: string; passing: number; total: number }>(
      `with d as (select (json #> $2::text[])::numeric as v, count(*) as n from result
                  where benchmark_id = $1 and not hidden and jsonb_typeof(json #> $2::text[]) = 'number' group by 1),
            c as (select v, sum(n) over (order by v desc) as passing from d),
            t as (select count(*)::float8 as total from result where benchmark_id = $1 and not hidden)
       select target, best.v::text as threshold, best.passing::int as passing, t.total::int as total
       from unnest($3::float8[]) as target, t,
            lateral (select v, passing from c order by abs(passing / t.total - target), v desc limit 1) best
       order by target`,
      [benchmark.id, path.split('.'), SELECTIVITY_TARGETS],
    );
    for (const r of rows) cuts.push({ path, ...r, threshold: Number(r.threshold), share: r.passing / r.total });
  }
  const sql = 'select id::text from result where benchmark_id = $1 and not hidden order by md5(id::text) limit 100';
  return { benchmark, cuts, resultIds: (await client.query<{ id: string }>(sql, [benchmark.id])).rows.map((r) => r.id) };
}

export function buildScenarios(input: ScenarioInputs): Scenario[] {
  const { catalogue, options, token } = input;
  const n = Math.max(1, input.variants);
  const benchmarks = catalogue.benchmarks.slice(0, n);
  const visibleOf = (b: BenchmarkRow) => input.visible.byBenchmark.get(b.id) ?? 0;
  const spread = <T>(items: readonly T[], count: number) =>
    Array.from({ length: Math.min(count, items.length) }, (_, i) => items[Math.floor((i * items.length) / count)]!);
  const third = Math.ceil(Math.max(3, Math.min(12, n)) / 3);
  const cpuFlavors = catalogue.flavors.filter((f) => !f.spec.gpu);
  const terms = [...spread(catalogue.sites, third), ...spread(cpuFlavors, third), ...spread(catalogue.tags, third)].map((x) => x.name);

  // Fresh documents, executed an hour apart before the latest hour of the data set.
  const latest = Math.floor(Math.min(options.end.getTime(), Date.now()) / 3_600_000) * 3_600_000;
  const executed = (i: number) => new Date(latest - (i + 1) * 3_600_000).toISOString().replace('.000Z', 'Z');
  const docs = ingestDocuments(catalogue, options, Math.min(n * 5, 100));
  const batches = Array.from({ length: Math.max(1, Math.min(5, Math.ceil(n / 4))) }, (_, k) => k);
  const batchDocs = ingestDocuments(catalogue, options, BATCH_SIZE * batches.length).map((d, i) => ({ ...d, at: executed(i) }));
  const batchOf = (k: number) => batchDocs.slice(k * BATCH_SIZE, (k + 1) * BATCH_SIZE);
  const uploader = `${sqlLiteral(input.identity.iss)}, ${sqlLiteral(input.identity.sub)}`;
  const ingest = (id: number, s: Pick<Scenario, 'variants' | 'baseline' | 'baselineMethod' | 'storedIds' | 'resultsPerRequest'>) =>
    ({ id, ...META.get(id)!, kind: 'ingest', ...s }) as Scenario;

  const typical = typicalBenchmarks(catalogue).slice(0, n);
  const size = (b: BenchmarkRow) => `${b.def.key} (${visibleOf(b).toLocaleString('en-US')} visible results)`;
  const compare = (b: BenchmarkRow, filters?: string) => get(comparisonPath(b, filters ? { filters } : {}));
  const compared = {
    baseline: (_i: number, issued: string[]) => pick(issued, /\bfrom (result r|metric_value v)\b/i, 'compare statement'),
    baselineMethod:
      'the compare statement exactly as the server issued it (and the order-statistics and count statements when it issued them), without the benchmark and path lookups and the read-only transaction around them',
  };

  const { visible: v } = input; // counted again before each capture
  const exported = expect(200, (s) => s.problem ?? (s.lines === v.total ? null : `${s.lines} lines, ${v.total} visible results`));
  const out: Scenario[] = [
    read(1, {
      variants: benchmarks.map((b) => ({ label: b.def.key, request: resultsPage(b), check: nonEmpty(b, 'no results for a benchmark') })),
    }),
    read(2, {
      variants: benchmarks.map((b) => {
        const filters = ['machine.cpu.count >= 4', `${b.def.metric} > ${metricQuantile(catalogue, options, b, 0.25)}`];
        const request = resultsPage(b, { filters, sort_by: `-json.${b.def.metric}` });
        return { label: `${b.def.key}: ${filters[1]}`, request, check: sortedCheck(b, filters, b.def.metric) };
      }),
    }),
    read(3, {
      variants: [...new Set(terms)].map((term) => {
        const request = get(`/results:search?${query({ terms: term, per_page: 100 })}`);
        return { label: term, request, check: nonEmpty(null, `nothing matched '${term}'`) };
      }),
    }),
    read(4, resultsById(input.resultIds.slice(0, Math.min(n * 5, 100)))),
    read(5, {
      variants: catalogue.sites.slice(0, n * 5).flatMap((site) => {
        const check = expect(200, (body: Page) => (body?.total === options.flavorsPerSite ? null : 'not every flavor of the site'));
        return [
          benchmarkList(catalogue.benchmarks.length),
          { label: `flavors of ${site.name}`, request: get(`/sites/${site.id}/flavors`), check },
        ];
      }),
    }),
    ingest(6, {
      resultsPerRequest: 1,
      storedIds: (body) => [(body as { id: string }).id],
      variants: docs.map((d, i) => {
        const meta = { benchmark_id: d.benchmark.id, flavor_id: d.flavor.id, execution_datetime: executed(i), tags_ids: d.tag_ids };
        const check = expect(201, (body) => (body.benchmark?.id === d.benchmark.id ? null : 'another benchmark'));
        return { label: `${d.benchmark.def.key} on ${d.flavor.name}`, request: post(`/results?${query(meta)}`, token, d.json), check };
      }),
      baseline: (i) => {
        const d = docs[i]!;
        const ids = [d.benchmark.id, d.flavor.site_id, d.flavor.id].map(sqlLiteral).join(', ');
        const row = `gen_random_uuid(), ${ids}, ${sqlLiteral(JSON.stringify(d.json))}::jsonb, ${sqlLiteral(executed(i))}::timestamptz, now(), ${uploader}, false, false`;
        if (d.tag_ids.length === 0) return [`insert into result (${RESULT_COLUMNS}) values (${row})`];
        const tags = d.tag_ids.map((t) => `(${sqlLiteral(t)}::uuid)`).join(', ');
        return [
          `with r as (insert into result (${RESULT_COLUMNS}) values (${row}) returning id) insert into result_tag (result_id, tag_id) select r.id, t.id from r, (values ${tags}) as t (id)`,
        ];
      },
      baselineMethod:
        'one plain INSERT of the same document (with its result_tag rows in the same statement), id from gen_random_uuid(): no lookups, no validation, autocommit',
    }),
    ingest(7, {
      resultsPerRequest: BATCH_SIZE,
      storedIds: (body) => (body as { ids: string[] }).ids,
      variants: batches.map((k) => {
        const items = batchOf(k).map((d) => {
          const tags = d.tag_ids.length ? { tags_ids: d.tag_ids } : {};
          return { benchmark_id: d.benchmark.id, flavor_id: d.flavor.id, execution_datetime: d.at, ...tags, json: d.json };
        });
        const label = `batch ${k + 1}: ${items.length} documents over ${new Set(items.map((d) => d.benchmark_id)).size} benchmarks`;
        const stored = (ids?: string[]) => ids?.length === items.length && new Set(ids).size === items.length;
        const check = expect(201, ({ ids }) => (stored(ids) ? null : `${ids?.length} ids`));
        return { label, request: post('/results:batch', token, { items }), check };
      }),
      baseline: (k) => {
        // One multi-row INSERT with the result_tag rows, in one statement: each row numbered, its id
        // drawn once (a CTE used twice is computed once) for both tables.
        const items = batchOf(k);
        const uuids = (d: (typeof items)[number]) => [d.benchmark.id, d.flavor.site_id, d.flavor.id].map((id) => `${sqlLiteral(id)}::uuid`);
        const rows = items.map(
          (d, j) => `(${j}, ${uuids(d).join(', ')}, ${sqlLiteral(JSON.stringify(d.json))}::jsonb, ${sqlLiteral(d.at)}::timestamptz)`,
        );
        const tagged = items.flatMap((d, j) => d.tag_ids.map((t) => `(${j}, ${sqlLiteral(t)}::uuid)`));
        const insert =
          `with d (n, benchmark_id, site_id, flavor_id, json, execution_datetime) as (values ${rows.join(', ')}), ` +
          `ids as (select n, gen_random_uuid() as id from d), r as (insert into result (${RESULT_COLUMNS}) ` +
          `select ids.id, d.benchmark_id, d.site_id, d.flavor_id, d.json, d.execution_datetime, now(), ${uploader}, false, false ` +
          'from d join ids using (n) returning id) ';
        if (tagged.length === 0) return [`${insert}select count(*) from r`];
        return [
          `${insert}insert into result_tag (result_id, tag_id) select ids.id, t.tag_id from (values ${tagged.join(', ')}) as t (n, tag_id) join ids using (n)`,
        ];
      },
      baselineMethod: `one multi-row INSERT of the same ${BATCH_SIZE} documents (with their result_tag rows in the same statement), ids from gen_random_uuid(): no lookups, no validation, autocommit`,
    }),
    read(8, {
      ...compared,
      variants: typical.map((b) => {
        const matched = (m: number) => (m === visibleOf(b) ? null : `matched ${m}, the benchmark has ${visibleOf(b)} visible results`);
        return { label: `${size(b)}: ${b.def.metric}`, request: compare(b), check: compareCheck(b, matched) };
      }),
    }),
    read(9, {
      ...compared,
      variants: typical.map((b) => {
        const threshold = metricQuantile(catalogue, options, b, 0.5);
        const filter = `${b.def.metric} > ${threshold}`;
        const all = visibleOf(b);
        const matched = (m: number) =>
          m >= 0.2 * all && m <= 0.8 * all ? null : `matched ${m} of ${all}: the filter should keep about half`;
        const applied = (body: { groups: { min: number }[] }) =>
          body.groups.every((g) => g.min > threshold) ? null : `a value not above ${threshold}: not filtered`;
        return { label: `${size(b)}: ${filter}`, request: compare(b, filter), check: compareCheck(b, matched, applied) };
      }),
    }),
    read(10, {
      kind: 'export',
      variants: [{ label: 'every visible result', request: get('/results:export?format=ndjson'), consume: readExport, check: exported }],
      explained: cursorSelect,
      baseline: (_i, issued) => cursorSelect(issued),
      baselineMethod:
        'the select of the export cursor exactly as the server declared it, read by one node-postgres client in a repeatable-read, read-only transaction with `declare … no scroll cursor` and `fetch 500` until the end (rows parsed as the server’s driver parses them); API / SQL is results/s over results/s',
    }),
  ];
  if (!input.shape) return out;

  const { benchmark: b, cuts, resultIds } = input.shape;
  const list = (filter?: string) => resultsPage(b, filter ? { filters: filter, sort_by: `-json.${SHAPE_SORT}` } : {});
  const filtered = cuts.map((cut, k) => {
    const filter = `${cut.path} >= ${cut.threshold}`;
    const sorted = sortedCheck(b, [filter], SHAPE_SORT);
    const path = cut.path === FILTER_PATHS[0] ? 'suggested' : 'unsuggested';
    // The ingest scenarios may have added a few results since the threshold was chosen.
    const far = (total: number) => Math.abs(total / Math.max(1, visibleOf(b)) - cut.share) > 0.1;
    const share = (total: number) => (far(total) ? `a total of ${total} of ${visibleOf(b)}, ${percent(cut.share)} expected` : null);
    return read(19 + k, {
      key: `shape-${path}-${Math.round(cut.target * 100)}`,
      title: `${filter}, -json.${SHAPE_SORT}: ${percent(cut.share)} pass (target ${percent(cut.target)}; ${path} path)`,
      endpoint: `GET /results?benchmark_id=B&filters=${filter}&sort_by=-json.${SHAPE_SORT}&per_page=100`,
      reference: 18,
      selectivity: cut,
      variants: [
        {
          label: `${b.def.key}: ${filter}`,
          request: list(filter),
          check: (status, body) => sorted(status, body) ?? share((body as Page).total),
        },
      ],
    });
  });
  const title = (id: number, of: string) => `${META.get(id)!.title} (${of})`;
  const plain = { label: b.def.key, request: list(), check: nonEmpty(b, 'no results') };
  return [
    ...out,
    read(18, { title: title(18, `${b.def.key}, ${cuts[0]!.total.toLocaleString('en-US')} results`), variants: [plain] }),
    ...filtered,
    read(25, { ...resultsById(resultIds), title: title(25, b.def.key), reference: 18 }),
    read(26, { reference: 18, variants: [benchmarkList(catalogue.benchmarks.length)] }),
  ];
}
