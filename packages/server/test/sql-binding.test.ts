import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { startTestServer, type TestServer } from './support/harness.ts';
import { expandArrays } from '../src/db/bound-driver.ts';

let t: TestServer;
const sent: { text: string; values: unknown[]; name?: string }[] = [];
const original = pg.Client.prototype.query;

test.before(async () => {
  t = await startTestServer({}, 'binding');
  // Record what the pg client really sends (the queries still run against the real database).
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args as [string | { text: string; values?: unknown[]; name?: string }, unknown[] | undefined];
    if (typeof config === 'string') sent.push({ text: config, values: values ?? [] });
    else if (config && typeof config === 'object' && 'text' in config) sent.push({ text: config.text, values: config.values ?? values ?? [], name: config.name });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
});
test.after(async () => {
  pg.Client.prototype.query = original;
  await t.close();
});

test('user input reaches PostgreSQL only as bound parameters: raw SQL and ORM statements', async () => {
  const evil = "O'Brien\"; drop table site; --";
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

test('arrays expand into one placeholder per element, as the ORM inlined them', () => {
  assert.equal(expandArrays('select 1 where id = any(array[?]::uuid[]) and x = ?', [['a', 'b'], 3]), {
    sql: 'select 1 where id = any(array[?, ?]::uuid[]) and x = ?',
    params: ['a', 'b', 3],
  });
  assert.equal(expandArrays('select ?? from t where a = \\? and b = ?', ['col', [1]]), {
    sql: 'select ?? from t where a = \\? and b = ?',
    params: ['col', 1],
  });
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
      assert.equal(listed.body.items.map((s: { name: string }) => s.name), [name]);
    }
    const missing = await t.request('GET', '/results/00000000-0000-4000-8000-000000000000');
    assert.is(missing.status, 404);
  }
  const lists = sent.filter((q) => /count\(\*\) over \(\)::int as total from site t/.test(q.text));
  const byId = sent.filter((q) => /from result r where r\.id = \$1/.test(q.text));
  assert.is(lists.length, 6);
  assert.is(byId.length, 3);
  assert.ok([...lists, ...byId].every((q) => q.name?.startsWith('p_')), 'named (prepared)');
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

test.run();
