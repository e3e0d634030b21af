/**
 * The SQL seam: every statement, the ORM's and the services' alike, reaches PostgreSQL here, as a
 * text with placeholders and its values sent apart. MikroORM 6 writes values into the text itself
 * (`Platform.formatQuery`) with no option to bind them: this connection overrides `execute`, the one
 * public method all statements go through, using only what the base class offers its subclasses.
 *
 * Rules of the seam (docs/architecture.md, "The SQL seam"):
 * - `?` is a value, sent as `$n` (`??` an identifier, `\\?` a literal question mark: knex's rules).
 * - An array is ONE value: PostgreSQL receives it as an array literal, so the statement's text is the
 *   same whatever the array's length. Its placeholder carries the array's type, `= any(?::uuid[])`,
 *   `unnest(?::text[])`; an array anywhere else (`array[?]`, `in (?)`) is refused with an error
 *   naming the statement, before anything is sent.
 * - `prepared(sql)` marks a text from a bounded set run often: pg prepares it once per connection.
 */
import { createHash } from 'node:crypto';
import type { AnyEntity, Configuration, EntityData, LoggingOptions, QueryResult, Transaction } from '@mikro-orm/core';
import { AbstractSqlDriver, PostgreSqlConnection, PostgreSqlPlatform, type Knex } from '@mikro-orm/postgresql';
import { refuseIfAbandoned, trackConnections } from './request-scope.ts';

/** A statement's placeholders, in order, by knex's rules: `?` a value, `??` an identifier; `\\?` is none. */
function placeholders(sql: string): { kind: 'value' | 'identifier'; start: number; end: number }[] {
  const found: { kind: 'value' | 'identifier'; start: number; end: number }[] = [];
  for (const m of sql.matchAll(/\\?\?\??/g)) {
    if (m[0] === '\\?') continue;
    found.push({ kind: m[0] === '??' ? 'identifier' : 'value', start: m.index, end: m.index + m[0].length });
  }
  return found;
}

/** How many values `sql` takes (identifiers included). */
export function countPlaceholders(sql: string): number {
  return placeholders(sql).length;
}

/** The type an array placeholder must carry: `?::uuid[]`, `?::timestamptz[]`. */
const ARRAY_CAST = /^::[a-z_][a-z0-9_]*\[\]/i;

