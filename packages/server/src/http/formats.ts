/** The formats of an answer that is also a table (CSV) and a chart (SVG): compare and changes. */
import type Koa from 'koa';
import { reply, type Reply } from '../core/reply.ts';

export type Format = 'json' | 'csv' | 'svg';

/** `format` when given, else what `Accept` prefers among JSON, CSV and SVG (JSON for `*\/*` or none; `Vary` says so). */
export function chosenFormat(koa: Koa.Context, format: Format | undefined): Format {
  if (format) return format;
  koa.vary('Accept');
  const type = koa.accepts('application/json', 'text/csv', 'image/svg+xml');
  return type === 'text/csv' ? 'csv' : type === 'image/svg+xml' ? 'svg' : 'json';
}

/** The CSV or SVG answer `render` gives (a chart is cacheable for a minute); undefined for JSON. */
export function textReply(format: Format, render: (format: 'csv' | 'svg') => string): Reply | undefined {
  if (format === 'csv') return reply(200, render(format), { 'Content-Type': 'text/csv; charset=utf-8; header=present' });
  if (format === 'svg') {
    return reply(200, render(format), { 'Content-Type': 'image/svg+xml; charset=utf-8', 'Cache-Control': 'public, max-age=60' });
  }
}
