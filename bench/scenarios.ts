/**
 * The scenarios of "Read and write load" (1 to 7; compare and export, 8 to 10, are in compare-scenarios.ts): what
 * each sends to the API (a list of request variants, so that benchmark ids, result ids, terms and
 * documents vary across requests), how a response is checked, and which of the statements the
 * server issued for a request make its raw SQL baseline.
 */
import type { HttpRequestSpec } from './http-load.ts';
import { metricQuantile, valueAt, type BenchmarkRow, type Catalogue, type GenerateOptions } from './generate.ts';
import { ingestDocuments } from './generate.ts';
import { PAGE_STATEMENT } from './capture.ts';

export interface Variant {
  label: string;
  request: HttpRequestSpec;
  /**
   * Reads the body of the answer to check (default: the whole text, parsed as JSON when it is): an
   * answer too large to hold is read as a stream and summarised.
   */
  consume?(res: Response): Promise<unknown>;
  /** A reason the response is wrong, or null. */
  check(status: number, body: unknown): string | null;
}

export interface Scenario {
  id: number;
  key: string;
  title: string;
  /** The endpoint as the report shows it. */
  endpoint: string;
  /** Default read; `export`: one streamed request, measured once (bench/export-run.ts) instead of under load. */
  kind?: 'read' | 'ingest' | 'export';
  /** Results one successful request stores (ingest: 1 for POST /results, the batch size for a batch; default 1). */
  resultsPerRequest?: number;
  /** Ids of the results a successful answer stored (ingest), removed before its INSERT is explained again. */
  storedIds?(body: unknown): string[];
  /** The scenario whose 2xx/s each run is divided by (the plain list of the same benchmark), measured in the same run. */
  reference?: number;
  /** The share of the benchmark's results a filter keeps, against the share aimed at. */
  selectivity?: Selectivity;
  variants: Variant[];
  /** The statements of the raw SQL baseline of variant `index`, given what the server issued for it (default: `pageAndTotal`). */
  baseline?(index: number, issued: string[]): string[];
  /** How the baseline was made, for the report (default PAGE_AND_TOTAL). */
  baselineMethod?: string;
  /** The statements to EXPLAIN among those issued (default: all of them). */
  explained?(issued: string[]): string[];
}

/** A scenario with its defaults filled in. */
export type FullScenario = Scenario & Required<Pick<Scenario, 'kind' | 'resultsPerRequest' | 'baseline' | 'baselineMethod'>>;
export const withDefaults = (s: Scenario): FullScenario => ({
  kind: 'read',
  resultsPerRequest: 1,
  baseline: (_i, issued) => pageAndTotal(issued),
  baselineMethod: PAGE_AND_TOTAL,
  ...s,
});

export interface Selectivity {
  path: string;
  /** The share aimed at, and `>= threshold`'s share of the benchmark's visible results. */
  target: number;
  threshold: number;
  passing: number;
  total: number;
  share: number;
}

export interface ScenarioInputs {
  catalogue: Catalogue;
  options: GenerateOptions;
  /** Ids of loaded results (for GET /results/{id}). */
  resultIds: string[];
  token: string;
  /** Identity of the token, used as uploader by the plain INSERT baseline of ingest. */
  identity: { iss: string; sub: string };
  /** How many variants each scenario cycles through (at most). */
  variants: number;
  /** Visible results, in all and by benchmark id (what lists, compare and export count). */
  visible: { total: number; byBenchmark: Map<string, number> };
  /** The benchmark of scenarios 18 to 27, ids of its results and the thresholds of its filters (shape-scenarios.ts), when they run. */
  shape?: { benchmark: BenchmarkRow; resultIds: string[]; cuts: Selectivity[] };
}

export const API = '/api/v1';
const enc = encodeURIComponent;
/** A query string, each name and value encoded. */
export const query = (params: [string, string | number][]) => params.map(([k, v]) => `${enc(k)}=${enc(String(v))}`).join('&');

type Page = { items: Record<string, unknown>[]; total: number; per_page: number };

