import type { Command } from 'commander';
import { benchmarkColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from '../common.ts';

export const SORT_FIELDS = ['name', 'container_image', 'container_tag', 'status', 'upload_datetime', 'description', 'url', 'id'];

export type Options = WithGlobals<ReviewFilterOptions & { image?: string; tag?: string }>;

export function register(program: Command): void {
  const command = group(program, 'benchmarks')
    .command('list')
    .description('List benchmarks (approved ones unless --status says otherwise)')
    .option('--image <image>', 'exact container image, e.g. ghcr.io/org/bench')
    .option('--tag <tag>', 'exact container tag, e.g. 1.0');
  addReviewFilters(command);
  addListOptions(command, SORT_FIELDS).addHelpText(
    'after',
    '\nExample:\n  benchmarks benchmarks list --image ghcr.io/org/bench --sort -upload_datetime',
  );
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const request = ctx.client.benchmarks.list({
      ...(options.image ? { container_image: options.image } : {}),
      ...(options.tag ? { container_tag: options.tag } : {}),
      ...reviewQuery(options),
      ...pageQuery(options),
    });
    await ctx.printList(request, benchmarkColumns, options);
  });
}
