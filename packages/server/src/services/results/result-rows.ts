/**
 * The columns of the tables a result lives in, as every writer inserts them: uploads (uploads.ts),
 * tag edits (results.ts), claims (catalogue/claims.ts) and `import-origin`. Each writer builds its
 * statement with `insertFromArrays` and its values with `columnArrays`, so a column added by a
 * migration is added here once and the row type of every writer then requires it;
 * test/result-rows.test.ts fails while these lists differ from the migrated tables.
 *
 * Every insert is one statement whatever the number of rows: one array per column, read by
 * `unnest` (an array is one bound value, db/bound-driver.ts).
 */

/** The TypeScript value of each SQL type used below (a timestamp as a Date or an ISO text; jsonb as its JSON text). */
interface SqlValues {
  uuid: string;
  text: string;
  jsonb: string;
  timestamptz: Date | string;
  boolean: boolean;
}

type Columns = Readonly<Record<string, keyof SqlValues>>;

/** A row to insert into a table of `Columns`: every column, typed. */
export type RowOf<C extends Columns> = { readonly [K in keyof C]: SqlValues[C[K]] };

export const RESULT_COLUMNS = {
  id: 'uuid',
  benchmark_id: 'uuid',
  site_id: 'uuid',
  flavor_id: 'uuid',
  json: 'jsonb',
  execution_datetime: 'timestamptz',
  upload_datetime: 'timestamptz',
  uploader_iss: 'text',
  uploader_sub: 'text',
  deleted: 'boolean',
  hidden: 'boolean',
} as const satisfies Columns;

export const RESULT_TAG_COLUMNS = { result_id: 'uuid', tag_id: 'uuid' } as const satisfies Columns;

export const CLAIM_COLUMNS = {
  id: 'uuid',
  resource_type: 'text',
  resource_id: 'uuid',
  message: 'text',
  status: 'text',
  upload_datetime: 'timestamptz',
  uploader_iss: 'text',
  uploader_sub: 'text',
} as const satisfies Columns;

export type ResultRow = RowOf<typeof RESULT_COLUMNS>;
export type ResultTagRow = RowOf<typeof RESULT_TAG_COLUMNS>;
export type ClaimRow = RowOf<typeof CLAIM_COLUMNS>;

/**
 * `insert into <table> (<columns>) select … from unnest(<p>::<type>[], …) as u (<columns>)`, the
 * placeholder of the n-th array (0-based) written by `param` (`?` on the pool, `$n+1` on a plain
 * client), then `rest`: more of the `from` clause, a `where`, `on conflict`, `returning`. Table and
 * column names are fixed text, never user input.
 */
export function insertFromArrays(table: string, columns: Columns, param: (index: number) => string, rest = ''): string {
  const names = Object.keys(columns);
  const arrays = Object.values(columns).map((type, i) => `${param(i)}::${type}[]`);
  return (
    `insert into ${table} (${names.join(', ')}) select ${names.map((n) => `u.${n}`).join(', ')} ` +
    `from unnest(${arrays.join(', ')}) as u (${names.join(', ')})${rest ? ` ${rest}` : ''}`
  );
}

/** The values of `insertFromArrays`: one array per column of `columns`, in its order. */
export function columnArrays<C extends Columns>(columns: C, rows: readonly RowOf<C>[]): unknown[][] {
  return Object.keys(columns).map((name) => rows.map((row) => row[name as keyof C]));
}
