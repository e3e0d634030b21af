/** `webhooks create|list|deliveries|redeliver`: the endpoints that receive the alerts of your watches. */
import { Option, type Command } from 'commander';
import { webhookAttemptColumns, webhookColumns } from '../columns.ts';
import { addListOptions, pageQuery, type ListOptions } from '../global-options.ts';
import { group, runsInContext, type WithGlobals } from './common.ts';

const EVENTS = ['change.detected', 'change.acknowledged', 'change.dismissed', 'series.stale', 'series.resumed'] as const;

type Options = WithGlobals<ListOptions & { url: string; events?: string; format?: 'standard' | 'slack'; id: string; deliveryId: string }>;

export function register(program: Command): void {
  const webhooks = group(program, 'webhooks');
  webhooks
    .command('create')
    .description('Add a webhook endpoint; prints its signing secret, shown this once')
    .argument('<url>', 'http or https URL that receives the events')
    .option('--events <list>', `comma-separated event types (default: all of ${EVENTS.join(', ')})`)
    .addOption(new Option('--format <format>', 'standard (signed JSON) or slack (a Slack incoming webhook)').choices(['standard', 'slack']))
    .addHelpText('after', '\nExample:\n  benchmarks webhooks create https://ci.example.org/hooks/benchmarks --events change.detected')
    .action(
      runsInContext(async (ctx, options: Options) => {
        const events = options.events?.split(',').map((e) => e.trim()) as (typeof EVENTS)[number][] | undefined;
        const created = await ctx.client.webhooks.create({
          url: options.url,
          ...(events ? { events } : {}),
          ...(options.format ? { format: options.format } : {}),
        });
        ctx.info(`Created webhook ${created.id}. Its signing secret, shown this once: ${created.secret}`);
        ctx.printItem(created, webhookColumns);
      }),
    );
  addListOptions(webhooks.command('list').description('List your webhook endpoints, oldest first'))
    .addHelpText('after', '\nExample:\n  benchmarks webhooks list')
    .action(runsInContext((ctx, options: Options) => ctx.printList(ctx.client.webhooks.list(pageQuery(options)), webhookColumns, options)));
  const deliveries = webhooks
    .command('deliveries')
    .description("List the attempts of a webhook's deliveries, newest first: status, duration, answer")
    .argument('<id>', 'webhook id');
  addListOptions(deliveries)
    .addHelpText('after', '\nExample:\n  benchmarks webhooks deliveries 3f0c9d2e-... -o json')
    .action(
      runsInContext((ctx, o: Options) => ctx.printList(ctx.client.webhooks.deliveries(o.id, pageQuery(o)), webhookAttemptColumns, o)),
    );
  webhooks
    .command('redeliver')
    .description('Deliver an event again, with the same webhook-id')
    .argument('<id>', 'webhook id')
    .argument('<delivery-id>', 'delivery id, from `benchmarks webhooks deliveries`')
    .addHelpText('after', '\nExample:\n  benchmarks webhooks redeliver 3f0c9d2e-... 7a1b...')
    .action(
      runsInContext(async (ctx, options: Options) => {
        await ctx.client.webhooks.redeliver(options.id, options.deliveryId);
        ctx.info(`Delivery ${options.deliveryId} will be attempted again.`);
      }),
    );
}
