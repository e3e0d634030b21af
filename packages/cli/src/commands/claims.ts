/** `claims list|get|approve|reject` (admin; `list --mine` for anyone registered). */
import { ClaimSort } from '@benchmarks/sdk/contract/claims';
import { Option, type Command } from 'commander';
import { claimColumns } from '../columns.ts';
import { addListOptions, pageQuery } from '../global-options.ts';
import { group, reviewQuery, runsInContext, type ReviewFilterOptions, type WithGlobals } from './common.ts';

type Options = WithGlobals<ReviewFilterOptions & { result?: string; mine?: boolean; id: string }>;

const VERBS = {
  get: ['Show one claim (admin)', '    # then `benchmarks results get <resource_id>`'],
  approve: ['Uphold a claim: the claimed result stays hidden (admin)', ''],
  reject: ['Reject a claim: it is removed, and the result restored once no claim is left (admin)', ''],
} as const;

const DONE = {
  approve: 'upheld: the result stays hidden',
  reject: 'rejected: the result is visible again unless another claim holds it',
};

export function register(program: Command): void {
  const claims = group(program, 'claims');
  const list = claims
    .command('list')
    .description('List claims waiting for review (admin), or with --mine the claims you filed')
    .addOption(new Option('--status <status>', 'on_review (default: waiting) or approved (upheld)').choices(['on_review', 'approved']))
    .option('--result <id>', 'claims against this result')
    .option('--uploaded-before <date>', 'filed before this date or date-time')
    .option('--uploaded-after <date>', 'filed after this date or date-time')
    .option('--mine', 'the claims I filed (any registered user)');
  addListOptions(list, ClaimSort.fields)
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks claims list\n  benchmarks claims approve <id>   # uphold: the result stays hidden\n  benchmarks claims reject <id>    # the result is restored',
    )
    .action(
      runsInContext(async (ctx, options: Options) => {
        const bounds = { ...reviewQuery(options), ...pageQuery(options) };
        const request = options.mine
          ? ctx.client.self.claims(bounds)
          : ctx.client.claims.list({
              ...bounds,
              ...(options.result ? { resource_type: 'result' as const, resource_id: options.result } : {}),
            });
        await ctx.printList(request, claimColumns, options);
      }),
    );
  for (const [verb, [description, note]] of Object.entries(VERBS) as [keyof typeof VERBS, (typeof VERBS)['get']][]) {
    claims
      .command(verb)
      .description(description)
      .argument('<id>', 'claim id')
      .addHelpText('after', `\nExample:\n  benchmarks claims ${verb} 3f0c9d2e-...${note}`)
      .action(
        runsInContext(async (ctx, options: Options) => {
          if (verb === 'get') return ctx.printItem(await ctx.client.claims.get(options.id), claimColumns);
          await ctx.client.claims[verb](options.id);
          ctx.info(`Claim ${options.id} ${DONE[verb]}.`);
        }),
      );
  }
}
