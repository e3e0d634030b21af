/**
 * The shared column lists of the result tables (src/services/results/result-rows.ts), which uploads,
 * tag edits, claims and import-origin all insert through: they hold every column of the migrated
 * tables, with its type, so that a migration adding a column fails here until the lists (and with
 * them every writer's row type) have it.
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { CLAIM_COLUMNS, columnArrays, insertFromArrays, RESULT_COLUMNS, RESULT_TAG_COLUMNS } from '../src/services/results/result-rows.ts';

let url: string;

test.before(async () => {
  url = await createMigratedTestDatabase('result_rows');
});

test.after(async () => {
  await releaseTestDatabase();
});

/** Each column of `table` in the migrated database → its type (`uuid`, `jsonb`, `timestamptz`…). */
async function columnsOf(table: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; type: string }>(
      `select column_name as name, udt_name as type from information_schema.columns
       where table_schema = current_schema() and table_name = $1 order by ordinal_position`,
      [table],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.type === 'bool' ? 'boolean' : r.type]));
  } finally {
    await client.end();
  }
}

for (const [table, columns] of [
  ['result', RESULT_COLUMNS],
  ['result_tag', RESULT_TAG_COLUMNS],
  ['claim', CLAIM_COLUMNS],
] as const) {
  test(`the columns written to ${table} are those of the migrated table, with their types`, async () => {
    const actual = await columnsOf(table);
    assert.ok(Object.keys(actual).length > 1, `read the columns of ${table}`);
    assert.equal({ ...columns }, actual);
  });
}

test('insertFromArrays: one array per column, in the order of its values', () => {
  assert.is(
    insertFromArrays('result_tag', RESULT_TAG_COLUMNS, (i) => `$${i + 1}`, 'on conflict do nothing'),
    'insert into result_tag (result_id, tag_id) select u.result_id, u.tag_id from unnest($1::uuid[], $2::uuid[]) as u (result_id, tag_id) on conflict do nothing',
  );
  assert.equal(
    columnArrays(RESULT_TAG_COLUMNS, [
      { tag_id: 't1', result_id: 'r1' },
      { result_id: 'r2', tag_id: 't2' },
    ]),
    [
      ['r1', 'r2'],
      ['t1', 't2'],
    ],
  );
});

test.run();
