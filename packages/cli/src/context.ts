/**
 * What a command runs with: the resolved settings, an SDK client for the server (created on first
 * use, closed at the end), the token source, and helpers that keep data on stdout and everything
 * else on stderr.
 */
import { createClient, type Client, type FetchLike, type PageRequest } from '@benchmarks/sdk';
import { TokenSource } from './auth.ts';
import { UsageError } from './errors.ts';
import { checkServer, resolveSettings, type GlobalOptions, type ListOptions, type SettingDefaults } from './global-options.ts';
import type { Io } from './io.ts';
import { renderItem, renderList, type Column } from './output.ts';
import { progressFor, type Progress } from './progress.ts';
import { colorEnabled, stdoutWidth } from './terminal.ts';
import { CLI_VERSION } from './version.ts';

/**
 * Sees each attempt's status or network error, with its Idempotency-Key when it has one, and
 * whether the server answered with what it stored for that key earlier (`Idempotent-Replayed`).
 */
export type Observer = (outcome: number | Error, key: string | undefined, replayed?: boolean) => void;

/** Retries of each request by the SDK (its default): a keyed upload is sent at most 1 + this times. */
export const CLIENT_RETRIES = 2;

const NO_SERVER = 'No server configured: pass --server URL, set BENCHMARKS_SERVER, or save one with `benchmarks config set server URL`.';

function verboseFetch(io: Io): FetchLike {
  return async (url, init) => {
    const started = Date.now();
    io.stderr.write(`> ${init.method} ${url}\n`);
    try {
      const response = await globalThis.fetch(url, init);
      io.stderr.write(`< ${response.status} ${init.method} ${url} (${Date.now() - started} ms)\n`);
      return response;
    } catch (err) {
      io.stderr.write(`< failed ${init.method} ${url}: ${(err as Error).message}\n`);
      throw err;
    }
  };
}

function observed(fetch: FetchLike, observe: Observer): FetchLike {
  return async (url, init) => {
    const key = init.headers['idempotency-key'];
    try {
      const response = await fetch(url, init);
      observe(response.status, key, response.headers.get('idempotent-replayed') === 'true');
      return response;
    } catch (err) {
      observe(err as Error, key);
      throw err;
    }
  };
}

/** What a command runs with (see {@link createContext}). */
export type Context = Omit<Awaited<ReturnType<typeof createContext>>, 'close'>;

export async function createContext(options: GlobalOptions, io: Io, defaults?: SettingDefaults) {
  const settings = await resolveSettings(options, io, defaults);
  const tokens = new TokenSource(settings);
  const clients: Client[] = [];
  // The server's warnings (a JSON path the benchmark's schema does not describe), once each: every
  // page of a list repeats them. On stderr even with --quiet, so stdout keeps only data.
  const warned = new Set<string>();
  const onWarning = ({ message }: { message: string }) => {
    if (warned.has(message)) return;
    warned.add(message);
    io.stderr.write(`warning: ${message}\n`);
  };
  /** Another client (closed with the context) whose token comes from `getToken`; `observe` sees each attempt of its requests. */
  const newClient = (getToken: () => Promise<string | undefined>, observe?: Observer): Client => {
    if (!settings.server) throw new UsageError(NO_SERVER);
    checkServer(settings.server);
    // Node's own fetch: the bundled CLI carries no HTTP client of its own (the SDK's default is undici's).
    let fetch: FetchLike = settings.verbose ? verboseFetch(io) : (url, init) => globalThis.fetch(url, init);
    if (observe) fetch = observed(fetch, observe);
    const client = createClient({
      baseUrl: settings.server,
      getToken,
      userAgent: `benchmarks-cli/${CLI_VERSION}`,
      fetch,
      retries: CLIENT_RETRIES,
      onWarning,
    });
    clients.push(client);
    return client;
  };
  let client: Client | undefined;
  const getClient = (): Client => (client ??= newClient(() => tokens.get()));
  const info = (text: string) => {
    if (!settings.quiet) io.stderr.write(`${text}\n`);
  };
  return {
    io,
    settings,
    tokens,
    /** The SDK client; a UsageError when no server is configured. */
    get client(): Client {
      return getClient();
    },
    newClient,
    /** The API base URL, e.g. http://host:8080/api/v1. */
    get apiBase(): string {
      return getClient().baseUrl;
    },
    /** A line on stdout (data). */
    out: (text: string) => io.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    /** A hint or progress line on stderr, unless --quiet. */
    info,
    /** A warning on stderr, even with --quiet. */
    warn: (text: string) => io.stderr.write(`${text}\n`),
    printItem<T>(item: T, columns: readonly Column<T>[]): void {
      io.stdout.write(renderItem(settings.output, item, columns));
    },
    /** `beforeColumns` runs on the items before a table or CSV renders them (what the columns need to look up). */
    async printList<T>(
      request: PageRequest<T>,
      columns: readonly Column<T>[],
      listOptions: ListOptions,
      beforeColumns?: (items: T[]) => Promise<void>,
    ): Promise<T[]> {
      let items: T[];
      if (listOptions.all) {
        items = [];
        let progress: Progress | undefined;
        try {
          for await (const item of request) {
            // The first page (fetched once, reused by the loop) says how many items there are from it on.
            if (!progress) {
              const first = await request;
              progress = progressFor(io, settings, { unit: 'items', total: first.total - (first.page - 1) * first.per_page });
            }
            items.push(item);
            progress.update({ done: items.length });
          }
        } finally {
          progress?.clear();
        }
      } else {
        const page = await request;
        items = page.items;
        if (page.has_next) {
          info(
            `Showing ${items.length} of ${page.total} (page ${page.page} of ${page.pages}): add --page ${page.next_num} or --all for more.`,
          );
        }
      }
      if (items.length === 0 && settings.output === 'table') info('No results.');
      if (settings.output === 'table' || settings.output === 'csv') await beforeColumns?.(items);
      const layout = {
        width: stdoutWidth(io),
        wide: settings.wide,
        color: colorEnabled(io, 'stdout'),
        onDropped: (headers: string[]) => info(`Not shown, to fit the terminal: ${headers.join(', ')} (--wide shows every column).`),
      };
      io.stdout.write(renderList(settings.output, items, columns, layout));
      return items;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

/** Runs `fn` with a context and releases the client's connections afterwards. */
export async function withContext<T>(
  options: GlobalOptions,
  io: Io,
  fn: (ctx: Context) => Promise<T>,
  defaults?: SettingDefaults,
): Promise<T> {
  const ctx = await createContext(options, io, defaults);
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}
