import type { Command } from 'commander';
import { resultColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { addResultFilters, resultQuery, type ResultFilterOptions } from './filters.ts';

export type Options = WithGlobals<ResultFilterOptions>;

export function register(program: Command): void {
  const command = group(program, 'results').command('list').description('List results (hidden ones are left out, except with --mine)');
  addResultFilters(command).addHelpText(
    'after',
    `
Examples:
  benchmarks results list --benchmark ghcr.io/org/bench:1.0 --filter 'machine.cpu.count >= 4' --sort -json.result.score
  benchmarks results list --flavor CESGA/c4.large --executed-after 2025-01-01 --all --output csv > results.csv`,
  );
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const query = await resultQuery(ctx.client, options);
    const request = options.mine ? ctx.client.self.results(query) : ctx.client.results.list(query);
    await ctx.printList(request, resultColumns, options);
  });
}