function isPage(body: unknown): body is Page {
  const b = body as Page | null;
  return !!b && Array.isArray(b.items) && typeof b.total === 'number';
}

/** Documents per request of scenario 7. */
export const BATCH_SIZE = 100;

/** The ids a batch upload answered: `{ ids }`, or `{ items: [Result…] }`. */
function batchIds(body: unknown): string[] {
  const b = body as { ids?: unknown; items?: unknown } | null;
  if (b && Array.isArray(b.ids)) return b.ids.filter((x): x is string => typeof x === 'string');
  if (b && Array.isArray(b.items)) return b.items.map((r) => (r as { id?: unknown }).id).filter((x): x is string => typeof x === 'string');
  return [];
}

const expectStatus = (expected: number) => (status: number) => (status === expected ? null : `status ${status}, expected ${expected}`);

/**
 * The page of a result list: one statement `… limit N offset M`; its total: `select count(*) … as
 * total` (not the server's other counts: of metric index entries, of path ids); and, for a list
 * sorted from the metric values table, the counts of its walk (`select count(*)::int as n from
 * metric_value s …`), which answer the page too.
 */
const TOTAL = /^\s*select count\(\*\)(::int)? as total\b/i;
const WALK_COUNT = /^\s*select count\(\*\)::int as n from metric_value s\b/i;
export function pageAndTotal(issued: string[]): string[] {
  const page = issued.find((s) => PAGE_STATEMENT.test(s));
  const total = issued.find((s) => TOTAL.test(s));
  // Catalogue lists count along with the page (`count(*) over ()`): one statement is both.
  if (page && !total && /\bcount\(\*\) over \(\)/i.test(page)) return [page];
  const picked = [page, total].filter((s): s is string => !!s);
  if (picked.length !== 2) throw new Error(`cannot find the page and total statements among:\n${issued.join('\n')}`);
  return [...picked, ...issued.filter((s) => WALK_COUNT.test(s))];
}
export const PAGE_AND_TOTAL =
  'the page statement (`… limit 100 offset 0`) and the total (`select count(*) … as total`, or `count(*) over ()` in the page statement), with the counts of a walk of the metric values table when there are any, exactly as the server issued them';

function sqlLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** The check of a list of results: a page of at most 100 visible results (of `benchmark` when given), then `extra`. */
export const listCheck =
  (benchmark: BenchmarkRow | null, extra?: (items: Record<string, unknown>[]) => string | null) => (status: number, body: unknown) => {
    if (status !== 200) return `status ${status}: ${JSON.stringify(body).slice(0, 400)}`;
    if (!isPage(body)) return 'not a page';
    if (body.items.length > 100) return `${body.items.length} items on a page of 100`;
    if (body.total > 0 && body.items.length === 0) return 'no items although total > 0';
    if (benchmark && body.items.some((r) => (r.benchmark as { id: string }).id !== benchmark.id)) return 'an item of another benchmark';
    if (body.items.some((r) => r.hidden !== false)) return 'a hidden result in a default list';
    return extra ? extra(body.items) : null;
  };

/** GET /results/{id} of each id, its baseline the result row's statement. */
export function resultsById(ids: string[]): Pick<Scenario, 'variants' | 'baseline' | 'baselineMethod'> {
  return {
    variants: ids.map((id) => ({
      label: id,
      request: { method: 'GET', path: `${API}/results/${id}` },
      check: (status, body) =>
        status !== 200
          ? `status ${status}: ${JSON.stringify(body).slice(0, 400)}`
          : (body as { id?: string }).id !== id
            ? 'another result'
            : null,
    })),
    baseline: (_i, issued) => {
      const row = issued.find((s) => /\bfrom result r where r\.id = /i.test(s));
      if (!row) throw new Error(`cannot find the result row statement among:\n${issued.join('\n')}`);
      return [row];
    },
    baselineMethod: 'the select of the result row by id exactly as the server issued it',
  };
}

