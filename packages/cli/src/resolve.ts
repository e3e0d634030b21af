/**
 * Names that stand for ids: `image:tag` for a benchmark, a site's name, `site/flavor` for a flavor,
 * a tag's name. Each of these is unique on the server, so a name finds at most one item.
 * A UUID is taken as an id as is. Lookups are cached for the life of the resolver.
 */
import type { Client } from '@benchmarks/sdk';
import { CliError } from './errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID.test(value);

type Status = 'approved' | 'on_review';

/** `registry:5000/org/img:1.2` → image `registry:5000/org/img`, tag `1.2` (the tag has no slash). */
export function splitImageTag(ref: string): { image: string; tag: string } | undefined {
  const colon = ref.lastIndexOf(':');
  if (colon <= 0 || colon === ref.length - 1) return undefined;
  const tag = ref.slice(colon + 1);
  if (tag.includes('/')) return undefined;
  return { image: ref.slice(0, colon), tag };
}

export class Resolver {
  readonly #cache = new Map<string, Promise<string>>();

  /** With `anyStatus`, items still on review are found too (for `get`); uploads need approved ones. */
  constructor(
    private readonly client: Client,
    private readonly options: { anyStatus?: boolean } = {},
  ) {}

  #cached(key: string, find: () => Promise<string>): Promise<string> {
    let found = this.#cache.get(key);
    if (!found) {
      found = find();
      this.#cache.set(key, found);
    }
    return found;
  }

  /**
   * Tries approved items first, then items on review (to say why one cannot be used), then approved
   * ones again: an item approved between the first two lists (by another administrator) is in neither.
   */
  async #first<T>(list: (status: Status) => Promise<{ items: T[] }>): Promise<{ item: T; status: Status } | undefined> {
    for (const status of ['approved', 'on_review', 'approved'] as const) {
      const page = await list(status);
      if (page.items.length > 0) return { item: page.items[0], status };
    }
    return undefined;
  }

  #mustBeUsable(kind: string, ref: string, status: Status): void {
    if (status === 'on_review' && !this.options.anyStatus) {
      throw new CliError(`The ${kind} '${ref}' is still on review: results can only refer to approved items.`);
    }
  }

  /** The id of `ref`, found by `list` (a name is looked up once); `missing` says there is none. */
  #find(kind: string, ref: string, missing: string, list: (status: Status) => Promise<{ items: { id: string }[] }>): Promise<string> {
    if (isUuid(ref)) return Promise.resolve(ref);
    return this.#cached(`${kind}:${ref}`, async () => {
      const found = await this.#first(list);
      if (!found) throw new CliError(missing);
      this.#mustBeUsable(kind, ref, found.status);
      return found.item.id;
    });
  }

  benchmark(ref: string): Promise<string> {
    return this.#find('benchmark', ref, `No benchmark ${ref}: see \`benchmarks benchmarks list\`.`, (status) => {
      const parts = splitImageTag(ref);
      if (!parts) throw new CliError(`'${ref}' is neither a benchmark id nor image:tag (e.g. ghcr.io/org/bench:1.0).`);
      return this.client.benchmarks.list({ container_image: parts.image, container_tag: parts.tag, status, per_page: 1 });
    });
  }

  site(ref: string): Promise<string> {
    return this.#find('site', ref, `No site named '${ref}': see \`benchmarks sites list\`.`, (status) => this.#sites(ref, status));
  }

  #sites(name: string, status: Status) {
    return this.client.sites.list({ name, status, per_page: 1 });
  }

  /** `site/flavor`, where the site is a name or an id; a name with slashes is tried at each one. */
  flavor(ref: string): Promise<string> {
    if (isUuid(ref)) return Promise.resolve(ref);
    return this.#cached(`flavor:${ref}`, async () => {
      const slashes = [...ref.matchAll(/\//g)].map((m) => m.index!);
      if (slashes.length === 0) throw new CliError(`'${ref}' is neither a flavor id nor site/flavor (e.g. CESGA/c4.large).`);
      for (const at of slashes) {
        const siteRef = ref.slice(0, at);
        const name = ref.slice(at + 1);
        if (!siteRef || !name) continue;
        const siteId = isUuid(siteRef) ? siteRef : (await this.#first((status) => this.#sites(siteRef, status)))?.item.id;
        if (!siteId) continue;
        const found = await this.#first((status) => this.client.flavors.list(siteId, { name, status, per_page: 1 }));
        if (!found) throw new CliError(`No flavor '${name}' at site '${siteRef}': see \`benchmarks flavors list '${siteRef}'\`.`);
        this.#mustBeUsable('flavor', ref, found.status);
        return found.item.id;
      }
      throw new CliError(`No site for the flavor '${ref}': see \`benchmarks sites list\`.`);
    });
  }

  tag(ref: string): Promise<string> {
    return this.#find('tag', ref, `No tag named '${ref}': see \`benchmarks tags list\`.`, (status) =>
      this.client.tags.list({ name: ref, status, per_page: 1 }),
    );
  }
}
