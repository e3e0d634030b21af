/**
 * The options every command shares, defined once, and how their values are chosen:
 * flag, then environment variable, then config file (profile), then default.
 */
import { Option, type Command, InvalidArgumentError } from 'commander';
import { apiBaseUrl } from '@benchmarks/sdk/url';
import { configPath, DEFAULT_PROFILE, loadConfig, OUTPUT_FORMATS, profileOf, type OutputFormat } from './config.ts';
import { UsageError } from './errors.ts';
import type { Io } from './io.ts';

export interface GlobalOptions {
  server?: string;
  token?: string;
  output?: string;
  profile?: string;
  quiet?: boolean;
  verbose?: boolean;
  wide?: boolean;
}

/** The resolved global settings of one invocation. */
export type Settings = Awaited<ReturnType<typeof resolveSettings>>;

/**
 * What `--output` accepts when parsed: the formats of every command, and `svg`, which only `compare`
 * draws (the other commands refuse it in {@link resolveSettings}, with a line saying so).
 */
const PARSED_FORMATS = [...OUTPUT_FORMATS, 'svg'];

/** How a command's settings differ from the others': its default output (`compare`: a table, piped too). */
export interface SettingDefaults {
  output?: OutputFormat;
}

export function addGlobalOptions(program: Command): void {
  program
    .option('-s, --server <url>', 'service address, its root or its /api/v1 URL (env BENCHMARKS_SERVER)')
    .option('--token <token>', 'access token to use instead of the stored login (env BENCHMARKS_TOKEN)')
    .addOption(
      new Option(
        '-o, --output <format>',
        'output format: table on a terminal, json when piped; ndjson: one JSON value a line; svg: compare only (env BENCHMARKS_OUTPUT)',
      ).choices(PARSED_FORMATS),
    )
    .option('-p, --profile <name>', `named server settings in the config file (env BENCHMARKS_PROFILE, default "${DEFAULT_PROFILE}")`)
    .option('-q, --quiet', 'no progress or hints on stderr, errors only (env BENCHMARKS_QUIET)')
    .option('-v, --verbose', 'log each HTTP request on stderr (env BENCHMARKS_VERBOSE)')
    .option('--wide', "tables: show every cell whole instead of fitting the terminal's width (env BENCHMARKS_WIDE)");
}

const set = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
const flag = (value: string | undefined) => (set(value) === undefined ? undefined : !/^(0|false|no|off)$/i.test(value!));

/** The API base URL of a server address; a UsageError when it is no http(s) URL. */
export function checkServer(server: string): string {
  try {
    return apiBaseUrl(server);
  } catch (err) {
    throw new UsageError(`Invalid server address '${server}': ${(err as Error).message}.`);
  }
}

export async function resolveSettings(options: GlobalOptions, io: Io, defaults: SettingDefaults = {}) {
  const path = configPath(io.env);
  const config = await loadConfig(path);
  const profile = set(options.profile) ?? set(io.env.BENCHMARKS_PROFILE) ?? config.profile ?? DEFAULT_PROFILE;
  const stored = profileOf(config, profile);

  const server = set(options.server) ?? set(io.env.BENCHMARKS_SERVER) ?? set(stored.server);
  const chosen = set(options.output) ?? set(io.env.BENCHMARKS_OUTPUT) ?? stored.output;
  const output = chosen ?? defaults.output ?? (io.isTTY.stdout ? 'table' : 'json');
  if (output === 'svg')
    throw new UsageError(
      '--output svg draws a chart: only `benchmarks compare` and `benchmarks changes` have one; use table, json or csv here.',
    );
  if (!(OUTPUT_FORMATS as readonly string[]).includes(output)) {
    throw new UsageError(`Unknown output format '${output}': use one of ${OUTPUT_FORMATS.join(', ')}.`);
  }
  return {
    /** As given (service root or its /api/v1 URL); undefined when none is configured. */
    server,
    /** A token given by flag, environment or config (not the stored login). */
    token: set(options.token) ?? set(io.env.BENCHMARKS_TOKEN) ?? set(stored.token),
    output: output as OutputFormat,
    /** Whether the output format was chosen (flag, environment or config file) rather than the default. */
    outputChosen: chosen !== undefined,
    profile,
    quiet: options.quiet ?? flag(io.env.BENCHMARKS_QUIET) ?? stored.quiet ?? false,
    verbose: options.verbose ?? flag(io.env.BENCHMARKS_VERBOSE) ?? stored.verbose ?? false,
    /** Tables show every cell whole, whatever the terminal's width. */
    wide: options.wide ?? flag(io.env.BENCHMARKS_WIDE) ?? stored.wide ?? false,
    configPath: path,
    config,
    /** The selected profile's settings (with the stored login, if any). */
    stored,
  };
}

// ---------------------------------------------------------------------------------------------
// Options of list commands

export interface ListOptions {
  page?: number;
  perPage?: number;
  sort?: string;
  all?: boolean;
}

export function positiveInteger(name: string, max?: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < 1 || (max !== undefined && n > max)) {
      throw new InvalidArgumentError(`${name} must be an integer from 1${max !== undefined ? ` to ${max}` : ''}.`);
    }
    return n;
  };
}

/** Collects a repeatable option into an array. */
export function repeatable(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** --page, --per-page, --sort when the list has `sortFields` (webhooks, watches and the feed have one order), --all. */
export function addListOptions(command: Command, sortFields?: readonly string[]): Command {
  command
    .option('--page <n>', 'page to show (1-indexed)', positiveInteger('--page'))
    .option('--per-page <n>', 'items per page, 1 to 100 (default 100)', positiveInteger('--per-page', 100));
  if (sortFields) command.option('--sort <terms>', `comma-separated fields, each optionally prefixed by + or - (${sortFields.join(', ')})`);
  return command.option('--all', 'follow every page and show every item');
}

/** `name,-date` → `+name,-date`: a term without a sign sorts ascending. */
export function sortQuery(sort: string | undefined): string | undefined {
  if (sort === undefined || sort.trim() === '') return undefined;
  return sort
    .split(',')
    .map((term) => term.trim())
    .filter(Boolean)
    .map((term) => (/^[+-]/.test(term) ? term : `+${term}`))
    .join(',');
}

/** The page, per_page and sort_by parameters of a list command's options. */
export function pageQuery(options: ListOptions): { page?: number; per_page?: number; sort_by?: string } {
  const query: { page?: number; per_page?: number; sort_by?: string } = {};
  if (options.page !== undefined) query.page = options.page;
  if (options.perPage !== undefined) query.per_page = options.perPage;
  const sort = sortQuery(options.sort);
  if (sort) query.sort_by = sort;
  return query;
}