/** GET /benchmarks, every one of the `count` benchmarks on its page. */
export function benchmarkList(count: number): Variant {
  return {
    label: 'benchmarks',
    request: { method: 'GET', path: `${API}/benchmarks` },
    check: (status, body) =>
      status !== 200
        ? `status ${status}: ${JSON.stringify(body).slice(0, 400)}`
        : isPage(body) && body.total === count
          ? null
          : 'not every benchmark',
  };
}

export function buildScenarios(input: ScenarioInputs): Scenario[] {
  const { catalogue, options } = input;
  const n = Math.max(1, input.variants);
  const benchmarks = catalogue.benchmarks;
  const cycle = <T>(items: readonly T[], count: number) =>
    Array.from({ length: Math.min(count, Math.max(items.length, 1)) }, (_, i) => items[i % items.length]!);

  // 1. List by benchmark
  const s1: Scenario = {
    id: 1,
    key: 'list-by-benchmark',
    title: 'List results of a benchmark',
    endpoint: 'GET /results?benchmark_id=…&per_page=100',
    variants: cycle(benchmarks, Math.min(n, benchmarks.length)).map((b) => ({
      label: b.def.key,
      request: {
        method: 'GET',
        path: `${API}/results?${query([
          ['benchmark_id', b.id],
          ['per_page', 100],
        ])}`,
      },
      check: listCheck(b, (items) => (items.length === 0 ? 'no results for a benchmark' : null)),
    })),
  };

  // 2. The same with two numeric JSON filters and a JSON sort
  const s2: Scenario = {
    id: 2,
    key: 'json-filter-sort',
    title: 'Two numeric JSON filters, sorted by a JSON metric',
    endpoint: 'GET /results?benchmark_id=…&filters=machine.cpu.count >= 4&filters=<metric> > <p25>&sort_by=-json.<metric>&per_page=100',
    variants: cycle(benchmarks, Math.min(n, benchmarks.length)).map((b) => {
      const metric = b.def.metric;
      const threshold = metricQuantile(catalogue, options, b, 0.25);
      return {
        label: `${b.def.key}: ${metric} > ${threshold}`,
        request: {
          method: 'GET',
          path: `${API}/results?${query([
            ['benchmark_id', b.id],
            ['filters', 'machine.cpu.count >= 4'],
            ['filters', `${metric} > ${threshold}`],
            ['sort_by', `-json.${metric}`],
            ['per_page', 100],
          ])}`,
        },
        check: listCheck(b, (items) => {
          if (items.length === 0) return 'nothing matched the filters';
          let previous = Infinity;
          for (const r of items) {
            const json = r.json as Record<string, unknown>;
            const value = valueAt(json, metric) as number;
            if (!((valueAt(json, 'machine.cpu.count') as number) >= 4)) return 'machine.cpu.count filter not applied';
            if (!(value > threshold)) return `${metric} filter not applied`;
            if (value > previous) return `not sorted by -json.${metric}`;
            previous = value;
          }
          return null;
        }),
      };
    }),
  };

  // 3. Search by terms: site, flavor and tag names
  const pickSpread = <T>(items: readonly T[], count: number) =>
    Array.from({ length: Math.min(count, items.length) }, (_, i) => items[Math.floor((i * items.length) / count)]!);
  const termCount = Math.max(3, Math.min(12, n));
  const third = Math.ceil(termCount / 3);
  const terms = [
    ...pickSpread(catalogue.sites, third).map((s) => s.name),
    ...pickSpread(
      catalogue.flavors.filter((f) => !f.spec.gpu),
      third,
    ).map((f) => f.name),
    ...pickSpread(catalogue.tags, third).map((t) => t.name),
  ];
  const s3: Scenario = {
    id: 3,
    key: 'search-terms',
    title: 'Search by a site, flavor or tag name',
    endpoint: 'GET /results:search?terms=…&per_page=100',
    variants: [...new Set(terms)].map((term) => ({
      label: term,
      request: {
        method: 'GET',
        path: `${API}/results:search?${query([
          ['terms', term],
          ['per_page', 100],
        ])}`,
      },
      check: listCheck(null, (items) => (items.length === 0 ? `nothing matched '${term}'` : null)),
    })),
  };

  // 4. One result by id
  const s4: Scenario = {
    id: 4,
    key: 'get-by-id',
    title: 'One result by id',
    endpoint: 'GET /results/{id}',
    ...resultsById(input.resultIds.slice(0, Math.max(1, Math.min(n * 5, 100)))),
  };

  // 5. Catalogue: the benchmarks list and the flavors of a site, alternating
  const s5Variants: Variant[] = [];
  for (const site of cycle(catalogue.sites, Math.min(catalogue.sites.length, n * 5))) {
    s5Variants.push(benchmarkList(benchmarks.length));
    s5Variants.push({
      label: `flavors of ${site.name}`,
      request: { method: 'GET', path: `${API}/sites/${site.id}/flavors` },
      check: (status, body) =>
        status !== 200
          ? `status ${status}: ${JSON.stringify(body).slice(0, 400)}`
          : isPage(body) && body.total === options.flavorsPerSite
            ? null
            : 'not every flavor of the site',
    });
  }
  const s5: Scenario = {
    id: 5,
    key: 'catalogue',
    title: 'Benchmarks list and flavors of a site (alternating)',
    endpoint: 'GET /benchmarks, GET /sites/{id}/flavors',
    variants: s5Variants,
  };

  // 6. Ingest: POST /results validated against the benchmark's schema
  type Doc = ReturnType<typeof ingestDocuments>[number];
  const RESULT_COLUMNS =
    'id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden';
  const rowValues = (d: Doc, executedAt: string, id: string) =>
    [
      id,
      sqlLiteral(d.benchmark.id),
      sqlLiteral(d.flavor.site_id),
      sqlLiteral(d.flavor.id),
      `${sqlLiteral(JSON.stringify(d.json))}::jsonb`,
      `${sqlLiteral(executedAt)}::timestamptz`,
      'now()',
      sqlLiteral(input.identity.iss),
      sqlLiteral(input.identity.sub),
      'false',
      'false',
    ].join(', ');
  const docs = ingestDocuments(catalogue, options, Math.max(1, Math.min(n * 5, 100)));
  const latest = Math.floor(Math.min(options.end.getTime(), Date.now()) / 3_600_000) * 3_600_000;
  const executed = (i: number) => new Date(latest - (i + 1) * 3_600_000).toISOString().replace('.000Z', 'Z');
  const s6: Scenario = {
    id: 6,
    key: 'ingest',
    title: 'Upload a result (schema validation)',
    endpoint: 'POST /results',
    kind: 'ingest',
    storedIds: (body) => [(body as { id: string }).id],
    variants: docs.map((d, i) => ({
      label: `${d.benchmark.def.key} on ${d.flavor.name}`,
      request: {
        method: 'POST',
        path: `${API}/results?${query([
          ['benchmark_id', d.benchmark.id],
          ['flavor_id', d.flavor.id],
          ['execution_datetime', executed(i)],
          ...d.tag_ids.map((t): [string, string] => ['tags_ids', t]),
        ])}`,
        headers: { authorization: `Bearer ${input.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(d.json),
      },
      check: (status, body) => {
        const problem = expectStatus(201)(status);
        if (problem) return `${problem}: ${JSON.stringify(body).slice(0, 300)}`;
        return (body as { benchmark?: { id: string } }).benchmark?.id === d.benchmark.id ? null : 'another benchmark';
      },
    })),
    baseline: (i) => {
      const d = docs[i]!;
      const values = rowValues(d, executed(i), 'gen_random_uuid()');
      if (d.tag_ids.length === 0) return [`insert into result (${RESULT_COLUMNS}) values (${values})`];
      const tags = d.tag_ids.map((t) => `(${sqlLiteral(t)}::uuid)`).join(', ');
      return [
        `with r as (insert into result (${RESULT_COLUMNS}) values (${values}) returning id) insert into result_tag (result_id, tag_id) select r.id, t.id from r, (values ${tags}) as t (id)`,
      ];
    },
    baselineMethod:
      'one plain INSERT of the same document (with its result_tag rows in the same statement), id from gen_random_uuid(): no lookups, no validation, autocommit',
  };

  // 7. Ingest in batches: POST /results:batch, 100 documents per request, each validated
  const batches = Math.max(1, Math.min(5, Math.ceil(n / 4)));
  const batchDocs = ingestDocuments(catalogue, options, BATCH_SIZE * batches);
  const batchOf = (k: number) =>
    batchDocs.slice(k * BATCH_SIZE, (k + 1) * BATCH_SIZE).map((d, j) => ({ d, executedAt: executed(k * BATCH_SIZE + j) }));
  const s7: Scenario = {
    id: 7,
    key: 'ingest-batch',
    title: `Upload results in batches of ${BATCH_SIZE} (schema validation)`,
    endpoint: `POST /results:batch (${BATCH_SIZE} results per request)`,
    kind: 'ingest',
    resultsPerRequest: BATCH_SIZE,
    storedIds: batchIds,
    variants: Array.from({ length: batches }, (_, k) => {
      const items = batchOf(k);
      return {
        label: `batch ${k + 1}: ${items.length} documents over ${new Set(items.map(({ d }) => d.benchmark.id)).size} benchmarks`,
        request: {
          method: 'POST',
          path: `${API}/results:batch`,
          headers: { authorization: `Bearer ${input.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            items: items.map(({ d, executedAt }) => ({
              benchmark_id: d.benchmark.id,
              flavor_id: d.flavor.id,
              execution_datetime: executedAt,
              ...(d.tag_ids.length ? { tags_ids: d.tag_ids } : {}),
              json: d.json,
            })),
          }),
        },
        check: (status: number, body: unknown) => {
          const problem = expectStatus(201)(status);
          if (problem) return `${problem}: ${JSON.stringify(body).slice(0, 300)}`;
          const ids = batchIds(body);
          return ids.length === items.length && new Set(ids).size === items.length ? null : `${ids.length} ids for ${items.length} items`;
        },
      };
    }),
    baseline: (k) => {
      // One multi-row INSERT of the same documents with their result_tag rows, in one statement:
      // each row numbered, its id drawn once (a CTE used twice is computed once) for both tables.
      const items = batchOf(k);
      const rows = items
        .map(
          ({ d, executedAt }, j) =>
            `(${j}, ${sqlLiteral(d.benchmark.id)}::uuid, ${sqlLiteral(d.flavor.site_id)}::uuid, ${sqlLiteral(d.flavor.id)}::uuid, ` +
            `${sqlLiteral(JSON.stringify(d.json))}::jsonb, ${sqlLiteral(executedAt)}::timestamptz)`,
        )
        .join(', ');
      const tagged = items.flatMap(({ d }, j) => d.tag_ids.map((t) => `(${j}, ${sqlLiteral(t)}::uuid)`));
      const insert =
        `with d (n, benchmark_id, site_id, flavor_id, json, execution_datetime) as (values ${rows}), ` +
        'ids as (select n, gen_random_uuid() as id from d), ' +
        `r as (insert into result (${RESULT_COLUMNS}) ` +
        `select ids.id, d.benchmark_id, d.site_id, d.flavor_id, d.json, d.execution_datetime, now(), ${sqlLiteral(input.identity.iss)}, ${sqlLiteral(input.identity.sub)}, false, false ` +
        'from d join ids using (n) returning id) ';
      if (tagged.length === 0) return [`${insert}select count(*) from r`];
      return [
        `${insert}insert into result_tag (result_id, tag_id) select ids.id, t.tag_id from (values ${tagged.join(', ')}) as t (n, tag_id) join ids using (n)`,
      ];
    },
    baselineMethod: `one multi-row INSERT of the same ${BATCH_SIZE} documents (with their result_tag rows in the same statement), ids from gen_random_uuid(): no lookups, no validation, autocommit`,
  };

  return [s1, s2, s3, s4, s5, s6, s7];
}
