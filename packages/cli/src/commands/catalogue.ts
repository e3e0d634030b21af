/**
 * The catalogue's verbs (`list`, `search`, `get`, `create`, `update`, `delete` of benchmarks, sites,
 * flavors and tags), built from one description per resource: its reference, columns, filters,
 * the sort fields its contract declares, and how its create and update bodies are made. Updates
 * read, change the given fields and write back (the API replaces every editable field); deletes ask
 * first and turn a refusal of a referenced item into a hint about --cascade.
 */
import { readFile } from 'node:fs/promises';
import { ConflictError, type Client, type PageRequest } from '@benchmarks/sdk';
import { BenchmarkSort } from '@benchmarks/sdk/contract/benchmarks';
import { FlavorSort } from '@benchmarks/sdk/contract/flavors';
import { SiteSort } from '@benchmarks/sdk/contract/sites';
import { TagSort } from '@benchmarks/sdk/contract/tags';
import type { Command } from 'commander';
import { benchmarkColumns, flavorColumns, siteColumns, tagColumns } from '../columns.ts';
import { confirm, mustBeAbleToAsk } from '../confirm.ts';
import { withContext, type Context } from '../context.ts';
import { CliError, UsageError } from '../errors.ts';
import { addListOptions, pageQuery } from '../global-options.ts';
import { readAll, type Io } from '../io.ts';
import type { Column } from '../output.ts';
import { Resolver, splitImageTag } from '../resolve.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from './common.ts';

type Text = Record<string, string | undefined>;
type Item = { id: string; name: string; status: string; description: string | null };
/** `[flag, help]` of an option, e.g. `['--name <name>', 'exact name']`. */
type Flag = readonly [flag: string, help: string];

/** What the verbs call: the SDK's namespace of the resource, with the parent site of flavors bound. */
interface Api<T, C, U> {
  list(query: object): PageRequest<T>;
  search(query: object): PageRequest<T>;
  get(id: string): Promise<T>;
  create(body: C): Promise<T>;
  update(id: string, body: U): Promise<T>;
  delete(id: string, query?: { cascade: true }): Promise<unknown>;
}

export interface Resource<T extends Item, C, U> {
  group: Catalogue;
  one: string;
  /** The positional argument naming an item, and its help. */
  ref: Flag;
  resolve(resolver: Resolver, ref: string): Promise<string>;
  api(client: Client, siteId: string): Api<T, C, U>;
  /** Flavors: list, search and create take the site first. */
  inSite?: boolean;
  columns: readonly Column<T>[];
  getColumns?: readonly Column<T>[];
  sort: readonly string[];
  /** Exact filters of `list`: option and query parameter. */
  filters: readonly (readonly [flag: string, help: string, parameter: string])[];
  searchIn: string;
  getNote?: string;
  create: {
    note?: string;
    args: readonly Flag[];
    options: readonly (readonly [string, string, 'required'?])[];
    body(o: Text, io: Io): Promise<C> | C;
  };
  /** Reads and checks the options before anything is asked of the server; merges them into the item read. */
  update: { note?: string; options: readonly Flag[]; body(o: Text, io: Io): Promise<(current: T) => U> | ((current: T) => U) };
  remove: { blocked: string; cascades: string; consequence: string };
  examples: Record<'list' | 'search' | 'get' | 'create' | 'update' | 'delete', string>;
}

export type DeleteOptions = { cascade?: boolean; yes?: boolean };

/** `--description ''` (or `--url ''`) clears the field. */
export const orNull = (value: string | undefined, current: string | null): string | null =>
  value === undefined ? current : value === '' ? null : value;

/** `--uploaded-before <date>` → `uploadedBefore`, as commander names the option. */
const keyOf = (flag: string) =>
  flag
    .split(' ')[0]!
    .replace(/^--/, '')
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** At least one field to change: one of `options` (`--name <name>`, ...) given. */
export function requireChanges(given: object, options: readonly Flag[]): void {
  const flags = options.map(([flag]) => flag.split(' ')[0]!);
  if (!flags.some((flag) => (given as Text)[keyOf(flag)] !== undefined)) {
    throw new UsageError(`Nothing to change: give ${flags.slice(0, -1).join(', ')} or ${flags.at(-1)}.`);
  }
}

