import { createHash } from 'node:crypto';
import type { Configuration } from '@mikro-orm/core';
import { AbstractSqlDriver, PostgreSqlConnection, PostgreSqlPlatform, Utils } from '@mikro-orm/postgresql';
import { refuseIfAbandoned, trackConnections } from './request-scope.ts';

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

/** Marks a statement as one of a bounded set of texts run often: the driver prepares it (below). */
export const PREPARED_MARK = '/* prepared */ ';

/** `sql` marked for preparation; only for texts from a bounded set (never one per request). */
export function prepared(sql: string): string {
  return PREPARED_MARK + sql;
}

const MAX_PREPARED = 500;
const preparedNames = new Map<string, string>();

/**
 * The name under which a marked statement is prepared on each pooled connection (pg prepares a
 * name once per connection, then sends only Bind and Execute: PostgreSQL neither parses nor plans
 * it again). The name is derived from the text, so a text always gets the same name. Past
 * MAX_PREPARED distinct texts, new ones run unnamed: a connection never holds more than that.
 */
export function preparedName(sql: string): string | undefined {
  if (!sql.startsWith(PREPARED_MARK)) return undefined;
  let name = preparedNames.get(sql);
  if (!name && preparedNames.size < MAX_PREPARED) {
    name = `p_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    preparedNames.set(sql, name);
  }
  return name;
}

type Knexish = { toSQL(): { sql: string; bindings?: readonly unknown[] }; client: { transacting?: unknown } };

/**
 * MikroORM 6 inlines every parameter into the SQL text (escaped literals) before sending it. This
 * connection sends the SQL with its `?` placeholders and the values as bound parameters instead
 * (knex turns them into $1, $2, … for pg), so user input never becomes SQL text.
 */
export class BoundParametersConnection extends PostgreSqlConnection {
  /** The pool's connections are recorded per request, so that an abandoned request's statements can be cancelled. */
  override createKnex(): void {
    super.createKnex();
    trackConnections(this.getKnex().client as never);
  }

  // The base signature is generic over knex types; `any` keeps this override assignable to it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override async execute(queryOrKnex: any, params: any[] = [], method: any = 'all', ctx?: any, loggerContext?: any): Promise<any> {
    await this.ensureConnection();
    refuseIfAbandoned();
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
        const name = preparedName(sql);
        // knex passes options through to pg's query config.
        if (name) query.options({ name });
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
