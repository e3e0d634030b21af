import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { startTestServer, type TestServer } from './support/harness.ts';
import { randomUUID } from 'node:crypto';
import { bindValues, prepared } from '../src/db/bound-driver.ts';
import { buildConfig } from '../src/config.ts';
import { AppError } from '../src/core/errors.ts';

let t: TestServer;
const sent: { text: string; values: unknown[]; name?: string; database?: string }[] = [];
const original = pg.Client.prototype.query;

test.before(async () => {
  t = await startTestServer({}, 'binding');
  // Record what the pg client really sends (the queries still run against the real database).
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args as [string | { text: string; values?: unknown[]; name?: string }, unknown[] | undefined];
    const { database } = this;
    if (typeof config === 'string') sent.push({ text: config, values: values ?? [], database });
    else if (config && typeof config === 'object' && 'text' in config)
      sent.push({ text: config.text, values: config.values ?? values ?? [], name: config.name, database });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
});
test.after(async () => {
  pg.Client.prototype.query = original;
  await t.close();
});

test('user input reaches PostgreSQL only as bound parameters: raw SQL and ORM statements', async () => {
  const evil = 'O\'Brien"; drop table site; --';
  const token = await t.user('binder');
  sent.length = 0;
  const created = await t.request('POST', '/sites', { token, body: { name: evil, address: `${evil} street` } });
  assert.is(created.status, 201);
  const listed = await t.request('GET', '/sites:search', { query: { terms: evil, status: 'on_review' } });
  assert.is(listed.status, 200);
  assert.is(listed.body.total, 1);
  const withInput = sent.filter((q) => q.values.some((v) => typeof v === 'string' && v.includes("O'Brien")));
  assert.ok(withInput.length >= 2, 'the insert and the search carried the input as values');
  for (const q of sent) assert.not.ok(q.text.includes('Brien'), `no input in SQL text: ${q.text}`);
  assert.ok(withInput.every((q) => /\$1\b/.test(q.text)));
});

/** A fresh EntityManager of the test server's ORM (the same driver as the requests). */
const em = () => t.server.context.orm.em.fork();

test('an array is one bound parameter: the same statement with 1, 3 and 50 ids sends one identical text (POST /reports/claims:reject)', async () => {
  const admin = await t.admin('array-admin');
  const texts = new Map<number, string[]>();
  for (const n of [1, 3, 50]) {
    sent.length = 0;
    const ids = Array.from({ length: n }, () => randomUUID());
    const res = await t.request('POST', '/reports/claims:reject', { token: admin, body: { ids } });
    assert.is(res.status, 200);
    assert.equal(res.body.not_found, ids, 'every id reported as naming no claim');
    const withIds = sent.filter((q) => q.values.some((v) => Array.isArray(v) && v.length === n && v.every((id, i) => id === ids[i])));
    assert.ok(withIds.length >= 2, `the ids travelled as one array value (${n})`);
    for (const q of withIds)
      assert.not.ok(
        ids.some((id) => q.text.includes(id)),
        'no id in the text',
      );
    texts.set(
      n,
      withIds.map((q) => q.text),
    );
  }
  assert.equal(texts.get(3), texts.get(1), 'same texts for 1 and 3 ids');
  assert.equal(texts.get(50), texts.get(1), 'same texts for 1 and 50 ids');
  assert.ok(
    texts.get(1)!.every((text) => /any\(\$1::uuid\[\]\)/.test(text)),
    'one placeholder with its array type',
  );
});

test('an array holding SQL is data: matched element by element, never part of the text', async () => {
  const evil = "'); drop table site; --";
  const token = await t.user('array-binder');
  const created = await t.request('POST', '/sites', { token, body: { name: evil, address: 'nowhere' } });
  assert.is(created.status, 201);
  const sql = prepared('select count(*)::int as n from site where name = any(?::text[])');
  const names: string[] = [];
  for (const n of [1, 3, 50]) {
    sent.length = 0;
    const values = [evil, ...Array.from({ length: n - 1 }, (_, i) => `${evil} ${i}", '\\{}`)];
    const [row] = await em().execute<{ n: number }[]>(sql, [values]);
    assert.is(row!.n, 1, 'only the site whose name is exactly the first element');
    const q = sent.find((x) => x.text.includes('from site where name = any('));
    assert.ok(q, 'the statement was sent');
    assert.not.ok(q!.text.includes('drop table'), `no input in the text: ${q!.text}`);
    assert.equal(q!.values, [values], 'the array is the one value');
    names.push(q!.name ?? '');
  }
  assert.ok(names[0]!.startsWith('p_'), 'a prepared statement');
  assert.is(new Set(names).size, 1, 'one text, so one prepared statement, for every length');
  const [site] = await em().execute<{ n: number }[]>("select count(*)::int as n from pg_tables where tablename = 'site'");
  assert.is(site!.n, 1, 'the table is still there');
});

test('a JSON path is one value: filters and sorts on paths of depth 1 and 4 send one text', async () => {
  const texts: string[] = [];
  for (const path of ['score', `machine.cpu.{"cou'nt"}.value`]) {
    sent.length = 0;
    const res = await t.request('GET', '/results', { query: { filters: `${path} < 2500`, sort_by: `-json.${path}` } });
    assert.is(res.status, 200, JSON.stringify(res.body));
    const page = sent.find((q) => q.text.includes('from result r') && q.text.includes('limit'));
    assert.ok(page, 'the page statement was sent');
    const segments = path.split('.');
    assert.ok(
      page!.values.some((v) => Array.isArray(v) && v.length === segments.length && v.every((s, i) => s === segments[i])),
      'the path travelled as one array value',
    );
    assert.not.ok(page!.text.includes("cou'nt"), 'no segment in the text');
    texts.push(page!.text);
  }
  assert.is(texts[1], texts[0]);
});

