/**
 * The column declarations of the tables the service inserts into with its own SQL
 * (src/db/table-columns.ts), which uploads, tag edits, claims and import-origin all insert through:
 * with the columns left to the database, they hold every column of the migrated tables, with its
 * type and nullability, and the same columns as the table's MikroORM entity. A migration adding a
 * column fails here until the declaration (and with it every writer's row type) and the entity have it.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { connect } from '../src/db/orm.ts';
import { entities } from '../src/entities/index.ts';
import { columnArrays, insertFromArrays, RESULT_TAG_TABLE, sqlType, TABLES, type Table } from '../src/db/table-columns.ts';

let url: string;
let orm: MikroORM;

test.before(async () => {
  url = await createMigratedTestDatabase('table_columns');
  orm = await connect(url);
});

test.after(async () => {
  await orm?.close(true);
  await releaseTestDatabase();
});

interface DbColumn {
  /** `uuid`, `text`, `jsonb`, `timestamptz`, `boolean`, `numeric`…, with ` null` when it may hold null. */
  declared: string;
  /** Generated, an identity, or with a default: the database can fill it. */
  fillable: boolean;
}

/** Each column of `table` in the migrated database, in order. */
async function columnsOf(table: string): Promise<Record<string, DbColumn>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; type: string; nullable: boolean; fillable: boolean }>(
      `select column_name as name, udt_name as type, is_nullable = 'YES' as nullable,
         (column_default is not null or is_generated = 'ALWAYS' or is_identity = 'YES') as fillable
       from information_schema.columns
       where table_schema = current_schema() and table_name = $1 order by ordinal_position`,
      [table],
    );
    return Object.fromEntries(
      rows.map((r) => [
        r.name,
        { declared: `${r.type === 'bool' ? 'boolean' : r.type}${r.nullable ? ' null' : ''}`, fillable: r.fillable },
      ]),
    );
  } finally {
    await client.end();
  }
}

test('every table the service inserts into with its own SQL is declared once, and has an entity', () => {
  const names = TABLES.map((t) => t.name);
  assert.equal(names, [...new Set(names)], 'one declaration per table');
  assert.equal(
    names,
    ['app_user', 'benchmark', 'site', 'flavor', 'tag', 'result', 'result_tag', 'claim'],
    'users, the catalogue, results, their tags and claims',
  );
  const tables = entities.map((e) => e.meta.tableName ?? e.meta.collection);
  assert.equal(new Set(names), new Set(tables), 'the tables of the entities');
});

for (const declaration of TABLES) {
  const { name, columns, filledByDatabase } = declaration;

  test(`${name}: the declared columns and those left to the database are those of the migrated table, with their types`, async () => {
    const actual = await columnsOf(name);
    assert.ok(Object.keys(actual).length > 1, `read the columns of ${name}`);
    const left = Object.fromEntries(filledByDatabase.map((c) => [c, actual[c]?.declared ?? 'missing']));
    const expected = Object.fromEntries(Object.entries(actual).map(([c, col]) => [c, col.declared]));
    assert.equal({ ...columns, ...left }, expected);
    for (const c of filledByDatabase) {
      assert.not.ok(c in columns, `${name}.${c} is both written and left to the database`);
      assert.ok(actual[c]?.fillable, `${name}.${c} is left to the database, which has no default for it`);
    }
  });

  test(`${name}: the MikroORM entity maps the same columns, with the same types, nullable where the declaration is`, () => {
    const meta = orm.getMetadata().find(entityOf(name));
    assert.ok(meta, `an entity for ${name}`);
    const mapped: Record<string, string> = {};
    for (const prop of Object.values(meta!.properties)) {
      (prop.fieldNames ?? []).forEach((field, i) => {
        // `numeric(10,0)` is the ORM's own default precision; the table's column is `numeric`.
        const type = (prop.columnTypes?.[i] ?? 'unknown').replace(/\(.*\)$/, '');
        mapped[field] = `${type}${prop.nullable ? ' null' : ''}`;
      });
    }
    const declared: Record<string, string> = { ...columns };
    for (const c of filledByDatabase) declared[c] = mapped[c] ?? 'not mapped';
    assert.equal(mapped, declared);
  });
}

/** The name of the entity of `table`. */
function entityOf(table: string): string {
  const entity = entities.find((e) => (e.meta.tableName ?? e.meta.collection) === table);
  if (!entity) throw new Error(`no entity for ${table}`);
  return entity.meta.className;
}

test('sqlType: the type of a column, with or without null', () => {
  assert.is(sqlType('text null'), 'text');
  assert.is(sqlType('timestamptz'), 'timestamptz');
});

test('insertFromArrays: one array per column, in the order of its values', () => {
  assert.is(
    insertFromArrays(RESULT_TAG_TABLE, (i) => `$${i + 1}`, 'on conflict do nothing'),
    'insert into result_tag (result_id, tag_id) select u.result_id, u.tag_id from unnest($1::uuid[], $2::uuid[]) as u (result_id, tag_id) on conflict do nothing',
  );
  const nullable: Table = { name: 'site', columns: { id: 'uuid', description: 'text null' }, filledByDatabase: [] };
  assert.is(
    insertFromArrays(nullable, (i) => `$${i + 1}`),
    'insert into site (id, description) select u.id, u.description from unnest($1::uuid[], $2::text[]) as u (id, description)',
  );
  assert.equal(
    columnArrays(RESULT_TAG_TABLE, [
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
