import { Option, type Command } from 'commander';
import { webhookColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

const EVENTS = ['change.detected', 'change.acknowledged', 'change.dismissed', 'series.stale', 'series.resumed'] as const;

export type Options = WithGlobals<{ url: string; events?: string; format?: 'standard' | 'slack' }>;

export function register(program: Command): void {
  group(program, 'webhooks')
    .command('create')
    .description('Add a webhook endpoint; prints its signing secret, shown this once')
    .argument('<url>', 'http or https URL that receives the events')
    .option('--events <list>', `comma-separated event types (default: all of ${EVENTS.join(', ')})`)
    .addOption(new Option('--format <format>', 'standard (signed JSON) or slack (a Slack incoming webhook)').choices(['standard', 'slack']))
    .addHelpText('after', '\nExample:\n  benchmarks webhooks create https://ci.example.org/hooks/benchmarks --events change.detected')
    .action(runs(run, ['url']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const events = options.events?.split(',').map((e) => e.trim()) as (typeof EVENTS)[number][] | undefined;
    const created = await ctx.client.webhooks.create({
      url: options.url,
      ...(events ? { events } : {}),
      ...(options.format ? { format: options.format } : {}),
    });
    ctx.info(`Created webhook ${created.id}. Its signing secret, shown this once: ${created.secret}`);
    ctx.printItem(created, webhookColumns);
  });
}
