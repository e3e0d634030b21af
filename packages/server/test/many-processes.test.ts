/**
 * Many `benchmarks-server` processes on one database (docs/deploy.md, "Many processes"): started
 * at the same moment they all come up and apply each migration once (the migration lock); one
 * started with --no-migrate (MIGRATE=false) waits up to MIGRATION_TIMEOUT for another to apply
 * them, then fails with one line saying to run `benchmarks-server migrate`; together they choose
 * the metric paths of benchmarks written by SQL and fill their values once, nothing logged as a
 * warning. Real processes, real PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { freePort } from '../src/db/embedded.ts';
import { migrationNames } from '../src/migrations/index.ts';
import { createTestDatabase, releaseTestDatabase } from './support/database.ts';
import { startTestServer } from './support/harness.ts';
import { alive, runServer, waitFor, type ServerProcess, within } from './support/process.ts';
import { createSeeder } from './support/seed.ts';

const NO_ISSUER = 'no OpenID issuer is trusted (OIDC_ISSUERS): every operation that needs a token answers 401';

test.before(async () => {
  await createTestDatabase('keep_cluster'); // keeps the test cluster up between the tests
});
test.after(async () => {
  await releaseTestDatabase();
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Resolves once the process serves; fails with its stderr when it exits first. */
async function serving(s: ServerProcess): Promise<void> {
  await waitFor(
    () => /serving on/.test(s.stderr()) || s.child.exitCode !== null,
    () => `serving (stderr: ${s.stderr()})`,
  );
  assert.is(s.child.exitCode, null, `still running (stderr: ${s.stderr()})`);
}

/** SIGTERM, then each process must exit 0 within 60 s (else it is killed): a hang guard, the stop itself takes a second. */
async function stop(...processes: ServerProcess[]): Promise<void> {
  for (const s of processes) if (s.child.exitCode === null) s.child.kill('SIGTERM');
  for (const s of processes) {
    const code = await within(s.exited, 60_000, 'late' as const);
    if (code === 'late') s.child.kill('SIGKILL');
    assert.is(code, 0, s.stderr());
  }
}

/** Log lines at warn or above, but the one every process without an issuer writes. */
const loud = (s: ServerProcess) => s.logLines().filter((l) => (l.level === 'warn' || l.level === 'error') && l.msg !== NO_ISSUER);

test('two `start` on one fresh database at the same moment: both serve, each migration applied once', async () => {
  const url = await createTestDatabase('two_starts');
  // The same moment, made sure of: a session creating the migrations table in a transaction holds
  // back whoever creates it too until it rolls back. Without the migration lock both processes
  // wait there and then both migrate (one fails: duplicate key in pg_type_typname_nsp_index).
  const holder = new pg.Client({ connectionString: url });
  const observer = new pg.Client({ connectionString: url });
  await holder.connect();
  await observer.connect();
  const [p1, p2] = [await freePort(), await freePort()];
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  try {
    await holder.query('begin');
    await holder.query('create table mikro_orm_migrations (id serial primary key, name varchar(255), executed_at timestamptz)');
    a = runServer(['start', '--port', String(p1), '--database-url', url]);
    b = runServer(['start', '--port', String(p2), '--database-url', url]);
    const both = [a, b];
    const heldBack = async () => {
      const { rows } = await observer.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'benchmarks-server' and wait_event_type = 'Lock'",
      );
      const waitingForLock = both.filter((s) =>
        s.logLines().some((l) => l.msg === 'another process is applying the migrations: waiting for it to finish'),
      );
      return rows[0].n >= 2 || (rows[0].n >= 1 && waitingForLock.length >= 1);
    };
    // A hang guard: two processes starting from their sources take over 10 s each on a loaded machine.
    const until = Date.now() + 120_000;
    while (!(await heldBack()) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    assert.ok(await heldBack(), `both processes reached the migrations (stderr: ${a.stderr()} ${b.stderr()})`);
    await holder.query('rollback');
    await serving(a);
    await serving(b);
    for (const port of [p1, p2]) assert.is((await fetch(`http://127.0.0.1:${port}/api/v1/ready`)).status, 200, `ready on ${port}`);
    const rows = await query<{ name: string; n: number }>(
      url,
      'select name, count(*)::int as n from mikro_orm_migrations group by name order by name',
    );
    assert.equal(
      rows,
      migrationNames.map((name) => ({ name, n: 1 })).sort((x, y) => x.name.localeCompare(y.name)),
    );
    const appliers = both.filter((s) => s.logLines().some((l) => l.msg === 'migrations applied'));
    assert.is(appliers.length, 1, 'one of them applied the migrations, the other found none pending');
    assert.equal([...loud(a), ...loud(b)], [], 'no warning, no error');
  } finally {
    await holder.query('rollback').catch(() => {});
    await holder.end();
    await observer.end();
    if (a && b) await stop(a, b);
    await releaseTestDatabase();
  }
});

