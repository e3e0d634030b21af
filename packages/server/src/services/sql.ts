/**
 * A tiny builder for WHERE clauses whose values are always bound parameters (knex `?` placeholders,
 * as taken by `em.getConnection().execute(sql, params)`). User input never reaches SQL text.
 */
export class Where {
  private readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Adds `sql` (with `?` placeholders) and its values. */
  add(sql: string, ...values: unknown[]): this {
    const placeholders = (sql.match(/\?/g) ?? []).length;
    if (placeholders !== values.length) throw new Error(`Where.add: ${placeholders} placeholders for ${values.length} values in ${sql}`);
    this.clauses.push(sql);
    this.params.push(...values);
    return this;
  }

  /** `where a and b ...`, or '' when there is no clause. */
  toSql(): string {
    return this.clauses.length ? `where ${this.clauses.map((c) => `(${c})`).join(' and ')}` : '';
  }
}

/** Escapes LIKE wildcards so a search term matches literally (with `escape '\\'`). */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
