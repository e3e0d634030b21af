import type { TestServer } from './harness.ts';

/** Counts the statements containing `marker` that the server sends until `stop()` (the ORM's onQuery hook). */
export function countStatements(t: TestServer, marker: string): { readonly sent: number; stop(): void } {
  const config = t.server.context.orm.config;
  const original = config.get('onQuery');
  let sent = 0;
  config.set('onQuery', (sql: string, params: readonly unknown[]) => {
    if (sql.includes(marker)) sent++;
    return original(sql, params as unknown[]);
  });
  return {
    get sent() {
      return sent;
    },
    stop: () => config.set('onQuery', original),
  };
}
