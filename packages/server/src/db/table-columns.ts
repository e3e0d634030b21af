/**
 * The columns of every table the service inserts into with its own SQL (uploads, tag edits, claims,
 * `import-origin`). Every writer builds its statement with `insertFromArrays` and its values with
 * `columnArrays`, so a column a migration adds is added here once and every writer's row type then
 * requires it; test/table-columns.test.ts compares each with its table and its entity. An insert is
 * one statement whatever the number of rows: one array per column, read by `unnest`.
 */

/** The TypeScript value of each SQL type used below (a timestamp as a Date or an ISO text; jsonb as its JSON text). */
interface SqlValues {
  uuid: string;
  text: string;
  jsonb: string;
  timestamptz: Date | string;
  boolean: boolean;
  numeric: number | string;
}

export type SqlType = keyof SqlValues;

/** A column: its SQL type, followed by ` null` when it may hold null. */
export type Column = SqlType | `${SqlType} null`;

type Columns = Readonly<Record<string, Column>>;

/** A table as written: its `columns` in insert order and `filledByDatabase`, those no writer gives (together, all of them). */
export interface Table<C extends Columns = Columns, N extends string = string> {
  readonly name: N;
  readonly columns: C;
  readonly filledByDatabase: readonly string[];
}

function table<const N extends string, const C extends Columns>(
  name: N,
  columns: C,
  filledByDatabase: readonly string[] = [],
): Table<C, N> {
  return { name, columns, filledByDatabase };
}

type ValueOf<T extends Column> = T extends `${infer S extends SqlType} null` ? SqlValues[S] | null : SqlValues[T & SqlType];

/** A row to insert into `T`: every column, typed. */
export type RowOf<T extends Table> = { readonly [K in keyof T['columns']]: ValueOf<T['columns'][K]> };

/** The SQL type of a column, without its ` null`. */
export function sqlType(column: Column): SqlType {
  return column.replace(/ null$/, '') as SqlType;
}

export const USER_TABLE = table('app_user', {
  iss: 'text',
  sub: 'text',
  email: 'text null',
  registration_datetime: 'timestamptz',
  terms_version: 'text',
  removed_datetime: 'timestamptz null',
});

/** The columns every reviewed upload (of the catalogue, a claim) ends with (entities/uploaded.ts). */
const REVIEWED = {
  status: 'text',
  upload_datetime: 'timestamptz',
  uploader_iss: 'text',
  uploader_sub: 'text',
} as const satisfies Columns;

export const BENCHMARK_TABLE = table('benchmark', {
  id: 'uuid',
  container_image: 'text',
  container_tag: 'text',
  json_schema: 'jsonb',
  description: 'text null',
  url: 'text null',
  ...REVIEWED,
});

export const SITE_TABLE = table('site', {
  id: 'uuid',
  name: 'text',
  address: 'text',
  description: 'text null',
  ...REVIEWED,
});

export const FLAVOR_TABLE = table('flavor', {
  id: 'uuid',
  site_id: 'uuid',
  name: 'text',
  description: 'text null',
  price_per_hour: 'numeric null',
  currency: 'text null',
  ...REVIEWED,
});

export const TAG_TABLE = table('tag', {
  id: 'uuid',
  name: 'text',
  description: 'text null',
  ...REVIEWED,
});

export const RESULT_TABLE = table('result', {
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
});

export const RESULT_TAG_TABLE = table('result_tag', { result_id: 'uuid', tag_id: 'uuid' });

export const CLAIM_TABLE = table('claim', {
  id: 'uuid',
  resource_type: 'text',
  resource_id: 'uuid',
  message: 'text',
  ...REVIEWED,
});

/** Every declaration above, each compared with its migrated table and its entity by the test. */
export const TABLES: readonly Table[] = [
  USER_TABLE,
  BENCHMARK_TABLE,
  SITE_TABLE,
  FLAVOR_TABLE,
  TAG_TABLE,
  RESULT_TABLE,
  RESULT_TAG_TABLE,
  CLAIM_TABLE,
];

export type UserRow = RowOf<typeof USER_TABLE>;
export type BenchmarkRow = RowOf<typeof BENCHMARK_TABLE>;
export type SiteRow = RowOf<typeof SITE_TABLE>;
export type FlavorRow = RowOf<typeof FLAVOR_TABLE>;
export type TagRow = RowOf<typeof TAG_TABLE>;
export type ResultRow = RowOf<typeof RESULT_TABLE>;
export type ResultTagRow = RowOf<typeof RESULT_TAG_TABLE>;
export type ClaimRow = RowOf<typeof CLAIM_TABLE>;

/**
 * `insert into <table> (<columns>) select … from unnest(<p>::<type>[], …) as u (<columns>) <rest>`,
 * the n-th placeholder written by `param` (`?` on the pool, `$n+1` on a plain client).
 */
export function insertFromArrays(into: Table, param: (index: number) => string, rest = ''): string {
  const names = Object.keys(into.columns);
  const arrays = Object.values(into.columns).map((column, i) => `${param(i)}::${sqlType(column)}[]`);
  return (
    `insert into ${into.name} (${names.join(', ')}) select ${names.map((n) => `u.${n}`).join(', ')} ` +
    `from unnest(${arrays.join(', ')}) as u (${names.join(', ')})${rest ? ` ${rest}` : ''}`
  );
}

/** The values of `insertFromArrays`: one array per column of `into`, in its order. */
export function columnArrays<T extends Table>(into: T, rows: readonly RowOf<T>[]): unknown[][] {
  return Object.keys(into.columns).map((name) => rows.map((row) => row[name as keyof RowOf<T>]));
}
