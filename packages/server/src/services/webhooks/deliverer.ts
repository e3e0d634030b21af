/**
 * The delivery of alert events to webhook endpoints, run by every server process
 * (docs/webhooks.md, "Delivery"). Each poll fans new events out into deliveries, one statement
 * that marks the events and creates their deliveries together (a crash loses none and repeats
 * none), then claims the deliveries due with `for update skip locked`, leasing each for longer
 * than an attempt may take: no two processes make the same attempt at once, and the attempts of a
 * process that died are taken up by another once their lease ends.
 */
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../core/logger.ts';
import { formatTimestamp } from '../../core/format.ts';
import { transaction } from '../../db/transaction.ts';
import { type AlertEvent, type Sent, send, slackBody, standardBody } from './send.ts';
import { signature } from './signing.ts';
import type { ServerConfig } from '../../config.ts';
import type { DisposalStack } from '../../core/disposal.ts';

/** Attempts in flight per process: a slow receiver holds one place only. */
export const MAX_IN_FLIGHT = 16;
/** The longest wait between two attempts, and the cap of Retry-After. */
export const MAX_RETRY_DELAY_MS = 6 * 3600_000;
/** Events fanned out per poll. */
const FAN_OUT_BATCH = 500;

export interface DeliveryOptions {
  pollIntervalMs: number;
  timeoutMs: number;
  attempts: number;
  retryPeriodMs: number;
  retryDelayMs: number;
  allowPrivate: boolean;
  /** PUBLIC_URL: the explorer's links in Slack messages are made absolute with it. */
  origin?: string;
}

interface Claimed {
  id: string;
  attempts: number;
  first_attempt_datetime: Date | null;
  event_id: string;
  type: string;
  data: Record<string, unknown>;
  created_datetime: Date;
  endpoint_id: string;
  url: string;
  format: 'standard' | 'slack';
  secrets: string[];
}

const FAN_OUT_SQL = `
  with events as (
    select id, user_iss, user_sub, type from alert_event where not fanned_out
    order by created_datetime limit ${FAN_OUT_BATCH} for update skip locked
  ), marked as (
    update alert_event a set fanned_out = true from events e where a.id = e.id returning a.id
  ), created as (
    insert into webhook_delivery (id, event_id, endpoint_id)
    select gen_random_uuid(), e.id, w.id from events e
    join webhook_endpoint w on w.user_iss = e.user_iss and w.user_sub = e.user_sub and w.enabled and e.type = any(w.events)
    on conflict do nothing returning 1
  )
  select (select count(*) from marked)::int as events, (select count(*) from created)::int as deliveries`;

const CLAIM_SQL = `
  update webhook_delivery d set next_attempt_datetime = now() + ? * interval '1 millisecond'
  from (
    select d2.id from webhook_delivery d2 join webhook_endpoint w2 on w2.id = d2.endpoint_id and w2.enabled
    where d2.state = 'pending' and d2.next_attempt_datetime <= now()
    order by d2.next_attempt_datetime limit ? for update of d2 skip locked
  ) due, alert_event e, webhook_endpoint w
  where d.id = due.id and e.id = d.event_id and w.id = d.endpoint_id
  returning d.id, d.attempts, d.first_attempt_datetime, e.id as event_id, e.type, e.data, e.created_datetime,
    w.id as endpoint_id, w.url, w.format,
    array_remove(array[w.secret, case when w.previous_secret_until > now() then w.previous_secret end], null) as secrets`;

