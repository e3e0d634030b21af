/**
 * The migrations: their names (which /ready and every start compare with the database without
 * loading them) and their classes (loaded only to apply them) are the same list, the files of
 * src/migrations; a start on a database with nothing pending applies nothing.
 */
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, migrate } from '../src/db/orm.ts';
import { loadMigrations, migrationNames, pendingMigrations } from '../src/migrations/index.ts';
import { createTestDatabase, releaseTestDatabase } from './support/database.ts';

test('the names, the classes loaded and the files of src/migrations are the same list, in order', async () => {
  const files = readdirSync(new URL('../src/migrations/', import.meta.url))
    .filter((f) => /^Migration\d+_\w+\.ts$/.test(f))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
  assert.equal([...migrationNames], files);
  const loaded = await loadMigrations();
  assert.equal(
    loaded.map((m) => m.name),
    files,
  );
  for (const m of loaded) assert.type(m.class, 'function', m.name);
});

test('an empty database: every migration pending, all applied at once; then none pending and nothing applied', async () => {
  const url = await createTestDatabase('migrations');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const orm = await connect(url);
  try {
    const query = async (sql: string) => (await client.query(sql)).rows;
    assert.equal(await pendingMigrations(query), [...migrationNames], 'no table yet: every one');
    assert.equal(await migrate(orm), [...migrationNames]);
    assert.equal(await pendingMigrations(query), []);
    assert.equal(await migrate(orm), [], 'the second applies nothing');
    await client.query(`delete from mikro_orm_migrations where name = $1`, [migrationNames.at(-1)]);
    assert.equal(await pendingMigrations(query), [migrationNames.at(-1)], 'one missing: that one');
  } finally {
    await orm.close(true);
    await client.end();
    await releaseTestDatabase();
  }
});

test.run();
