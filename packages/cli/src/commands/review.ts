/** `review list|approve|reject`: the items waiting for an administrator; names work as ids do. */
import { SubmitSort } from '@benchmarks/sdk/contract/admin';
import { Argument, Option, type Command } from 'commander';
import { NotFoundError, type Client } from '@benchmarks/sdk';
import { submitColumns, type Submit } from '../columns.ts';
import type { Context } from '../context.ts';
import { CliError, describeKnown } from '../errors.ts';
import { addListOptions, pageQuery, type ListOptions } from '../global-options.ts';
import { Resolver } from '../resolve.ts';
import { group, reviewQuery, runsInContext, type ReviewFilterOptions, type WithGlobals } from './common.ts';

const KINDS = ['benchmark', 'site', 'flavor', 'tag'] as const;
type Kind = (typeof KINDS)[number];
type Decision = 'approve' | 'reject';
type Options = WithGlobals<ListOptions & ReviewFilterOptions & { type?: Kind; kind: Kind; refs: string[] }>;

const namespaces = (client: Client) => ({ benchmark: client.benchmarks, site: client.sites, flavor: client.flavors, tag: client.tags });

async function list(ctx: Context, options: Options): Promise<void> {
  const request = ctx.client.submissions.list({
    ...(options.type ? { resource_type: options.type } : {}),
    ...reviewQuery(options),
    ...pageQuery(options),
  });
  const names = new Map<string, string>();
  await ctx.printList(request, submitColumns(names), options, (items) => lookUpNames(ctx, items, names));
}

/** Each item's name, one GET each (an item rejected meanwhile has none). */
async function lookUpNames(ctx: Context, items: Submit[], names: Map<string, string>): Promise<void> {
  const kinds = namespaces(ctx.client);
  await Promise.all(
    items.map(async (s) => {
      const item = await kinds[s.resource_type].get(s.resource_id).catch((err) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      if (item) names.set(s.resource_id, item.name);
    }),
  );
}

async function decide(decision: Decision, ctx: Context, options: Options): Promise<void> {
  const namespace = namespaces(ctx.client)[options.kind];
  // Items on review are what is decided on: a name finds them whatever their status.
  const resolver = new Resolver(ctx.client, { anyStatus: true });
  let failed = 0;
  for (const ref of options.refs) {
    try {
      const id = await resolver[options.kind](ref);
      await namespace[decision](id);
      ctx.info(`${decision === 'approve' ? 'Approved' : 'Rejected'} ${options.kind} ${ref === id ? id : `${ref} (${id})`}.`);
    } catch (err) {
      // One item's problem must not hide the others'; a refusal to the caller stops everything.
      const known = describeKnown(err);
      if (known?.exitCode !== 1 || options.refs.length === 1) throw err;
      failed++;
      ctx.warn(`Could not ${decision} ${options.kind} ${ref}: ${known.message}`);
    }
  }
  if (failed)
    throw new CliError(`${failed} of ${options.refs.length} items could not be ${decision === 'approve' ? 'approved' : 'rejected'}.`);
}

export function register(program: Command): void {
  const review = group(program, 'review');
  const listCommand = review
    .command('list')
    .description('List the benchmarks, sites, flavors and tags waiting for review (admin)')
    .addOption(new Option('--type <kind>', 'only this kind').choices(KINDS))
    .option('--uploaded-before <date>', 'uploaded before this date or date-time')
    .option('--uploaded-after <date>', 'uploaded after this date or date-time');
  addListOptions(listCommand, SubmitSort.fields)
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks review list --type site\n  benchmarks review approve site <id>\n  benchmarks sites get <id>    # to look at it first',
    )
    .action(runsInContext(list));
  for (const decision of ['approve', 'reject'] as const) {
    review
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
      .action(runsInContext((ctx, options: Options) => decide(decision, ctx, options)));
  }
}
