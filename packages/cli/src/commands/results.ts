/** The `results` verbs: list, search, get, upload, tags set, claim and export. */
import type { Command } from 'commander';
import { claimColumns, resultColumns } from '../columns.ts';
import { withContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { pageQuery, repeatable } from '../global-options.ts';
import type { Io } from '../io.ts';
import { Resolver } from '../resolve.ts';
import { group, runs, runsInContext, type WithGlobals } from './common.ts';
import * as resultsExport from './results/export.ts';
import { addResultFilters, filterQuery, type ResultFilterOptions } from './results/filters.ts';
import * as upload from './results/upload.ts';

type Options = WithGlobals<ResultFilterOptions & { terms: string[]; id: string; message: string; clear?: boolean }>;

async function setTags(options: Options, io: Io): Promise<void> {
  const refs = options.tag ?? [];
  if (refs.length === 0 && !options.clear)
    throw new UsageError('Give the new tags with --tag (repeatable), or --clear to remove them all.');
  if (refs.length > 0 && options.clear) throw new UsageError('--clear and --tag exclude each other.');
  await withContext(options, io, async (ctx) => {
    const resolver = new Resolver(ctx.client);
    const ids = await Promise.all(refs.map((ref) => resolver.tag(ref)));
    await ctx.client.results.setTags(options.id, ids);
    ctx.info(ids.length ? `Result ${options.id} now has ${ids.length} tag(s).` : `Result ${options.id} has no tags now.`);
    ctx.printItem(await ctx.client.results.get(options.id), resultColumns);
  });
}

export function register(program: Command): void {
  const results = group(program, 'results');
  addResultFilters(results.command('list').description('List results (hidden ones are left out, except with --mine)'))
    .addHelpText(
      'after',
      `
Examples:
  benchmarks results list --benchmark ghcr.io/org/bench:1.0 --filter 'machine.cpu.count >= 4' --sort -json.result.score
  benchmarks results list --flavor CESGA/c4.large --executed-after 2025-01-01 --all --output csv > results.csv`,
    )
    .action(
      runsInContext(async (ctx, o: Options) => {
        const query = { ...(await filterQuery(ctx.client, o)), ...pageQuery(o) };
        await ctx.printList(o.mine ? ctx.client.self.results(query) : ctx.client.results.list(query), resultColumns, o);
      }),
    );
  const search = results
    .command('search')
    .description("Search results: every term must occur in the benchmark, site or flavor name, the site's address or a tag")
    .argument('<terms...>', 'search terms (case-insensitive)');
  addResultFilters(search)
    .addHelpText('after', "\nExample:\n  benchmarks results search CESGA gpu --filter 'result.score > 100'")
    .action(
      runsInContext(async (ctx, o: Options) => {
        const query = { terms: o.terms, ...(await filterQuery(ctx.client, o)), ...pageQuery(o) };
        await ctx.printList(o.mine ? ctx.client.self.results(query) : ctx.client.results.search(query), resultColumns, o);
      }),
    );
  results
    .command('get')
    .description('Show one result, hidden ones included')
    .argument('<id>', 'result id')
    .addHelpText('after', '\nExample:\n  benchmarks results get 3f0c9d2e-... --output json | jq .json')
    .action(runsInContext(async (ctx, o: Options) => ctx.printItem(await ctx.client.results.get(o.id), resultColumns)));
  upload.register(program);
  results
    .command('tags')
    .description('Tags of a result')
    .command('set')
    .description('Replace the tags of a result you uploaded (or any, as an administrator)')
    .argument('<id>', 'result id')
    .option('--tag <tag>', 'tag id or name; repeat for several', repeatable)
    .option('--clear', 'remove every tag')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks results tags set 3f0c9d2e-... --tag gpu --tag nightly\n  benchmarks results tags set 3f0c9d2e-... --clear',
    )
    .action(runs(setTags));
  results
    .command('claim')
    .description('File a claim against a result: it is hidden until an administrator reviews the claim')
    .argument('<id>', 'result id')
    .requiredOption('-m, --message <text>', 'what is wrong with the result')
    .addHelpText('after', '\nExample:\n  benchmarks results claim 3f0c9d2e-... --message "The score is ten times the hardware peak"')
    .action(
      runsInContext(async (ctx, o: Options) => {
        const claim = await ctx.client.results.claim(o.id, o.message);
        ctx.info(`Claim filed: result ${o.id} is hidden until an administrator reviews it.`);
        ctx.printItem(claim, claimColumns);
      }),
    );
  resultsExport.register(program);
}
