/** One attempt of a webhook delivery: the bodies of both formats, and the POST itself. */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { checkedLookup, refusal } from './addresses.ts';

/** The first bytes of an answer the deliveries log keeps. */
export const RESPONSE_BYTES = 1024;

export interface AlertEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_datetime: Date;
}

/** Standard Webhooks' body. */
export function standardBody(event: AlertEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.created_datetime.toISOString(), data: event.data });
}

const TITLES: Record<string, string> = {
  'change.detected': 'Change detected',
  'change.acknowledged': 'Change acknowledged',
  'change.dismissed': 'Change dismissed',
  'series.stale': 'Series stale',
  'series.resumed': 'Series resumed',
};

const named = (v: unknown): string | undefined =>
  typeof v === 'string'
    ? v
    : v && typeof v === 'object'
      ? (named((v as { name?: unknown }).name) ?? named((v as { id?: unknown }).id))
      : undefined;

/** A Slack incoming webhook's body: what changed where, and a link to the explorer (absolute with PUBLIC_URL). */
export function slackBody(event: AlertEvent, origin?: string): string {
  const d = event.data;
  const what = [d.benchmark, d.metric, d.site, d.flavor].map(named).filter(Boolean).join(' · ');
  const explorer = named((d.links as { explorer?: unknown } | undefined)?.explorer);
  const link = explorer && /^https?:/.test(explorer) ? explorer : explorer && origin ? `${origin}${explorer}` : undefined;
  const text = `${TITLES[event.type] ?? event.type}${what ? `: ${what}` : ''}`;
  const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: link ? `*${text}*\n<${link}|Open in the explorer>` : `*${text}*` } }];
  return JSON.stringify({ text, blocks });
}

export interface Sent {
  status: number | null;
  durationMs: number;
  /** The first RESPONSE_BYTES of the answer, as text. */
  response: string;
  error: string | null;
  /** Retry-After, in milliseconds from now; null when absent or unreadable. */
  retryAfterMs: number | null;
  /** The attempt was cut short by the process stopping: nothing to record. */
  aborted: boolean;
}

/** Retry-After in seconds or as an HTTP date, in milliseconds from now. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * POSTs `body` to `url`, connecting only to an address allowed, following no redirect, waiting at
 * most `timeoutMs` for the answer and its first bytes, and reading no more of it.
 */
export function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean; signal: AbortSignal },
): Promise<Sent> {
  const started = performance.now();
  const result = (fields: Partial<Sent>): Sent => ({
    status: null,
    response: '',
    error: null,
    retryAfterMs: null,
    aborted: false,
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });
  const target = new URL(url);
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  const why = isIP(literal) ? refusal(literal, options.allowPrivate) : null;
  if (why) return Promise.resolve(result({ error: `refused: ${literal} ${why}` }));
  return new Promise((resolve) => {
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      agent: false,
      lookup: checkedLookup(options.allowPrivate),
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    let settled = false;
    const finish = (sent: Sent) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      request.destroy();
      resolve(sent);
    };
    const timer = setTimeout(() => finish(result({ error: `no answer within ${options.timeoutMs} ms` })), options.timeoutMs);
    const onAbort = () => finish(result({ error: 'the server stopped', aborted: true }));
    options.signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (err: NodeJS.ErrnoException) => finish(result({ error: err.message })));
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const done = () => {
        const response = new TextDecoder().decode(Buffer.concat(chunks).subarray(0, RESPONSE_BYTES)).replaceAll('\u0000', '');
        const retryAfter = retryAfterMs(res.headers['retry-after']);
        finish(result({ status: res.statusCode ?? null, response, retryAfterMs: retryAfter }));
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= RESPONSE_BYTES) done();
      });
      res.on('end', done);
      res.on('error', done);
    });
    request.end(body);
  });
}
