/** `changes acknowledge|dismiss|reopen <id> [--note TEXT]`: the same steps, three verbs. */
import type { Command } from 'commander';
import { changeRecordColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Decision = 'acknowledge' | 'dismiss' | 'reopen';
export type Options = WithGlobals<{ id: string; note?: string }>;

const WHAT: Record<Decision, [description: string, done: string]> = {
  acknowledge: ['Acknowledge a change record as expected: the CI gate passes it', 'Acknowledged'],
  dismiss: ['Dismiss a change record as not real: the CI gate passes it', 'Dismissed'],
  reopen: ['Reopen an acknowledged or dismissed change record: the CI gate fails on it again', 'Reopened'],
};

export function register(program: Command): void {
  for (const decision of Object.keys(WHAT) as Decision[]) registerDecision(program, decision);
}

function registerDecision(program: Command, decision: Decision): void {
  group(program, 'changes')
    .command(decision)
    .description(`${WHAT[decision][0]} (its watch's owner or an administrator)`)
    .argument('<id>', 'change record id, from `benchmarks changes feed`')
    .option('--note <text>', 'why, kept with who decided and when (at most 1000 characters)')
    .addHelpText('after', `\nExample:\n  benchmarks changes ${decision} 3f0c9d2e-... --note 'new compiler, expected'`)
    .action(runs((options: Options, io: Io) => decide(decision, options, io), ['id']));
}

export async function decide(decision: Decision, options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const record = await ctx.client.changes[decision](options.id, options.note);
    ctx.info(`${WHAT[decision][1]} change ${record.id}.`);
    ctx.printItem(record, changeRecordColumns);
  });
}
