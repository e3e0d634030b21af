import type * as system from '@benchmarks/sdk/contract/system';
import type { Handlers } from '../http/handler.ts';
import { AppError } from '../core/errors.ts';

type Ops = Pick<typeof system, 'getHealth' | 'getReady' | 'getApiSpec' | 'getAuthConfig'>;

export function systemHandlers(spec: (ctx: import('koa').Context) => Record<string, unknown>): Handlers<Ops> {
  return {
    async getHealth({ services }) {
      return { status: 'ok' as const, version: services.version };
    },
    async getReady({ services }) {
      const database = services.databaseState?.();
      if (database?.state === 'restarting') {
        throw new AppError(503, 'DATABASE_RESTARTING', 'The embedded PostgreSQL ended unexpectedly and is being started again.', {
          headers: { 'Retry-After': '5' },
        });
      }
      if (database?.state === 'failed') {
        throw new AppError(
          503,
          'DATABASE_FAILED',
          `Given up: ${database.reason}. The server's log has PostgreSQL's last lines; restart the server once the cause is fixed.`,
          { extensions: { reason: database.reason } },
        );
      }
      let pending: string[];
      try {
        // On a connection of its own, not the pool: ready answers within about a second even
        // while every pooled connection is busy (db/control.ts).
        pending = await services.control.pendingMigrations();
      } catch {
        throw new AppError(503, 'DATABASE_UNAVAILABLE', 'The database is unavailable.', { headers: { 'Retry-After': '5' } });
      }
      if (pending.length) throw new AppError(503, 'MIGRATIONS_PENDING', `Migrations not applied yet: ${pending.join(', ')}.`);
      return { status: 'ready' as const, database: 'ok' as const, migrations: 'applied' as const };
    },
    async getAuthConfig({ services }) {
      const { config } = services;
      return {
        issuers: services.verifier?.issuers ?? [],
        audience: config.oidcAudience ?? null,
        device_client_id: config.oidcDeviceClientId ?? null,
        scopes: 'openid email profile offline_access eduperson_entitlement',
        terms_url: config.termsUrl,
        terms_version: config.termsVersion,
      };
    },
    async getApiSpec({ koa }) {
      return spec(koa) as { openapi: string };
    },
  };
}
