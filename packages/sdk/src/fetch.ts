/** The part of `fetch` the client uses, so the global fetch, undici's and test doubles all fit. */

/**
 * A `fetch` the client can use: the global one, undici's, or any wrapper with this shape.
 * @example
 * const client = createClient({ baseUrl, fetch: (url, init) => globalThis.fetch(url, init) });
 */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<FetchResponse>;

/**
 * What the client reads from a response.
 * @example
 * const res: FetchResponse = await fetch(url);
 */
export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null; forEach(callback: (value: string, key: string) => void): void };
  text(): Promise<string>;
  /**
   * The body as a stream of bytes, for streamed answers (exports); a fetch without it still works,
   * its answer then read whole with `text()`.
   */
  body?: ReadableStream<Uint8Array> | null | undefined;
}

/**
 * A fetch and how to release what it holds (the keep-alive connections).
 * @example
 * const transport: Transport = { fetch: (url, init) => globalThis.fetch(url, init), close: async () => {} };
 */
export interface Transport {
  fetch: FetchLike;
  close(): Promise<void>;
}

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * In Node, undici's fetch over a keep-alive Agent owned by the client (connections are reused across
 * calls and released by `client.close()`), or Node's global fetch when undici cannot be loaded (a
 * bundle that left it out); elsewhere the global fetch. undici is imported lazily, by
 * a computed name, so that browser bundles never pull it in.
 * @example
 * const { fetch, close } = defaultTransport();
 */
export function defaultTransport(): Transport {
  if (!isNode) {
    return { fetch: (url, init) => globalThis.fetch(url, init), close: async () => {} };
  }
  let loaded: Promise<{ fetch: FetchLike; close(): Promise<void> }> | undefined;
  const load = () => {
    loaded ??= (async () => {
      const name = 'undici';
      let undici: typeof import('undici');
      try {
        undici = (await import(/* @vite-ignore */ /* webpackIgnore: true */ name)) as typeof import('undici');
      } catch {
        // Bundled into an app without undici (the CLI's bundle leaves it out): Node's own fetch.
        return { fetch: ((url, init) => globalThis.fetch(url, init)) as FetchLike, close: async () => {} };
      }
      const agent = new undici.Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
      return {
        fetch: ((url, init) => undici.fetch(url, { ...init, dispatcher: agent })) as FetchLike,
        close: () => agent.close(),
      };
    })();
    return loaded;
  };
  return {
    fetch: async (url, init) => (await load()).fetch(url, init),
    close: async () => {
      if (loaded !== undefined) await (await loaded).close();
    },
  };
}
