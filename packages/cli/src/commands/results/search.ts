import type { Command } from 'commander';
import { resultColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { addResultFilters, resultQuery, type ResultFilterOptions } from './filters.ts';

export type Options = WithGlobals<ResultFilterOptions & { terms: string[] }>;

export function register(program: Command): void {
  const command = group(program, 'results')
    .command('search')
    .description("Search results: every term must occur in the benchmark, site or flavor name, the site's address or a tag")
    .argument('<terms...>', 'search terms (case-insensitive)');
  addResultFilters(command).addHelpText('after', "\nExample:\n  benchmarks results search CESGA gpu --filter 'result.score > 100'");
  command.action(runs(run, ['terms']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const query = { terms: options.terms, ...(await resultQuery(ctx.client, options)) };
    const request = options.mine ? ctx.client.self.results(query) : ctx.client.results.search(query);
    await ctx.printList(request, resultColumns, options);
  });
}
