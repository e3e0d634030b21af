import { Option, type Command } from 'commander';
import { claimColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery, type ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<
  ListOptions & { status?: 'on_review' | 'approved'; result?: string; uploadedBefore?: string; uploadedAfter?: string; mine?: boolean }
>;

export function register(program: Command): void {
  const command = group(program, 'claims')
    .command('list')
    .description('List claims waiting for review (admin), or with --mine the claims you filed')
    .addOption(new Option('--status <status>', 'on_review (default: waiting) or approved (upheld)').choices(['on_review', 'approved']))
    .option('--result <id>', 'claims against this result')
    .option('--uploaded-before <date>', 'filed before this date or date-time')
    .option('--uploaded-after <date>', 'filed after this date or date-time')
    .option('--mine', 'the claims I filed (any registered user)');
  addListOptions(command, ['upload_datetime', 'status', 'id']).addHelpText(
    'after',
    '\nExamples:\n  benchmarks claims list\n  benchmarks claims approve <id>   # uphold: the result stays hidden\n  benchmarks claims reject <id>    # the result is restored',
  );
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const bounds = {
      ...(options.status ? { status: options.status } : {}),
      ...(options.uploadedBefore ? { upload_before: options.uploadedBefore } : {}),
      ...(options.uploadedAfter ? { upload_after: options.uploadedAfter } : {}),
      ...pageQuery(options),
    };
    const request = options.mine
      ? ctx.client.self.claims(bounds)
      : ctx.client.claims.list({ ...bounds, ...(options.result ? { resource_type: 'result' as const, resource_id: options.result } : {}) });
    await ctx.printList(request, claimColumns, options);
  });
}
