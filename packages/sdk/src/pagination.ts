import type { Static, TUnknown } from '@sinclair/typebox';
import type { Page as PageSchema } from './contract/index.ts';
import type { Warning } from './warnings.ts';

type Envelope = Omit<Static<ReturnType<typeof PageSchema<TUnknown>>>, 'items'>;

/**
 * One page of a list, as the contract's `Page` envelope: `items`, `page`, `per_page`, `total`,
 * `pages`, `has_next`, `has_prev`, `next_num` and `prev_num` (`null` when there is no such page),
 * and `next_cursor`, where the next page starts (`null` on the last page).
 * Result lists add `warnings` when there is something to warn about, such as a filter or sort path
 * the benchmark's schema does not describe (each with the nearest described path).
 * @example
 * const page: Page<Benchmark> = await client.benchmarks.list({ per_page: 10 });
 * console.log(`${page.items.length} of ${page.total}`);
 */
export type Page<T> = Envelope & { items: T[]; warnings?: Warning[] };

/** Which page to fetch next: after a cursor, or (from a server without cursors) by number. */
export type NextPage = { cursor: string } | { page: number };

/**
 * The answer of every `list()` and `search()`: a promise of the first page that is also an async
 * iterable over every item of every page, following each page's `next_cursor` until it is `null`
 * (a server that answers no cursor is followed by `next_num`). A walk by cursor goes as deep as
 * the list does, each page costing the server what the first one did, and neither repeats nor
 * skips an item that existed when it began, whatever is uploaded meanwhile.
 * Nothing is sent until it is awaited or iterated; the first page is fetched once and shared.
 * Iterating starts at the `page` given in the query (default 1), or after its `cursor`.
 * @example
 * const first = await client.results.list({ per_page: 50 });          // one page
 * for await (const r of client.results.list({ benchmark_id })) {}     // every result
 * for await (const page of client.results.list().pages()) {}          // every page
 * const some = await client.results.list().toArray({ max: 500 });     // at most 500 results
 */
export class PageRequest<T> implements Promise<Page<T>>, AsyncIterable<T> {
  #first: Promise<Page<T>> | undefined;
  readonly #fetchPage: (next: NextPage | undefined) => Promise<Page<T>>;

  /** `fetchPage(undefined)` fetches the first page as the caller asked for it. */
  constructor(fetchPage: (next: NextPage | undefined) => Promise<Page<T>>) {
    this.#fetchPage = fetchPage;
  }

  get [Symbol.toStringTag](): string {
    return 'PageRequest';
  }

  #firstPage(): Promise<Page<T>> {
    this.#first ??= this.#fetchPage(undefined);
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: deliberate thenable: list() returns a promise of the first page that is also an async iterator (stripe-node style)
  then<A = Page<T>, B = never>(
    onfulfilled?: ((value: Page<T>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.#firstPage().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#firstPage().finally(onfinally);
  }

  /**
   * Every page in turn, from the first one.
   * @example
   * for await (const page of client.benchmarks.list({ per_page: 100 }).pages()) console.log(page.page, page.items.length);
   */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page = await this.#firstPage();
    yield page;
    for (;;) {
      const cursor = page.next_cursor;
      if (typeof cursor === 'string') {
        page = await this.#fetchPage({ cursor });
        if (page.next_cursor === cursor) throw new Error('The server answered the same next_cursor twice: the walk does not advance');
      } else if (cursor === undefined && page.next_num !== null && page.next_num !== undefined) {
        if (page.next_num <= page.page) throw new Error(`The server's next page (${page.next_num}) does not follow page ${page.page}`);
        page = await this.#fetchPage({ page: page.next_num });
      } else {
        return;
      }
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /**
   * Collects items across pages, stopping at `max` (required, so an unexpectedly long list cannot
   * exhaust memory). Returns at most `max` items and does not say whether more exist: compare with
   * `(await request).total` when that matters.
   * @example
   * const mine = await client.self.results().toArray({ max: 1000 });
   */
  async toArray(options: { max: number }): Promise<T[]> {
    const max = options?.max;
    if (!Number.isInteger(max) || max < 0) {
      throw new TypeError('toArray({ max }) needs max, a non-negative integer bound on the number of items');
    }
    const out: T[] = [];
    if (max === 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
