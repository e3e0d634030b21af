import { countPlaceholders } from './bound-driver.ts';

/**
 * A tiny builder for WHERE clauses whose values are always bound parameters (`?` placeholders, as
 * `em.execute(sql, params)` takes them: db/bound-driver.ts). User input never reaches SQL text.
 * An array is one value at a placeholder with its type: `where.add('r.site_id = any(?::uuid[])', ids)`.
 */
export class Where {
  private readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Adds `sql` (with `?` placeholders) and its values. */
  add(sql: string, ...values: unknown[]): this {
    const placeholders = countPlaceholders(sql);
    if (placeholders !== values.length) throw new Error(`Where.add: ${placeholders} placeholders for ${values.length} values in ${sql}`);
    this.clauses.push(sql);
    this.params.push(...values);
    return this;
  }

  /** `where a and b ...`, or '' when there is no clause. */
  toSql(): string {
    return this.clauses.length ? `where ${this.clauses.map((c) => `(${c})`).join(' and ')}` : '';
  }

  /** This WHERE and one more condition (a cursor's predicate), leaving this one as it is; itself when `extra` is null. */
  and(extra: { sql: string; params: readonly unknown[] } | null): { sql: string; params: unknown[] } {
    if (!extra) return { sql: this.toSql(), params: [...this.params] };
    return {
      sql: this.clauses.length ? `${this.toSql()} and (${extra.sql})` : `where ${extra.sql}`,
      params: [...this.params, ...extra.params],
    };
  }
}

/** Escapes LIKE wildcards so a search term matches literally (with `escape '\\'`). */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
