/**
 * What command files share: how a commander action reaches `run(options, io)` (or `run(ctx, options)`),
 * the resource groups (`benchmarks benchmarks list`, ...), and the filters of reviewed resources.
 */
import { Option, type Command } from 'commander';
import { withContext, type Context } from '../context.ts';
import type { GlobalOptions, ListOptions } from '../global-options.ts';
import type { Io } from '../io.ts';

const ios = new WeakMap<Command, Io>();

export function attachIo(program: Command, io: Io): void {
  ios.set(program, io);
}

function rootOf(command: Command): Command {
  let c = command;
  while (c.parent) c = c.parent;
  return c;
}

/**
 * The commander action of a command: gathers its options with the global ones, names its
 * positional arguments (`positional`, else as declared: `<delivery-id>` is `deliveryId`), and calls
 * `run(options, io)`.
 */
export function runs<O>(run: (options: O, io: Io) => Promise<unknown>, positional?: readonly string[]) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args.at(-1) as Command;
    const values: Record<string, unknown> = { ...command.optsWithGlobals() };
    const names = positional ?? command.registeredArguments.map((a) => a.name().replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()));
    names.forEach((name, i) => {
      values[name] = args[i];
    });
    const io = ios.get(rootOf(command));
    if (!io) throw new Error('The program has no io attached');
    await run(values as O, io);
  };
}

/** The action of a command that runs in a context (its client closed at the end): `run(ctx, options)`. */
export function runsInContext<O extends GlobalOptions>(run: (ctx: Context, options: O) => Promise<unknown>) {
  return runs((options: O, io) => withContext(options, io, (ctx) => run(ctx, options)));
}

const GROUPS: Record<string, string> = {
  benchmarks: 'Benchmarks: a container image and tag, with the JSON Schema of its results',
  sites: 'Sites: the places benchmarks run',
  flavors: "Flavors: a site's virtual machine templates",
  tags: 'Tags: labels of results',
  results: 'Results: list, search, export, upload, tag and claim benchmark results',
  review: 'Review submissions waiting for an administrator (admin)',
  claims: 'Claims against results (admin)',
  users: 'Registered users (admin)',
  watch: 'Your watches: series the server keeps segmented, each change point a record',
  webhooks: 'Your webhook endpoints, which receive the alerts of your watches',
  config: 'Read and change the config file (profiles)',
};

/** The resource command `name` under the program, created on first use. */
export function group(program: Command, name: keyof typeof GROUPS & string): Command {
  const existing = program.commands.find((c) => c.name() === name);
  if (existing) return existing;
  return program.command(name).description(GROUPS[name] ?? name);
}

export type WithGlobals<O> = O & GlobalOptions;

// ---------------------------------------------------------------------------------------------
// Review status and upload dates: the catalogue's lists, `review list` and `claims list`

export interface ReviewFilterOptions extends ListOptions {
  status?: 'approved' | 'on_review';
  uploadedBefore?: string;
  uploadedAfter?: string;
}

export function addReviewFilters(command: Command): Command {
  return command
    .addOption(new Option('--status <status>', 'review status (default approved)').choices(['approved', 'on_review']))
    .option('--uploaded-before <date>', 'uploaded before this date or date-time (2024-05-01, 2024-05-01T12:00:00Z)')
    .option('--uploaded-after <date>', 'uploaded after this date or date-time');
}

export function reviewQuery(options: ReviewFilterOptions) {
  return {
    ...(options.status ? { status: options.status } : {}),
    ...(options.uploadedBefore ? { upload_before: options.uploadedBefore } : {}),
    ...(options.uploadedAfter ? { upload_after: options.uploadedAfter } : {}),
  };
}
