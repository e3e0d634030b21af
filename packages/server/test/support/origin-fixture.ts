/**
 * A small deployment of the original service with its awkward cases, for import-origin.test.ts:
 * null statuses, submits of items on review, users without email (empty, and null in a
 * deployment whose column allowed it), deleted results, claims on deleted and on listed results, a
 * claim whose link a later claim replaced, a result violating its schema, a schema this service
 * refuses (draft-04), a result whose site is not its flavor's, and tags on results.
 */
import { randomUUID } from 'node:crypto';
import { createOriginDatabase, insertRow, ORIGIN_ISSUER, withClient } from './origin-database.ts';

const id = () => randomUUID();

/** Every id of the fixture, by the name the tests use. */
export const F = {
  users: { alice: 'sub-alice', bob: 'sub-bob', carol: 'sub-carol', dave: 'sub-dave' },
  tags: { cpu: id(), gpu: id(), clash: id() },
  benchmarks: { time: id(), nullStatus: id(), draft4: id() },
  sites: { cesga: id(), nullStatus: id(), onReview: id() },
  flavors: { small: id(), nullStatus: id(), m1: id() },
  submits: { site: id(), benchmark: id() },
  results: {
    plain: id(),
    violating: id(),
    deleted: id(),
    claimedDeleted: id(),
    approvedClaim: id(),
    claimedListed: id(),
    draft4: id(),
    nullBenchmark: id(),
    wrongSite: id(),
  },
  claims: { open: id(), approved: id(), replaced: id(), nullStatus: id() },
} as const;

/** The name of the tag that the target already has under another id (created by the test). */
export const CLASHING_TAG_NAME = 'clash';

/** The naive execution time of F.results.plain, as the original stored it. */
export const PLAIN_EXECUTION = '2021-10-13 15:35:04.713245';
/** The naive upload time of F.results.violating: January, when Madrid is UTC+1. */
export const WINTER_UPLOAD = '2022-01-20 09:00:00.5';

