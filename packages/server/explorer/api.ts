/** The explorer's one client of the API (the SDK, anonymous), its queries, and the URL as the state of a view. */
import { type Client, createClient } from '@benchmarks/sdk';
import { encodeQuery } from '@benchmarks/sdk/url';
import { useEffect, useState } from 'preact/hooks';

export const client: Client = createClient({ baseUrl: location.origin, retries: 1 });

/** A query in the API's names: the repeated parameters as arrays. */
export type Query = Record<string, string | string[]>;
const REPEATED = new Set(['filters', 'tags_ids', 'columns', 'terms']);

/** The query of the page's URL, only `keys` (all when none), with the API's parameter names. */
export function queryOf(search: URLSearchParams, keys?: readonly string[]): Query {
  const q: Query = {};
  for (const key of new Set(search.keys())) {
    if (keys && !keys.includes(key)) continue;
    q[key] = REPEATED.has(key) ? search.getAll(key) : search.get(key)!;
  }
  return q;
}

/** The filters every result query takes (GET /results, compare, changes, export). */
export const RESULT_FILTERS = [
  'benchmark_id',
  'site_id',
  'flavor_id',
  'tags_ids',
  'filters',
  'upload_before',
  'upload_after',
  'execution_before',
  'execution_after',
] as const;

export const apiUrl = (path: string, q: Query = {}) => `/api/v1${path}${encodeQuery(q)}`;

/** What a view fetches: the operation, its query, and how the SDK and the CLI say the same. */
export interface Call {
  operationId: string;
  path: string;
  query?: Query;
  params?: Record<string, string>;
  sdk: string;
  cli: string;
}

const shell = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const CLI_FLAGS: Record<string, string> = {
  benchmark_id: 'benchmark',
  site_id: 'site',
  flavor_id: 'flavor',
  tags_ids: 'tag',
  filters: 'filter',
  group_by: 'by',
  sort_by: 'sort',
  upload_before: 'uploaded-before',
  upload_after: 'uploaded-after',
  execution_before: 'executed-before',
  execution_after: 'executed-after',
  changed_after: 'since',
};

/** The exact `curl`, SDK and CLI commands of a call. */
export function copyAs(call: Call): { curl: string; sdk: string; cli: string } {
  const path = call.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(call.params?.[k] ?? ''));
  const query = call.query ?? {};
  const positional = Object.values(call.params ?? {}).map((v) => `'${v}'`);
  const sdkArgs = [...positional, ...(Object.keys(query).length ? [JSON.stringify(query)] : [])].join(', ');
  const flags = Object.entries(query).flatMap(([k, v]) =>
    k === 'terms' ? [v].flat().map(shell) : [v].flat().map((x) => `--${CLI_FLAGS[k] ?? k.replace(/_/g, '-')} ${shell(x)}`),
  );
  return {
    curl: `curl ${shell(`${location.origin}${apiUrl(path, query)}`)}`,
    sdk: `const client = createClient({ baseUrl: '${location.origin}' });\nawait client.${call.sdk}(${sdkArgs});`,
    cli: ['benchmarks', call.cli, ...Object.values(call.params ?? {}), ...flags, '--server', location.origin, '-o', 'json'].join(' '),
  };
}

/** Runs a call through the SDK. */
export const run = <T>(call: Call, signal: AbortSignal) =>
  client.core.invoke(call.operationId, { query: call.query, params: call.params, signal }) as Promise<T>;

export type Answer<T> = ({ state: 'loading' } | { state: 'slow' } | { state: 'done'; data: T } | { state: 'failed'; error: string }) & {
  retry: () => void;
};

const SLOW_MS = 4000;

/** The answer of `load`, again whenever `key` changes; "slow" after a few seconds, and a retry. */
export function useAnswer<T>(key: string, load: (signal: AbortSignal) => Promise<T>): Answer<T> {
  const [attempt, setAttempt] = useState(0);
  const retry = () => setAttempt((n) => n + 1);
  const [answer, setAnswer] = useState<Answer<T>>({ state: 'loading', retry });
  useEffect(() => {
    const abort = new AbortController();
    setAnswer({ state: 'loading', retry });
    const slow = setTimeout(() => setAnswer((a) => (a.state === 'loading' ? { state: 'slow', retry } : a)), SLOW_MS);
    load(abort.signal)
      .then(
        (data) => !abort.signal.aborted && setAnswer({ state: 'done', data, retry }),
        (err: Error) => !abort.signal.aborted && setAnswer({ state: 'failed', error: err.message || String(err), retry }),
      )
      .finally(() => clearTimeout(slow));
    return () => {
      clearTimeout(slow);
      abort.abort();
    };
  }, [key, attempt]);
  return answer;
}

/** Moves to another view (a new history entry: back restores the previous state). */
export function navigate(href: string, replace = false): void {
  history[replace ? 'replaceState' : 'pushState'](null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current path with some parameters changed (`undefined` or `[]` removes one). */
export function withParams(changes: Record<string, string | string[] | undefined>): string {
  const search = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    search.delete(k);
    for (const x of [v ?? []].flat()) if (x !== '') search.append(k, x);
  }
  const text = search.toString().replace(/\+/g, '%20');
  return `${location.pathname}${text ? `?${text}` : ''}`;
}

export const href = (path: string, q: Query) => `/explore${path}${encodeQuery(q)}`;
