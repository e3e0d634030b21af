/**
 * `@benchmarks/sdk/webhooks`: checks that a webhook request came from the service (Standard
 * Webhooks 1.0). Node only (node:crypto), hence its own entry point, apart from the browser-safe client.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far `webhook-timestamp` may be from now, in seconds: older requests may be replays. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** A request that is not a genuine, recent webhook of the service; `message` says which check failed. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** The body of every webhook (format `standard`). */
export interface WebhookEvent {
  type: 'change.detected' | 'change.acknowledged' | 'change.dismissed' | 'series.stale' | 'series.resumed';
  /** When the event happened, ISO 8601. */
  timestamp: string;
  data: Record<string, unknown>;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  const value =
    typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(name)
      : Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) throw new WebhookVerificationError(`The ${name} header is missing.`);
  return text;
}

/**
 * Checks a webhook request: its `webhook-signature` must hold an HMAC-SHA256 of
 * `webhook-id.webhook-timestamp.body` under `secret` (one of them, during a rotation), and its
 * timestamp must be within 5 minutes of now. Pass the body exactly as received (not re-serialised).
 * Returns the parsed body; throws WebhookVerificationError otherwise.
 * @example
 * import { verifyWebhook } from '@benchmarks/sdk/webhooks';
 * const event = verifyWebhook(process.env.WEBHOOK_SECRET, req.headers, rawBody);
 * if (event.type === 'change.detected') console.log(event.data);
 */
export function verifyWebhook(secret: string, headers: HeaderBag, body: string | Uint8Array, now = new Date()): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const seconds = /^\d+$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!(Math.abs(now.getTime() / 1000 - seconds) <= WEBHOOK_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError(
      `The webhook-timestamp ${timestamp} is more than ${WEBHOOK_TOLERANCE_SECONDS} s from now: a replay, or a wrong clock.`,
    );
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest();
  const matches = signatures.split(' ').some((s) => {
    const [version, value = ''] = s.split(',');
    const given = Buffer.from(value, 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No webhook-signature matches: another secret, or the body was changed.');
  return JSON.parse(text) as WebhookEvent;
}