/** A JSON document from a file, stdin (`-`) or the argument itself when it looks like JSON. */
export async function readJsonArgument(value: string, io: Io, what: string): Promise<unknown> {
  const inline = /^\s*[[{]/.test(value) || value === 'true' || value === 'false';
  let text: string;
  try {
    text = inline ? value : value === '-' ? await readAll(io.stdin) : await readFile(value, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read ${what} from ${value}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} in ${inline ? 'the argument' : value} is not valid JSON: ${(err as Error).message}`);
  }
}

async function schemaOption(value: string | undefined, io: Io): Promise<Record<string, unknown> | boolean | undefined> {
  if (value === undefined) return undefined;
  const schema = await readJsonArgument(value, io, 'The JSON Schema');
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new UsageError('The JSON Schema must be a JSON object or a boolean.');
  }
  return schema as Record<string, unknown> | boolean;
}

function imageTag(value: string, example: string) {
  const parts = splitImageTag(value);
  if (!parts) throw new UsageError(`'${value}' is not image:tag (e.g. ${example}).`);
  return parts;
}

type Catalogue = 'benchmarks' | 'sites' | 'flavors' | 'tags';
type Of<N extends Catalogue> = Resource<
  Awaited<ReturnType<Client[N]['get']>>,
  N extends 'flavors' ? Parameters<Client[N]['create']>[1] : Parameters<Client[N]['create']>[0],
  Parameters<Client[N]['update']>[1]
>;

export const benchmarks: Of<'benchmarks'> = {
  group: 'benchmarks',
  one: 'benchmark',
  ref: ['<benchmark>', 'id or image:tag'],
  resolve: (r, ref) => r.benchmark(ref),
  api: (client) => client.benchmarks,
  columns: benchmarkColumns,
  getColumns: [...benchmarkColumns, { header: 'json_schema', value: (b) => b.json_schema }],
  sort: BenchmarkSort.fields,
  filters: [
    ['--image <image>', 'exact container image, e.g. ghcr.io/org/bench', 'container_image'],
    ['--tag <tag>', 'exact container tag, e.g. 1.0', 'container_tag'],
  ],
  searchIn: 'the image, the tag or the description',
  getNote: ', with its JSON Schema',
  create: {
    args: [['<image:tag>', 'container image and tag, e.g. ghcr.io/org/bench:1.0']],
    options: [
      ['--schema <file>', 'JSON Schema of its results: a file, - for stdin, or inline JSON (default {}: any result)'],
      ['--description <text>', 'short description'],
      ['--url <url>', 'documentation URL'],
    ],
    body: async (o, io) => {
      const { image, tag } = imageTag(o.imageTag!, 'ghcr.io/org/bench:1.0');
      const json_schema = (await schemaOption(o.schema, io)) ?? {};
      return { container_image: image, container_tag: tag, json_schema, description: o.description ?? null, url: o.url ?? null };
    },
  },
  update: {
    options: [
      ['--name <image:tag>', 'new container image and tag'],
      ['--schema <file>', 'new JSON Schema of its results: a file, - for stdin, or inline JSON'],
      ['--description <text>', 'new description ("" clears it)'],
      ['--url <url>', 'new documentation URL ("" clears it)'],
    ],
    body: async (o, io) => {
      const renamed = o.name === undefined ? undefined : imageTag(o.name, 'ghcr.io/org/bench:1.1');
      const schema = await schemaOption(o.schema, io);
      return (current) => ({
        container_image: renamed?.image ?? current.container_image,
        container_tag: renamed?.tag ?? current.container_tag,
        json_schema: schema ?? current.json_schema,
        description: orNull(o.description, current.description),
        url: orNull(o.url, current.url),
      });
    },
  },
  remove: { blocked: 'with results', cascades: 'also delete every result of the benchmark', consequence: 'its results' },
  examples: {
    list: 'benchmarks benchmarks list --image ghcr.io/org/bench --sort -upload_datetime',
    search: 'benchmarks benchmarks search hpl gpu',
    get: 'benchmarks benchmarks get ghcr.io/org/bench:1.0\n  benchmarks benchmarks get 3f0c... --output json | jq .json_schema',
    create: 'benchmarks benchmarks create ghcr.io/org/bench:1.0 --schema schema.json --url https://org.example/bench',
    update:
      'benchmarks benchmarks update ghcr.io/org/bench:1.0 --schema schema-v2.json\n  benchmarks benchmarks update ghcr.io/org/bench:1.0 --description "" --url https://org.example/bench',
    delete: 'benchmarks benchmarks delete ghcr.io/org/bench:1.0\n  benchmarks benchmarks delete ghcr.io/org/bench:1.0 --cascade --yes',
  },
};

export const sites: Of<'sites'> = {
  group: 'sites',
  one: 'site',
  ref: ['<site>', 'id or name'],
  resolve: (r, ref) => r.site(ref),
  api: (client) => client.sites,
  columns: siteColumns,
  sort: SiteSort.fields,
  filters: [
    ['--name <name>', 'exact name', 'name'],
    ['--address <address>', 'exact address', 'address'],
  ],
  searchIn: 'the name, the address or the description',
  create: {
    args: [['<name>', 'institution name, unique']],
    options: [
      ['--address <address>', 'physical or virtual address', 'required'],
      ['--description <text>', 'short description'],
    ],
    body: (o) => ({ name: o.name!, address: o.address!, description: o.description ?? null }),
  },
  update: {
    options: [
      ['--name <name>', 'new name, unique'],
      ['--address <address>', 'new address'],
      ['--description <text>', 'new description ("" clears it)'],
    ],
    body: (o) => (current) => ({
      name: o.name ?? current.name,
      address: o.address ?? current.address,
      description: orNull(o.description, current.description),
    }),
  },
  remove: {
    blocked: 'with flavors or results',
    cascades: 'also delete its flavors and every result at the site',
    consequence: 'its flavors and results',
  },
  examples: {
    list: 'benchmarks sites list --status on_review',
    search: 'benchmarks sites search galicia',
    get: 'benchmarks sites get CESGA',
    create: 'benchmarks sites create CESGA --address "Santiago de Compostela, Spain"',
    update: 'benchmarks sites update CESGA --address "Avenida de Vigo, Santiago de Compostela, Spain"',
    delete: 'benchmarks sites delete CESGA\n  benchmarks sites delete CESGA --cascade --yes',
  },
};

const nameAndDescription = {
  body: (o: Text) => (current: { name: string; description: string | null }) => ({
    name: o.name ?? current.name,
    description: orNull(o.description, current.description),
  }),
};

export const flavors: Of<'flavors'> = {
  group: 'flavors',
  one: 'flavor',
  ref: ['<flavor>', 'id or site/flavor'],
  resolve: (r, ref) => r.flavor(ref),
  api: (client, siteId) => ({
    ...client.flavors,
    list: (query) => client.flavors.list(siteId, query),
    search: (query) => client.flavors.search(siteId, query),
    create: (body) => client.flavors.create(siteId, body),
  }),
  inSite: true,
  columns: flavorColumns,
  sort: FlavorSort.fields,
  filters: [['--name <name>', 'exact flavor name', 'name']],
  searchIn: 'the name or the description',
  create: {
    note: 'a flavor of a site for review (the site may itself be on review)',
    args: [['<name>', 'flavor name, unique within the site']],
    options: [['--description <text>', 'short description, e.g. "4 vCPU, 16 GiB"']],
    body: (o) => ({ name: o.name!, description: o.description ?? null }),
  },
  update: {
    note: 'its site and the other fields stay',
    options: [
      ['--name <name>', 'new name, unique within the site'],
      ['--description <text>', 'new description ("" clears it)'],
    ],
    ...nameAndDescription,
  },
  remove: { blocked: 'with results', cascades: 'also delete every result on the flavor', consequence: 'its results' },
  examples: {
    list: 'benchmarks flavors list CESGA',
    search: 'benchmarks flavors search CESGA gpu',
    get: 'benchmarks flavors get CESGA/c4.large',
    create: 'benchmarks flavors create CESGA c4.large --description "4 vCPU, 16 GiB"',
    update: 'benchmarks flavors update CESGA/c4.large --description "4 vCPU, 16 GiB, NVMe"',
    delete: 'benchmarks flavors delete CESGA/c4.large\n  benchmarks flavors delete CESGA/c4.large --cascade --yes',
  },
};

export const tags: Of<'tags'> = {
  group: 'tags',
  one: 'tag',
  ref: ['<tag>', 'id or name'],
  resolve: (r, ref) => r.tag(ref),
  api: (client) => client.tags,
  columns: tagColumns,
  sort: TagSort.fields,
  filters: [['--name <name>', 'exact name', 'name']],
  searchIn: 'the name or the description',
  create: {
    args: [['<name>', 'tag name, unique']],
    options: [['--description <text>', 'what the label means']],
    body: (o) => ({ name: o.name!, description: o.description ?? null }),
  },
  update: {
    options: [
      ['--name <name>', 'new name, unique'],
      ['--description <text>', 'new description ("" clears it)'],
    ],
    ...nameAndDescription,
  },
  remove: {
    blocked: 'carried by results',
    cascades: 'also remove the tag from the results that carry it (the results stay)',
    consequence: 'its links to results',
  },
  examples: {
    list: 'benchmarks tags list --output csv > tags.csv',
    search: 'benchmarks tags search gpu',
    get: 'benchmarks tags get gpu',
    create: 'benchmarks tags create gpu --description "ran on a GPU flavor"',
    update: 'benchmarks tags update nightly --description "run every night by CI"',
    delete: 'benchmarks tags delete nightly\n  benchmarks tags delete nightly --cascade --yes',
  },
};

const SITE: Flag = ['<site>', 'site id or name'];
const example = (text: string) => `\n${text.includes('\n') ? 'Examples' : 'Example'}:\n  ${text}`;
/** `<image:tag>` → `imageTag`: the option the positional argument becomes. */
const argKey = (arg: string) => keyOf(`--${arg.replace(/[<>.]/g, '').replace(/:([a-z])/g, '-$1')}`);

type Verb = 'list' | 'search' | 'get' | 'create' | 'update' | 'delete';
type Options = WithGlobals<ReviewFilterOptions & DeleteOptions & Text & { terms?: string[] }>;

/** The API of the resource; for flavors' list, search and create, bound to the site of `--site`. */
async function apiOf<T extends Item, C, U>(res: Resource<T, C, U>, ctx: Context, o: Options, verb: Verb) {
  const inSite = res.inSite && (verb === 'list' || verb === 'search' || verb === 'create');
  return res.api(ctx.client, inSite ? await new Resolver(ctx.client, { anyStatus: true }).site(o.site!) : '');
}

/** Before anything is looked up: without a terminal, `--yes` is required (exit 2). */
export function checkCanConfirm(io: Io, options: DeleteOptions, what: string): void {
  mustBeAbleToAsk(io, options.yes, `Deleting cannot be undone and there is no terminal to ask on: pass --yes to delete the ${what}.`);
}

/** Asks, then deletes. A referenced item without --cascade is one line naming what refers to it and the flag. */
export async function deleteItem(ctx: Context, options: DeleteOptions, described: string, remove: () => Promise<unknown>): Promise<void> {
  await confirm(ctx.io, options.yes, `Delete ${described}? This cannot be undone.`, 'Nothing deleted.');
  try {
    await remove();
  } catch (err) {
    if (!(err instanceof ConflictError && err.code === 'REFERENCED')) throw err;
    throw new CliError(
      err.detail.includes('?cascade=true')
        ? err.detail.replace(/add \?cascade=true to/, 'pass --cascade to')
        : `${err.detail} Pass --cascade to delete what refers to it too.`,
    );
  }
  ctx.info(`Deleted ${described}.`);
}

/** Runs a verb of a resource with commander's options (the positional arguments among them). */
export async function runVerb<T extends Item, C, U>(res: Resource<T, C, U>, verb: Verb, o: Options, io: Io): Promise<void> {
  if (verb === 'delete') checkCanConfirm(io, o, `${res.one} ${o.ref}`);
  if (verb === 'update') requireChanges(o, res.update.options);
  const created = verb === 'create' ? await res.create.body(o, io) : undefined;
  const merge = verb === 'update' ? await res.update.body(o, io) : undefined;
  await withContext(o, io, async (ctx) => {
    const api = await apiOf(res, ctx, o, verb);
    if (verb === 'list' || verb === 'search') {
      const filters = res.filters.flatMap(([flag, , parameter]) => (o[keyOf(flag)] ? [[parameter, o[keyOf(flag)]]] : []));
      const query = { ...(verb === 'search' ? { terms: o.terms } : Object.fromEntries(filters)), ...reviewQuery(o), ...pageQuery(o) };
      await ctx.printList(api[verb](query), res.columns, o);
      return;
    }
    if (created !== undefined) {
      const item = await api.create(created);
      ctx.info(`Created ${res.one} ${item.name} (${item.status === 'approved' ? 'approved' : 'waiting for review'}).`);
      return ctx.printItem(item, res.columns);
    }
    const id = await res.resolve(new Resolver(ctx.client, { anyStatus: true }), o.ref!);
    const current = await api.get(id);
    if (merge) {
      const updated = await api.update(id, merge(current));
      ctx.info(`Updated ${res.one} ${updated.name}.`);
      return ctx.printItem(updated, res.columns);
    }
    if (verb === 'get') return ctx.printItem(current, res.getColumns ?? res.columns);
    const described = `${res.one} ${current.name} (${id})${o.cascade ? ` and ${res.remove.consequence}` : ''}`;
    await deleteItem(ctx, o, described, () => api.delete(id, o.cascade ? { cascade: true } : undefined));
  });
}

function registerResource<T extends Item, C, U>(program: Command, res: Resource<T, C, U>): void {
  const parent = res.inSite ? `a site's ${res.group}` : res.group;
  const verb = (name: Verb, description: string, args: readonly Flag[]) => {
    const command = group(program, res.group).command(name).description(description);
    for (const [arg, help] of args) command.argument(arg, help);
    const positional = args.map(([arg]) => (arg === '<terms...>' ? 'terms' : arg === res.ref[0] ? 'ref' : argKey(arg)));
    return command
      .addHelpText('after', example(res.examples[name]))
      .action(runs((o: Options, io) => runVerb(res, name, o, io), positional));
  };
  const site = res.inSite ? [SITE] : [];
  const list = verb('list', `List ${parent} (approved ones unless --status says otherwise)`, site);
  for (const [flag, help] of res.filters) list.option(flag, help);
  const search = verb('search', `Search ${parent}: every term must occur in ${res.searchIn}`, [
    ...site,
    ['<terms...>', 'search terms (case-insensitive)'],
  ]);
  for (const command of [list, search]) addListOptions(addReviewFilters(command), res.sort);
  verb('get', `Show one ${res.one}${res.getNote ?? ''} (any status)`, [res.ref]);
  const create = verb(
    'create',
    `Submit ${res.create.note ?? `a ${res.one} for review (approved at once when an administrator submits it)`}`,
    [...site, ...res.create.args],
  );
  for (const [flag, help, required] of res.create.options) {
    if (required) create.requiredOption(flag, help);
    else create.option(flag, help);
  }
  const update = verb('update', `Change fields of a ${res.one} (admin); ${res.update.note ?? 'the others keep their values'}`, [res.ref]);
  for (const [flag, help] of res.update.options) update.option(flag, help);
  verb('delete', `Delete a ${res.one}, whatever its status (admin); one ${res.remove.blocked} needs --cascade`, [res.ref])
    .option('--cascade', res.remove.cascades)
    .option('-y, --yes', 'do not ask for confirmation (needed without a terminal)');
}

/** The six verbs of every catalogue resource. */
export function register(program: Command): void {
  registerResource(program, benchmarks);
  registerResource(program, sites);
  registerResource(program, flavors);
  registerResource(program, tags);
}
