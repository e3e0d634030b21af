/** `review approve|reject <kind> <ref...>`: the same steps, two verbs; names work as ids do. */
import { Argument, type Command } from 'commander';
import type { Client } from '@benchmarks/sdk';
import { withContext } from '../../context.ts';
import { CliError, describeKnown } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { KINDS, type Kind } from './list.ts';

export type Decision = 'approve' | 'reject';
export type Options = WithGlobals<{ kind: Kind; ids: string[] }>;

const namespaces = (client: Client) => ({ benchmark: client.benchmarks, site: client.sites, flavor: client.flavors, tag: client.tags });

export function register(program: Command): void {
  registerDecision(program, 'approve');
  registerDecision(program, 'reject');
}

function registerDecision(program: Command, decision: Decision): void {
  group(program, 'review')
    .command(decision)
    .description(
      decision === 'approve'
        ? 'Approve items on review: they become visible to everyone (admin)'
        : 'Reject items on review: they are deleted (admin)',
    )
    .addArgument(new Argument('<kind>', 'kind of the items').choices(KINDS))
    .argument('<refs...>', 'ids (as `review list` shows them) or names: image:tag, a site or tag name, site/flavor')
    .addHelpText(
      'after',
      `\nExamples:\n  benchmarks review ${decision} benchmark ghcr.io/org/bench:1.0\n  benchmarks review ${decision} flavor CESGA/c4.large\n  benchmarks review ${decision} site 3f0c9d2e-...`,
    )
    .action(runs((options: Options, io: Io) => decide(decision, options, io), ['kind', 'ids']));
}

export async function decide(decision: Decision, options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const namespace = namespaces(ctx.client)[options.kind];
    // Items on review are what is decided on: a name finds them whatever their status.
    const resolver = new Resolver(ctx.client, { anyStatus: true });
    let failed = 0;
    for (const ref of options.ids) {
      try {
        const id = await resolver[options.kind](ref);
        await namespace[decision](id);
        ctx.info(`${decision === 'approve' ? 'Approved' : 'Rejected'} ${options.kind} ${ref === id ? id : `${ref} (${id})`}.`);
      } catch (err) {
        // One item's problem must not hide the others'; a refusal to the caller stops everything.
        const known = describeKnown(err);
        if (known?.exitCode !== 1 || options.ids.length === 1) throw err;
        failed++;
        ctx.warn(`Could not ${decision} ${options.kind} ${ref}: ${known.message}`);
      }
    }
    if (failed)
      throw new CliError(`${failed} of ${options.ids.length} items could not be ${decision === 'approve' ? 'approved' : 'rejected'}.`);
  });
}
