/**
 * What command files share: how a commander action reaches `run(options, io)`, the resource groups
 * (`benchmarks benchmarks list`, ...), and the filters of reviewed resources.
 */
import { Option, type Command } from 'commander';
import type { Io } from '../io.ts';
import { positiveInteger, type GlobalOptions, type ListOptions } from '../global-options.ts';

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
 * positional arguments, and calls `run(options, io)`.
 */
export function runs<O>(run: (options: O, io: Io) => Promise<unknown>, positional: readonly string[] = []) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args.at(-1) as Command;
    const values: Record<string, unknown> = { ...command.optsWithGlobals() };
    positional.forEach((name, i) => {
      values[name] = args[i];
    });
    const io = ios.get(rootOf(command));
    if (!io) throw new Error('The program has no io attached');
    await run(values as O, io);
  };
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
  changes: "Find change points over time in one metric of a benchmark's results; the feed of change records and their triage",
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

/** --page, --per-page and --all, for lists with one order (no --sort): webhooks, watches, the feed. */
export function addPageOptions(command: Command): Command {
  return command
    .option('--page <n>', 'page to show (1-indexed)', positiveInteger('--page'))
    .option('--per-page <n>', 'items per page, 1 to 100 (default 100)', positiveInteger('--per-page', 100))
    .option('--all', 'follow every page and show every item');
}

export const pageOf = (o: ListOptions) => ({
  ...(o.page === undefined ? {} : { page: o.page }),
  ...(o.perPage === undefined ? {} : { per_page: o.perPage }),
});

// ---------------------------------------------------------------------------------------------
// Filters of benchmarks, sites, flavors and tags lists

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

export function reviewQuery(options: ReviewFilterOptions): {
  status?: 'approved' | 'on_review';
  upload_before?: string;
  upload_after?: string;
} {
  return {
    ...(options.status ? { status: options.status } : {}),
    ...(options.uploadedBefore ? { upload_before: options.uploadedBefore } : {}),
    ...(options.uploadedAfter ? { upload_after: options.uploadedAfter } : {}),
  };
}
