/**
 * The filters of results (`results list`, `search`, `export`, `compare`), and their translation to
 * the query.
 */
import type { Command } from 'commander';
import type { Client } from '@benchmarks/sdk';
import { addListOptions, repeatable, type ListOptions } from '../../global-options.ts';
import { Resolver } from '../../resolve.ts';
import { ResultSort } from '@benchmarks/sdk/contract/results';

/** The filters alone, as `results export` and `compare` take them (no pages, no sort). */
export interface FilterOptions {
  benchmark?: string;
  site?: string;
  flavor?: string;
  tag?: string[];
  filter?: string[];
  uploadedBefore?: string;
  uploadedAfter?: string;
  executedBefore?: string;
  executedAfter?: string;
}

export interface ResultFilterOptions extends FilterOptions, ListOptions {
  mine?: boolean;
}

/** `--site`, `--flavor`, `--tag`, `--filter` and the dates (not `--benchmark`, whose meaning differs). */
export function addFilterOptions(command: Command): Command {
  return command
    .option('--site <site>', 'site id or name')
    .option('--flavor <flavor>', 'flavor id or site/flavor')
    .option('--tag <tag>', 'tag id or name; repeat for results carrying every one', repeatable)
    .option('--filter <expression>', "JSON filter 'path op value', path a.b or json.a.b, op one of == > < >= <=; repeatable", repeatable)
    .option('--uploaded-before <date>', 'uploaded before this date or date-time')
    .option('--uploaded-after <date>', 'uploaded after this date or date-time')
    .option('--executed-before <date>', 'executed before this date or date-time')
    .option('--executed-after <date>', 'executed after this date or date-time');
}

export function addResultFilters(command: Command): Command {
  command.option('--benchmark <benchmark>', 'benchmark id or image:tag');
  addFilterOptions(command).option('--mine', 'only results I uploaded, hidden ones included');
  return addListOptions(command, ResultSort.fields);
}

/** The filters' query, names resolved to ids (items still on review too). */
export async function filterQuery(client: Client, options: FilterOptions) {
  const resolver = new Resolver(client, { anyStatus: true });
  const [benchmark_id, site_id, flavor_id, tags_ids] = await Promise.all([
    options.benchmark ? resolver.benchmark(options.benchmark) : undefined,
    options.site ? resolver.site(options.site) : undefined,
    options.flavor ? resolver.flavor(options.flavor) : undefined,
    options.tag?.length ? Promise.all(options.tag.map((t) => resolver.tag(t))) : undefined,
  ]);
  return {
    ...(benchmark_id ? { benchmark_id } : {}),
    ...(site_id ? { site_id } : {}),
    ...(flavor_id ? { flavor_id } : {}),
    ...(tags_ids ? { tags_ids } : {}),
    ...(options.filter?.length ? { filters: options.filter } : {}),
    ...(options.uploadedBefore ? { upload_before: options.uploadedBefore } : {}),
    ...(options.uploadedAfter ? { upload_after: options.uploadedAfter } : {}),
    ...(options.executedBefore ? { execution_before: options.executedBefore } : {}),
    ...(options.executedAfter ? { execution_after: options.executedAfter } : {}),
  };
}

/** `json` alone stays as it is (the server refuses it); a top-level key named json is json.json. */
export const metricPath = (metric: string) => (metric === 'json' || metric.startsWith('json.') ? metric : `json.${metric}`);