/** What knex and pg can bind: anything but undefined, functions and symbols. */
function isBindable(value: unknown): value is Knex.Value {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

/**
 * The values of `sql`, checked against its placeholders: as many, none undefined, every array at a
 * placeholder with an array cast. A mistake here is the code's: a plain Error (a 500).
 */
export function bindValues(sql: string, params: readonly unknown[]): Knex.Value[] {
  const marks = placeholders(sql);
  if (marks.length !== params.length) {
    throw new Error(`SQL seam: ${params.length} values for ${marks.length} placeholders in: ${sql}`);
  }
  marks.forEach((mark, i) => {
    const value = params[i];
    if (!isBindable(value)) throw new Error(`SQL seam: value ${i + 1} is ${typeof value} in: ${sql}`);
    if (mark.kind === 'value' && Array.isArray(value) && !ARRAY_CAST.test(sql.slice(mark.end))) {
      throw new Error(
        `SQL seam: the array bound at placeholder ${i + 1} needs an array cast (\`= any(?::uuid[])\`, \`unnest(?::text[])\`); ` +
          `arrays are one parameter, never expanded, in: ${sql}`,
      );
    }
  });
  return params.filter(isBindable);
}

/** `sql` with its `?` as `$1`, `$2`, ..., its values checked by `bindValues`, for a plain pg client (no `??` there). */
export function numbered(sql: string, params: readonly unknown[]): { text: string; values: Knex.Value[] } {
  const values = bindValues(sql, params);
  let n = 0;
  const text = sql.replace(/\\?\?\??/g, (mark) => {
    if (mark === '\\?') return '?';
    if (mark === '??') throw new Error(`SQL seam: identifiers (??) are not supported on a plain client, in: ${sql}`);
    return `$${++n}`;
  });
  return { text, values };
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
 * The name a marked statement is prepared under on each connection (pg prepares it once, then only
 * binds and executes it), derived from the text. Past MAX_PREPARED texts, new ones run unnamed.
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

/**
 * Whether a knex builder was bound to a transaction (`qb.transacting(trx)`), read as knex sets it at
 * run time: its types declare no `transacting` on a client, nor a client on a Raw.
 */
function boundToTransaction(query: Knex.QueryBuilder | Knex.Raw): boolean {
  const client: unknown = Reflect.get(query, 'client');
  return typeof client === 'object' && client !== null && 'transacting' in client && client.transacting === true;
}

/** The result shapes `execute` may answer (MikroORM's declaration). */
type ExecuteResult = QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[];

/** PostgreSQL with bound parameters: the connection of `BoundParametersDriver`. */
export class BoundParametersConnection extends PostgreSqlConnection {
  /** Whether marked statements are prepared by name (the driver's setting, per ORM). */
  protected readonly prepares: boolean = true;

  /** The pool's connections are recorded per request, so that an abandoned request's statements can be cancelled. */
  override createKnex(): void {
    super.createKnex();
    const client: Knex.Client = this.getKnex().client;
    trackConnections(client, this.config.get('clientUrl')!);
  }

  override async execute<T extends ExecuteResult = EntityData<AnyEntity>[]>(
    query: string | Knex.QueryBuilder | Knex.Raw,
    params: unknown[] = [],
    method: 'all' | 'get' | 'run' = 'all',
    ctx?: Transaction,
    loggerContext?: LoggingOptions,
  ): Promise<T> {
    await this.ensureConnection();
    refuseIfAbandoned();
    let sql: string;
    if (typeof query === 'string') {
      sql = query;
    } else {
      // A knex builder (MikroORM's migrator passes some): its own text and bindings, and its transaction.
      ctx ??= boundToTransaction(query) ? query : undefined;
      const compiled = query.toSQL();
      sql = compiled.sql;
      params = [...compiled.bindings];
    }
    sql = this.config.get('onQuery')(sql, params);
    const values = bindValues(sql, params);
    const name = this.prepares ? preparedName(sql) : undefined;
    // Logged with placeholders, without values: values may carry user data.
    return this.executeQuery(
      sql,
      async () => {
        const raw = this.getKnex().raw(sql, values);
        // knex passes options through to pg's query config: a name makes pg prepare the statement.
        if (name) raw.options({ name });
        if (ctx) raw.transacting(ctx);
        return this.transformRawResult<T>(await raw, method);
      },
      { query: sql, ...loggerContext },
    );
  }
}

/** The PostgreSQL driver with bound parameters: MikroORM's PostgreSqlDriver with the connection above. */
export class BoundParametersDriver extends AbstractSqlDriver<BoundParametersConnection, PostgreSqlPlatform> {
  constructor(config: Configuration, connection: typeof BoundParametersConnection = BoundParametersConnection) {
    super(config, new PostgreSqlPlatform(), connection, ['knex', 'pg']);
  }
}

/** Settings of the seam that belong to one ORM (one pool), never to the process. */
export interface SeamOptions {
  /**
   * Whether marked statements are prepared by name (PREPARED_STATEMENTS, default true); behind
   * PgBouncer in transaction mode the next statement may reach a connection that never prepared it.
   */
  preparedStatements?: boolean;
}

/** The driver class for MikroORM's `driver` option, with `options` for every connection of that ORM. */
export function boundParametersDriver(options: SeamOptions = {}): new (config: Configuration) => BoundParametersDriver {
  if (options.preparedStatements ?? true) return BoundParametersDriver;
  class UnpreparedConnection extends BoundParametersConnection {
    protected override readonly prepares = false;
  }
  return class UnpreparedDriver extends BoundParametersDriver {
    constructor(config: Configuration) {
      super(config, UnpreparedConnection);
    }
  };
}
