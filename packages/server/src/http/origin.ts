import type Koa from 'koa';
import type { AppContext } from '../services/app-context.ts';

/** The origin clients use to reach us: the configured public URL, or what the trusted proxy says. */
export function publicOrigin(ctx: Koa.Context, app: AppContext): string {
  if (app.config.publicUrl) return app.config.publicUrl;
  const prefix = app.config.trustProxy ? (ctx.get('x-forwarded-prefix') || '').replace(/\/+$/, '') : '';
  return `${ctx.protocol}://${ctx.host}${prefix}`;
}