test('MIGRATE=false on a database with pending migrations: waits MIGRATION_TIMEOUT, then one line saying to run `benchmarks-server migrate`; applies nothing', async () => {
  const url = await createTestDatabase('no_migrate_fails');
  try {
    const started = Date.now();
    const s = runServer(['start', '--port', '0', '--database-url', url], { MIGRATE: 'false', MIGRATION_TIMEOUT: '2s' });
    assert.is(await s.exited, 1, s.stderr());
    assert.ok(Date.now() - started >= 2_000, 'waited for the deadline');
    const lines = s.plainErrorLines();
    assert.is(lines.length, 1, `one clear line, got:\n${s.stderr()}`);
    assert.match(lines[0]!, /^benchmarks-server: \d+ migrations are not applied to the database at postgresql:/);
    assert.match(lines[0]!, /--no-migrate, MIGRATE=false/);
    assert.match(lines[0]!, /run `benchmarks-server migrate` first \(waited 2s, --migration-timeout, MIGRATION_TIMEOUT\)/);
    assert.not.match(s.stderr(), /\n\s+at /, 'no stack trace');
    const tables = await query(url, "select 1 from pg_tables where schemaname = 'public'");
    assert.equal(tables, [], 'nothing was created');
  } finally {
    await releaseTestDatabase();
  }
});

test('--no-migrate waits while the migrations are pending and serves once `benchmarks-server migrate` applied them', async () => {
  const url = await createTestDatabase('no_migrate_waits');
  try {
    const port = await freePort();
    const s = runServer(['start', '--no-migrate', '--port', String(port), '--database-url', url], { MIGRATION_TIMEOUT: '2m' });
    try {
      await waitFor(
        () => s.logLines().some((l) => l.msg === 'migrations pending: waiting for another process to apply them (--no-migrate)'),
        () => `waiting (stderr: ${s.stderr()})`,
      );
      assert.not.match(s.stderr(), /serving on/);
      const migrate = runServer(['migrate', '--database-url', url]);
      assert.is(await migrate.exited, 0, migrate.stderr());
      assert.match(migrate.stdout(), /Applied: /);
      await serving(s);
      assert.is((await fetch(`http://127.0.0.1:${port}/api/v1/ready`)).status, 200);
      assert.not.ok(
        s.logLines().some((l) => l.msg === 'migrations applied'),
        'the --no-migrate process applied nothing',
      );
    } finally {
      await stop(s);
    }
  } finally {
    await releaseTestDatabase();
  }
});

test('two processes starting on one database choose its metric paths and fill their values once: complete, each row once, no warning', async () => {
  // Benchmarks and results written by SQL (no paths chosen, no values); then two processes start.
  const seeding = await startTestServer({}, 'two_fillers');
  const url = seeding.databaseUrl;
  const ids: string[] = [];
  try {
    const seed = await createSeeder(seeding);
    const site = (await seed.site()).id;
    const flavor = (await seed.flavor(site)).id;
    for (let i = 0; i < 4; i++) {
      const schema = {
        type: 'object',
        properties: { a: { type: 'number', suggestToUser: true }, b: { type: 'integer', suggestToUser: true } },
      };
      const id = (await seed.benchmark({ schema, status: 'approved' })).id;
      await seed.sql('delete from metric_path where benchmark_id = ?', [id]);
      await seed.sql('delete from metric_benchmark where benchmark_id = ?', [id]);
      await seed.sql(
        `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
         select gen_random_uuid(), ?, ?, ?, jsonb_build_object('a', g % 113, 'b', g % 7), now(), now(), ?, ?, false, false
         from generate_series(1, 5000) g`,
        [id, site, flavor, seed.owner.uploader_iss, seed.owner.uploader_sub],
      );
      ids.push(id);
    }
  } finally {
    await seeding.close();
  }
  const env = { LOG_LEVEL: 'debug' };
  const a = runServer(['start', '--port', '0', '--database-url', url], env);
  const b = runServer(['start', '--port', '0', '--database-url', url], env);
  try {
    await serving(a);
    await serving(b);
    const complete = async () =>
      (
        await query<{ n: number }>(
          url,
          'select count(*)::int as n from metric_benchmark where complete and benchmark_id = any($1::uuid[])',
          [ids],
        )
      )[0]!.n;
    const until = Date.now() + 120_000;
    while ((await complete()) < ids.length && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    assert.is(await complete(), ids.length, 'every benchmark complete');
    const [rows] = await query<{ paths: number; keyed: number; rows: number; pairs: number; wrong: number }>(
      url,
      'select (select count(*)::int from metric_path where benchmark_id = any($1::uuid[])) as paths, ' +
        '(select count(*)::int from metric_path where benchmark_id = any($1::uuid[]) and slot is not null) as keyed, ' +
        '(select count(*)::int from metric_value) as rows, (select count(distinct (result_id, path_id))::int from metric_value) as pairs, ' +
        "(select count(*)::int from metric_value v join result r on r.id = v.result_id where v.value is distinct from (r.json->>'a')::numeric and v.value is distinct from (r.json->>'b')::numeric) as wrong",
      [ids],
    );
    assert.equal(rows, { paths: 8, keyed: 8, rows: 40_000, pairs: 40_000, wrong: 0 }, 'two paths each, every row once');
    assert.equal([...loud(a), ...loud(b)], [], 'no warning, no error');
  } finally {
    await stop(a, b);
    assert.not.ok(alive(a.child.pid!) || alive(b.child.pid!));
  }
});

test.run();
