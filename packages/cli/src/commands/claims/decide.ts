/** `claims get|approve|reject <id>`: one claim by id. */
import type { Command } from 'commander';
import { claimColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { group, runs, type WithGlobals } from '../common.ts';

type Options = WithGlobals<{ id: string }>;

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
  for (const [verb, [description, note]] of Object.entries(VERBS) as [keyof typeof VERBS, (typeof VERBS)['get']][]) {
    group(program, 'claims')
      .command(verb)
      .description(description)
      .argument('<id>', 'claim id')
      .addHelpText('after', `\nExample:\n  benchmarks claims ${verb} 3f0c9d2e-...${note}`)
      .action(
        runs(
          (options: Options, io) =>
            withContext(options, io, async (ctx) => {
              if (verb === 'get') return ctx.printItem(await ctx.client.claims.get(options.id), claimColumns);
              await ctx.client.claims[verb](options.id);
              ctx.info(`Claim ${options.id} ${DONE[verb]}.`);
            }),
          ['id'],
        ),
      );
  }
}