test('an array at a placeholder without an array cast is refused before anything is sent', async () => {
  sent.length = 0;
  const refused = [
    'select 1 from site where id in (?)', // MikroORM's inlining made this a list
    'select 1 from site where id = any(array[?]::uuid[])', // and this an array of N placeholders
    'select 1 from site where id = any(?)',
    'select 1 from site where id = ?',
  ];
  for (const sql of refused) {
    try {
      await em().execute(sql, [[randomUUID(), randomUUID()]]);
      assert.unreachable(`refused: ${sql}`);
    } catch (err) {
      assert.instance(err, Error);
      assert.not.instance(err, AppError, 'a mistake of the code, not of the client');
      assert.match((err as Error).message, 'needs an array cast');
      assert.match((err as Error).message, sql);
    }
  }
  assert.is(sent.length, 0, 'no statement reached PostgreSQL');
  assert.throws(() => bindValues('select ? and ?', [1]), /1 values for 2 placeholders/);
  assert.throws(() => bindValues('select ?', [undefined]), /value 1 is undefined/);
  assert.equal(
    bindValues('select ?? from t where a = \\? and b = any(?::int[])', ['col', [1, 2]]),
    ['col', [1, 2]],
    'identifiers and literal question marks as knex reads them',
  );
});

test('NUL or a lone surrogate inside an array is refused with 422, before anything is sent', async () => {
  sent.length = 0;
  for (const bad of ['a\u0000b', 'x\uD800']) {
    try {
      await em().execute('select count(*) from site where name = any(?::text[])', [['fine', bad]]);
      assert.unreachable('refused');
    } catch (err) {
      // MikroORM wraps what its driver throws (DriverException) and copies the AppError's fields,
      // which http/problem.ts renders.
      const { status, code } = err as Partial<AppError>;
      assert.is(status, 422);
      assert.is(code, 'UNSUPPORTED_CHARACTER');
    }
  }
  assert.is(sent.length, 0);
});

test('the frequent fixed statements are prepared once per connection and give each call its own answer', async () => {
  const token = await t.user('preparer');
  const names = ['prepared-a', 'prepared-b'];
  for (const name of names) {
    const made = await t.request('POST', '/sites', { token, body: { name, address: 'somewhere' } });
    assert.is(made.status, 201);
  }
  sent.length = 0;
  // The same statement text with different values, several times (each pooled connection prepares it once).
  for (let round = 0; round < 3; round++) {
    for (const name of names) {
      const listed = await t.request('GET', '/sites', { query: { name, status: 'on_review' } });
      assert.is(listed.status, 200);
      assert.equal(
        listed.body.items.map((s: { name: string }) => s.name),
        [name],
      );
    }
    const missing = await t.request('GET', '/results/00000000-0000-4000-8000-000000000000');
    assert.is(missing.status, 404);
  }
  const lists = sent.filter((q) => /count\(\*\) over \(\)::int as total from site t/.test(q.text));
  const byId = sent.filter((q) => /from result r where r\.id = \$1/.test(q.text));
  assert.is(lists.length, 6);
  assert.is(byId.length, 3);
  assert.ok(
    [...lists, ...byId].every((q) => q.name?.startsWith('p_')),
    'named (prepared)',
  );
  assert.is(new Set(lists.map((q) => q.name)).size, 1, 'one name for one text');
  // A search adds a clause per term: its text is not from a bounded set, so it is not prepared.
  sent.length = 0;
  const searched = await t.request('GET', '/sites:search', { query: { terms: 'prepared-a', status: 'on_review' } });
  assert.is(searched.status, 200);
  assert.is(searched.body.total, 1);
  const searches = sent.filter((q) => /count\(\*\) over \(\)::int as total from site t/.test(q.text));
  assert.is(searches.length, 1);
  assert.is(searches[0]!.name, undefined);
});

test('PREPARED_STATEMENTS is per server: one with it off beside one with it on, in one process', async () => {
  assert.is(buildConfig({ preparedStatements: 'false' }).preparedStatements, false);
  assert.is(buildConfig({}).preparedStatements, true);
  assert.throws(() => buildConfig({ preparedStatements: 'sometimes' }), /PREPARED_STATEMENTS must be true or false/);
  // PgBouncer in transaction mode: this server runs the same statements unnamed, while `t` keeps preparing them.
  const unprepared = await startTestServer({ preparedStatements: 'false' }, 'unprepared');
  try {
    const token = await unprepared.user('unpreparer');
    assert.is((await unprepared.request('POST', '/sites', { token, body: { name: 'prepared-a', address: 'somewhere' } })).status, 201);
    sent.length = 0;
    for (const server of [unprepared, t, unprepared, t]) {
      const listed = await server.request('GET', '/sites', { query: { name: 'prepared-a', status: 'on_review' } });
      assert.is(listed.status, 200);
      assert.is(listed.body.items.length, 1);
      assert.is((await server.request('GET', '/results/00000000-0000-4000-8000-000000000000')).status, 404);
    }
    const fixed = (server: TestServer) =>
      sent.filter(
        (q) =>
          q.database === new URL(server.databaseUrl).pathname.slice(1) &&
          /count\(\*\) over \(\)::int as total from site t|from result r where r\.id = \$1/.test(q.text),
      );
    assert.is(fixed(unprepared).length, 4);
    assert.ok(
      fixed(unprepared).every((q) => q.name === undefined),
      'unnamed on the server with PREPARED_STATEMENTS=false',
    );
    assert.is(fixed(t).length, 4);
    assert.ok(
      fixed(t).every((q) => q.name?.startsWith('p_')),
      'named on the server with the default',
    );
  } finally {
    await unprepared.close();
  }
});

test.run();
