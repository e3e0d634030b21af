/**
 * Tags: reviewed like the other catalogue items unless REVIEW_TAGS=false. What every reviewed
 * resource does (create, review, update, delete, which for a tag unlinks it from its results, lists,
 * search and sorting) is in catalogue-review.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer } from './support/harness.ts';
import { buildConfig } from '../src/config.ts';

test("POST /tags with REVIEW_TAGS=false: a user's tag is approved at once, listed, usable on a result; sites still reviewed", async () => {
  const open = await startTestServer({ reviewTags: 'false' }, 'tags-unreviewed');
  try {
    const [bob, root] = await Promise.all([open.user('bob'), open.admin('root')]);
    const tag = await open.request('POST', '/tags', { token: bob, body: { name: 'live-at-once' } });
    assert.is(tag.status, 201, tag.text);
    assert.equal(tag.body, { id: tag.body.id, name: 'live-at-once', description: null, status: 'approved' });
    const listed = await open.request('GET', '/tags', { query: { name: 'live-at-once' } });
    assert.equal(
      listed.body.items.map((i: any) => i.id),
      [tag.body.id],
      'in the default (approved) list',
    );
    const submits = await open.request('GET', '/reports/submits', { token: root, query: { resource_type: 'tag' } });
    assert.equal(submits.body.items, [], 'nothing to review');
    const b = await open.request('POST', '/benchmarks', {
      token: root,
      body: { container_image: 't/unreviewed', container_tag: '1', json_schema: {} },
    });
    const s = await open.request('POST', '/sites', { token: root, body: { name: 'unreviewed', address: 'a' } });
    const f = await open.request('POST', `/sites/${s.body.id}/flavors`, { token: root, body: { name: 'f' } });
    const result = await open.request('POST', '/results', {
      token: bob,
      query: { benchmark_id: b.body.id, flavor_id: f.body.id, execution_datetime: '2024-01-01T00:00:00Z', tags_ids: [tag.body.id] },
      body: {},
    });
    assert.is(result.status, 201, result.text);
    assert.equal(
      result.body.tags.map((x: any) => x.id),
      [tag.body.id],
    );
    const site = await open.request('POST', '/sites', { token: bob, body: { name: 'bob-site', address: 'a' } });
    assert.is(site.body.status, 'on_review', 'only tags skip the review');
  } finally {
    await open.close();
  }
});

test('REVIEW_TAGS: true by default; true/false/yes/no/1/0; anything else is one clear error', () => {
  const base = { oidcIssuer: 'http://127.0.0.1:1' };
  assert.is(buildConfig(base).reviewTags, true);
  for (const [given, expected] of [
    ['false', false],
    ['no', false],
    ['0', false],
    ['true', true],
    ['yes', true],
    ['1', true],
  ] as const) {
    assert.is(buildConfig({ ...base, reviewTags: given }).reviewTags, expected, given);
  }
  assert.throws(() => buildConfig({ ...base, reviewTags: 'sometimes' }), /REVIEW_TAGS must be true or false, not 'sometimes'/);
});

test.run();
