/** `users list|search|remove` (admin). */
import type { Command } from 'commander';
import { userColumns } from '../columns.ts';
import { confirm, mustBeAbleToAsk } from '../confirm.ts';
import { withContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { UserSort } from '@benchmarks/sdk/contract/admin';
import { addListOptions, pageQuery, type ListOptions } from '../global-options.ts';
import type { Io } from '../io.ts';
import { group, runs, runsInContext, type WithGlobals } from './common.ts';

type Options = WithGlobals<ListOptions & { iss?: string; sub?: string; email?: string; terms: string[]; yes?: boolean }>;

const addSelectors = (command: Command) =>
  command.option('--iss <issuer>', 'exact issuer').option('--sub <subject>', 'exact subject').option('--email <email>', 'exact email');

const selectorsOf = (o: Options) => ({
  ...(o.iss ? { iss: o.iss } : {}),
  ...(o.sub ? { sub: o.sub } : {}),
  ...(o.email ? { email: o.email } : {}),
});

async function remove(options: Options, io: Io): Promise<void> {
  const selectors = selectorsOf(options);
  const described = Object.entries(selectors)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  if (!described) throw new UsageError('Say whom to remove with --iss, --sub and/or --email.');
  mustBeAbleToAsk(io, options.yes, `Removing users cannot be undone: pass --yes to remove ${described}.`);
  await confirm(io, options.yes, `Remove every user with ${described}? Their email is erased.`, 'Nothing removed.');
  await withContext(options, io, async (ctx) => {
    await ctx.client.users.remove(selectors);
    ctx.info(`Removed the users with ${described} (if any).`);
  });
}

export function register(program: Command): void {
  const users = group(program, 'users');
  const list = addSelectors(users.command('list').description('List registered users, removed ones included (admin)'));
  addListOptions(list, UserSort.fields)
    .addHelpText('after', '\nExample:\n  benchmarks users list --email someone@example.org')
    .action(
      runsInContext((ctx, o: Options) => ctx.printList(ctx.client.users.list({ ...selectorsOf(o), ...pageQuery(o) }), userColumns, o)),
    );
  const search = users
    .command('search')
    .description('Search users: every term must occur in the email or the subject (admin)')
    .argument('<terms...>', 'search terms (case-insensitive)');
  addListOptions(search, UserSort.fields)
    .addHelpText('after', '\nExample:\n  benchmarks users search example.org')
    .action(
      runsInContext((ctx, o: Options) => ctx.printList(ctx.client.users.search({ terms: o.terms, ...pageQuery(o) }), userColumns, o)),
    );
  addSelectors(
    users.command('remove').description('Remove the users matching every selector: their email is erased, their uploads kept (admin)'),
  )
    .option('-y, --yes', 'do not ask for confirmation (needed without a terminal)')
    .addHelpText('after', '\nExample:\n  benchmarks users remove --iss https://aai.example.org --sub 1234 --yes')
    .action(runs(remove));
}
