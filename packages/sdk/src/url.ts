import { API_BASE_PATH } from './contract/index.ts';

/**
 * A query value: scalars are sent once, arrays repeat the key; `undefined` and `null` are left out.
 * @example
 * const value: QueryValue = where('a').gt(1); // sent as String(value)
 */
export type QueryValue = string | number | boolean | { toString(): string } | null | undefined;

/**
 * Normalises a service address to the API base URL: `http://host:8080`, `http://host:8080/` and
 * `http://host:8080/api/v1/` all become `http://host:8080/api/v1`. A reverse-proxy prefix is kept
 * (`https://host/perf` → `https://host/perf/api/v1`). Query strings and fragments are refused.
 * @example
 * apiBaseUrl('http://localhost:8080'); // 'http://localhost:8080/api/v1'
 */
export function apiBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL, got '${baseUrl}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseUrl must use http or https, got '${url.protocol}'`);
  }
  if (url.search || url.hash) throw new TypeError('baseUrl must not have a query string or a fragment');
  if (url.username || url.password) throw new TypeError('baseUrl must not carry credentials; use token or getToken');
  const path = url.pathname.replace(/\/+$/, '');
  const base = path.endsWith(API_BASE_PATH) ? path : path + API_BASE_PATH;
  return `${url.origin}${base}`;
}

/**
 * Fills `{name}` placeholders with URI-encoded values; a `:verb` suffix stays literal.
 * @example
 * expandPath('/benchmarks/{id}:approve', { id: 'a b' }); // '/benchmarks/a%20b:approve'
 */
export function expandPath(path: string, params: Record<string, unknown> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === '') {
      throw new TypeError(`Missing path parameter '${name}' for ${path}`);
    }
    return encodeURIComponent(String(value));
  });
}

/**
 * Encodes a query: arrays repeat the key (`tags_ids=a&tags_ids=b`), `+` becomes `%2B` and a space
 * `%20` (unambiguous for every server), other reserved characters are percent-encoded.
 * @example
 * encodeQuery({ sort_by: '+name', terms: ['a b', 'c'] }); // '?sort_by=%2Bname&terms=a%20b&terms=c'
 */
export function encodeQuery(query: Record<string, QueryValue | readonly QueryValue[]> | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    const values: readonly QueryValue[] = Array.isArray(value) ? value : [value as QueryValue];
    for (const item of values) {
      if (item === undefined || item === null) continue;
      params.append(key, String(item));
    }
  }
  // URLSearchParams writes a space as '+' and a literal '+' as '%2B': every '+' left is a space.
  const text = params.toString().replace(/\+/g, '%20');
  return text ? `?${text}` : '';
}
