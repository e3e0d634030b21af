import type { Configuration } from '@mikro-orm/core';
import { AbstractSqlDriver, PostgreSqlConnection, PostgreSqlPlatform, Utils } from '@mikro-orm/postgresql';

/**
 * MikroORM's own inlining turns an array value into a comma-separated list (`in (?)` → `in (a, b)`,
 * `array[?]` → `array[a, b]`); keep those semantics with bound values by expanding the placeholder.
 * `\\?` (a literal question mark) and `??` (an identifier) are left as they are.
 */
export function expandArrays(sql: string, params: readonly unknown[]): { sql: string; params: unknown[] } {
  if (!params.some(Array.isArray)) return { sql, params: [...params] };
  let out = '';
  const values: unknown[] = [];
  let j = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === '\\' && sql[i + 1] === '?') {
      out += '\\?';
      i++;
    } else if (c === '?' && sql[i + 1] === '?') {
      out += '??';
      values.push(params[j++]);
      i++;
    } else if (c === '?') {
      const value = params[j++];
      if (Array.isArray(value)) {
        out += value.map(() => '?').join(', ');
        values.push(...value);
      } else {
        out += '?';
        values.push(value);
      }
    } else {
      out += c;
    }
  }
  return { sql: out, params: values };
}

type Knexish = { toSQL(): { sql: string; bindings?: readonly unknown[] }; client: { transacting?: unknown } };

/**
 * MikroORM 6 inlines every parameter into the SQL text (escaped literals) before sending it. This
 * connection sends the SQL with its `?` placeholders and the values as bound parameters instead
 * (knex turns them into $1, $2, … for pg), so user input never becomes SQL text.
 */
export class BoundParametersConnection extends PostgreSqlConnection {
  // The base signature is generic over knex types; `any` keeps this override assignable to it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override async execute(queryOrKnex: any, params: any[] = [], method: any = 'all', ctx?: any, loggerContext?: any): Promise<any> {
    await this.ensureConnection();
    let sql: string;
    if (Utils.isObject(queryOrKnex)) {
      const knexQuery = queryOrKnex as Knexish;
      ctx ??= knexQuery.client.transacting ? knexQuery : null;
      const compiled = knexQuery.toSQL();
      sql = compiled.sql;
      params = [...(compiled.bindings ?? [])];
    } else {
      sql = queryOrKnex;
    }
    sql = this.config.get('onQuery')(sql, params);
    ({ sql, params } = expandArrays(sql, params));
    // Logged without values: parameters may carry user data.
    const logged = (this as unknown as { getSql(q: string, f: string, c: unknown): string }).getSql(sql, sql, loggerContext);
    return this.executeQuery(
      logged,
      async () => {
        const query = this.getKnex().raw(sql, params as never[]);
        if (ctx) query.transacting(ctx);
        const res = await query;
        return this.transformRawResult(res, method);
      },
      { query: sql, params, ...loggerContext },
    );
  }
}

/** The PostgreSQL driver with bound parameters. */
export class BoundParametersDriver extends AbstractSqlDriver<PostgreSqlConnection, PostgreSqlPlatform> {
  constructor(config: Configuration) {
    super(config, new PostgreSqlPlatform(), BoundParametersConnection as never, ['knex', 'pg']);
  }
}