export class WebhookDeliverer {
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  /** The last poll claimed as many attempts as it had places: more may be due. */
  #backlog = false;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly options: DeliveryOptions,
  ) {}

  /** Polls every `pollIntervalMs`, and as soon as half its places are free while a backlog lasts; 0: this process delivers nothing. */
  start(): this {
    if (this.options.pollIntervalMs > 0) this.#schedule(0);
    return this;
  }

  #schedule(ms: number): void {
    if (this.#stop.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#polling = this.poll().finally(() => {
        this.#polling = undefined;
        this.#schedule(this.#drained() ? 0 : this.options.pollIntervalMs);
      });
    }, ms);
  }

  /** Whether more attempts were due than there were places, and half the places are free again: poll now. */
  #drained(): boolean {
    return this.#backlog && this.#inFlight.size <= MAX_IN_FLIGHT / 2;
  }

  /** Fans new events out, then starts the attempts due, as many as there are free places. */
  async poll(): Promise<void> {
    try {
      const em = this.orm.em.fork();
      const [fanned] = await em.execute<{ events: number; deliveries: number }[]>(FAN_OUT_SQL);
      if (fanned!.events) this.logger.debug('alert events fanned out', { ...fanned });
      const free = MAX_IN_FLIGHT - this.#inFlight.size;
      if (free <= 0 || this.#stop.signal.aborted) return;
      const lease = 2 * this.options.timeoutMs + 1000;
      const claimed = await em.execute<Claimed[]>(CLAIM_SQL, [lease, free]);
      this.#backlog = claimed.length === free;
      for (const delivery of claimed) {
        const attempt = this.#attempt(delivery).finally(() => {
          this.#inFlight.delete(delivery.id);
          if (!this.#polling && this.#drained()) this.#schedule(0);
        });
        this.#inFlight.set(delivery.id, attempt);
      }
    } catch (err) {
      this.logger.warn('webhook deliveries not polled', { error: (err as Error).message });
    }
  }

  async #attempt(d: Claimed): Promise<void> {
    const started = new Date();
    const event: AlertEvent = { id: d.event_id, type: d.type, data: d.data, created_datetime: new Date(d.created_datetime) };
    const body = d.format === 'slack' ? slackBody(event, this.options.origin) : standardBody(event);
    const timestamp = Math.floor(started.getTime() / 1000);
    const headers = {
      'webhook-id': d.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature(d.secrets, d.event_id, timestamp, body),
      'user-agent': 'benchmarks-webhooks',
    };
    const sent = await send(d.url, headers, body, { ...this.options, signal: this.#stop.signal });
    try {
      await this.#record(d, started, sent);
    } catch (err) {
      this.logger.warn('webhook attempt not recorded', { delivery: d.id, error: (err as Error).message });
    }
  }

  /** The delay before the next attempt: Retry-After when given, else a random one up to retryDelay × 2^(attempts-1) (full jitter). */
  #delay(attempts: number, sent: Sent): number {
    if (sent.retryAfterMs !== null) return Math.min(sent.retryAfterMs, MAX_RETRY_DELAY_MS);
    return Math.random() * Math.min(MAX_RETRY_DELAY_MS, this.options.retryDelayMs * 2 ** Math.min(attempts - 1, 30));
  }

  async #record(d: Claimed, started: Date, sent: Sent): Promise<void> {
    const em = this.orm.em.fork();
    if (sent.aborted) {
      // Stopping: the attempt is given back, for this process's next start or another process.
      await em.execute('update webhook_delivery set next_attempt_datetime = now() where id = ?', [d.id]);
      return;
    }
    const attempts = d.attempts + 1;
    const first = d.first_attempt_datetime ? new Date(d.first_attempt_datetime) : started;
    const ok = sent.status !== null && sent.status >= 200 && sent.status < 300;
    const outcome = sent.status === null ? sent.error : `status ${sent.status}`;
    let reason: string | null = null;
    if (sent.status === 410) reason = `Disabled on ${formatTimestamp(started)}: the endpoint answered 410 Gone.`;
    else if (!ok && attempts >= this.options.attempts && Date.now() - first.getTime() >= this.options.retryPeriodMs) {
      const hours = ((Date.now() - first.getTime()) / 3600_000).toFixed(1);
      reason = `Disabled on ${formatTimestamp(started)}: ${attempts} attempts to deliver event ${d.event_id} over ${hours} h failed; the last: ${outcome}.`;
    }
    const state = ok ? 'succeeded' : reason ? 'failed' : 'pending';
    const next = new Date(Date.now() + (state === 'pending' ? this.#delay(attempts, sent) : 0));
    await transaction(em, async (tx) => {
      await tx.execute(
        'update webhook_delivery set state = ?, attempts = ?, first_attempt_datetime = ?, next_attempt_datetime = ? where id = ?',
        [state, attempts, first, next, d.id],
      );
      await tx.execute(
        `insert into webhook_attempt (id, delivery_id, endpoint_id, attempted_datetime, status, duration_ms, response, error)
         values (?, ?, ?, ?, ?, ?, ?, ?)`,
        [randomUUID(), d.id, d.endpoint_id, started, sent.status, sent.durationMs, sent.response, ok ? null : sent.error],
      );
      if (reason) {
        await tx.execute('update webhook_endpoint set enabled = false, disabled_reason = ? where id = ? and enabled', [
          reason,
          d.endpoint_id,
        ]);
      }
    });
    if (reason) this.logger.warn('webhook endpoint disabled', { endpoint: d.endpoint_id, reason });
    else this.logger.debug('webhook attempt', { delivery: d.id, event: d.event_id, attempts, state, outcome });
  }

  /** Stops polling, cuts the attempts in flight short (they are given back) and waits for them. */
  async close(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    await this.#polling;
    await Promise.all(this.#inFlight.values());
  }
}

/** The webhooks domain: the outbox delivered until the app stops. */
export function startWebhooks(stack: DisposalStack, orm: MikroORM, logger: Logger, config: ServerConfig): void {
  const deliverer = new WebhookDeliverer(orm, logger, {
    pollIntervalMs: config.webhookPollIntervalMs,
    timeoutMs: config.webhookTimeoutMs,
    attempts: config.webhookAttempts,
    retryPeriodMs: config.webhookRetryPeriodMs,
    retryDelayMs: config.webhookRetryDelayMs,
    allowPrivate: config.webhookAllowPrivate,
    origin: config.publicUrl,
  });
  stack.use('webhook deliveries', deliverer.start(), (w) => w.close());
}