/** Creates the fixture's database on the test cluster; its URL. */
export async function createOriginFixture(): Promise<string> {
  const url = await createOriginDatabase('origin_fixture');
  await withClient(url, async (c) => {
    const user = (sub: string, email: string | null) =>
      insertRow(c, 'user', { sub, iss: ORIGIN_ISSUER, email, registration_datetime: '2021-03-01 08:00:00' });
    await user(F.users.alice, 'alice@example.org');
    await user(F.users.bob, ''); // registered without an email
    await user(F.users.dave, 'dave@example.org');
    // A deployment whose rows predate the NOT NULL constraint: an email that is null.
    await c.query('alter table "user" alter column email drop not null');
    await user(F.users.carol, null);

    const by = (sub: string) => ({ uploader_sub: sub, uploader_iss: ORIGIN_ISSUER, upload_datetime: '2021-04-01 12:00:00' });
    for (const [name, tagId] of Object.entries(F.tags)) await insertRow(c, 'tag', { id: tagId, name, description: `${name} tag` });

    await insertRow(c, 'submit', { id: F.submits.benchmark, resource_type: 'benchmark', upload_datetime: '2021-04-01 12:00:00' });
    await insertRow(c, 'submit', { id: F.submits.site, resource_type: 'site', upload_datetime: '2021-04-01 12:00:00' });
    const benchmark = (benchmarkId: string, image: string, status: string | null, schema: unknown, extra = {}) =>
      insertRow(c, 'benchmark', {
        id: benchmarkId,
        ...by(F.users.alice),
        status,
        docker_image: image,
        docker_tag: 'v1.0',
        url: `https://hub.docker.com/r/${image}`,
        json_schema: JSON.stringify(schema),
        description: `${image} benchmark`,
        ...extra,
      });
    await benchmark(F.benchmarks.time, 'origin/time', 'approved', { properties: { time: { type: 'integer' } } });
    await benchmark(F.benchmarks.nullStatus, 'origin/null-status', null, {}, { _submit_report_id: F.submits.benchmark });
    await benchmark(F.benchmarks.draft4, 'origin/draft4', 'approved', {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: { time: { type: 'number', minimum: 0, exclusiveMinimum: true } },
    });

    const site = (siteId: string, name: string, status: string | null, extra = {}) =>
      insertRow(c, 'site', { id: siteId, ...by(F.users.bob), status, name, address: `${name} street`, ...extra });
    await site(F.sites.cesga, 'CESGA', 'approved');
    await site(F.sites.nullStatus, 'IFCA-LCG2', null);
    await site(F.sites.onReview, 'NCG-INGRID-PT', 'on_review', { _submit_report_id: F.submits.site });

    const flavor = (flavorId: string, siteId: string, name: string, status: string | null) =>
      insertRow(c, 'flavor', { id: flavorId, ...by(F.users.alice), status, name, description: '', site_id: siteId });
    await flavor(F.flavors.small, F.sites.cesga, 'standard.small', 'approved');
    await flavor(F.flavors.nullStatus, F.sites.cesga, 'hpc.8core-16ram', null);
    await flavor(F.flavors.m1, F.sites.nullStatus, 'm1.small', 'approved');

    const claim = (claimId: string, status: string | null, message: string) =>
      insertRow(c, 'claim', {
        id: claimId,
        uploader_sub: F.users.dave,
        uploader_iss: ORIGIN_ISSUER,
        status,
        message,
        resource_type: 'result',
        upload_datetime: '2022-02-01 10:00:00',
      });
    await claim(F.claims.open, 'on_review', 'Impossible time');
    await claim(F.claims.approved, 'approved', 'Run on another flavor');
    await claim(F.claims.replaced, 'on_review', 'An earlier claim of the same result');
    await claim(F.claims.nullStatus, null, 'Status never set');

    const result = (resultId: string, fields: Record<string, unknown>) =>
      insertRow(c, 'result', {
        id: resultId,
        ...by(F.users.alice),
        upload_datetime: '2021-10-14 10:00:00',
        execution_datetime: '2021-10-13 09:00:00',
        benchmark_id: F.benchmarks.time,
        flavor_id: F.flavors.small,
        site_id: F.sites.cesga,
        deleted: false,
        json: JSON.stringify({ time: 10 }),
        ...fields,
      });
    const R = F.results;
    await result(R.plain, { execution_datetime: PLAIN_EXECUTION, json: JSON.stringify({ time: 10, type: 'AMD' }) });
    await result(R.violating, { upload_datetime: WINTER_UPLOAD, json: JSON.stringify({ time: '10' }) });
    await result(R.deleted, { deleted: true, flavor_id: F.flavors.m1, site_id: F.sites.nullStatus });
    await result(R.claimedDeleted, { deleted: true, _claim_report_id: F.claims.open });
    await result(R.approvedClaim, { deleted: true, flavor_id: F.flavors.nullStatus, _claim_report_id: F.claims.approved });
    await result(R.claimedListed, { _claim_report_id: F.claims.nullStatus });
    await result(R.draft4, {
      benchmark_id: F.benchmarks.draft4,
      flavor_id: F.flavors.m1,
      site_id: F.sites.nullStatus,
      uploader_sub: F.users.carol,
      json: JSON.stringify({ time: -1 }),
    });
    await result(R.nullBenchmark, { benchmark_id: F.benchmarks.nullStatus, json: JSON.stringify({ anything: true }) });
    await result(R.wrongSite, { site_id: F.sites.nullStatus });

    const tag = (resultId: string, tagId: string) => insertRow(c, 'result_tags', { result_id: resultId, tag_id: tagId });
    await tag(R.plain, F.tags.cpu);
    await tag(R.plain, F.tags.gpu);
    await tag(R.draft4, F.tags.clash);
    await tag(R.claimedDeleted, F.tags.cpu);
  });
  return url;
}
