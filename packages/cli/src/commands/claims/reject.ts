import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string }>;

export function register(program: Command): void {
  group(program, 'claims')
    .command('reject')
    .description('Reject a claim: it is removed, and the result restored once no claim is left (admin)')
    .argument('<id>', 'claim id')
    .addHelpText('after', '\nExample:\n  benchmarks claims reject 3f0c9d2e-...')
    .action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    await ctx.client.claims.reject(options.id);
    ctx.info(`Claim ${options.id} rejected: the result is visible again unless another claim holds it.`);
  });
}
