/**
 * Type-level tests: checked by `npx tsc -b` (npm run typecheck), never run. Each `@ts-expect-error`
 * line must fail to compile; if the SDK's types ever accept it, tsc reports the unused directive.
 */
import { asc, createClient, desc, where, type Body, type Item, type Reply } from '../src/index.ts';

const client = createClient({ baseUrl: 'http://localhost:8080' });

export async function queries(benchmark_id: string) {
  client.results.list({ benchmark_id, filters: [where('cpu.count').gte(4), 'score < 10'], per_page: 10 });
  // @ts-expect-error a wrong query field name (`filter` instead of `filters`)
  client.results.list({ filter: ['score < 10'] });
  // @ts-expect-error a wrong query field name on the catalogue
  client.benchmarks.list({ image: 'x' });
  // @ts-expect-error a query value of the wrong type
  client.benchmarks.list({ per_page: '10' });
  // @ts-expect-error per_page is not a filter of this operation's path
  client.flavors.list({ per_page: 10 });
}

export async function sorting() {
  client.results.list({ sort_by: [asc('execution_datetime'), desc('json.result.score'), asc('site_name')] });
  client.results.list({ sort_by: '+execution_datetime,-json.result.score' });
  client.benchmarks.list({ sort_by: [asc('container_image'), desc('upload_datetime')] });
  // @ts-expect-error a wrong sort field for results
  client.results.list({ sort_by: [asc('score')] });
  // @ts-expect-error a results field does not sort benchmarks
  client.benchmarks.list({ sort_by: [asc('execution_datetime')] });
  // @ts-expect-error tags have no upload_datetime
  client.tags.list({ sort_by: [desc('upload_datetime')] });
}

export async function bodies(id: string) {
  await client.benchmarks.create({ container_image: 'ghcr.io/a/b', container_tag: '1', json_schema: {} });
  // @ts-expect-error a wrong body field name (`image` instead of `container_image`)
  await client.benchmarks.create({ image: 'ghcr.io/a/b', container_tag: '1', json_schema: {} });
  // @ts-expect-error a required body field is missing
  await client.sites.create({ name: 'x' });
  // @ts-expect-error tags_ids are strings
  await client.results.setTags(id, [1]);
  // @ts-expect-error createResult needs benchmark_id, flavor_id and execution_datetime
  await client.results.create({ benchmark_id: id }, {});
}

export async function responses(id: string) {
  const b = await client.benchmarks.get(id);
  const name: string = b.name;
  // @ts-expect-error benchmarks have no `score`
  b.score;
  const page = await client.results.list();
  const first: Item<'listResults'> | undefined = page.items[0];
  const site: string | undefined = first?.site.name;
  for await (const r of client.results.list()) {
    const hidden: boolean = r.hidden;
    // @ts-expect-error result ids are strings
    const n: number = r.id;
    void hidden;
    void n;
  }
  // biome-ignore lint/suspicious/noConfusingVoidType: asserts that a 204 operation resolves to `void`, as published
  const nothing: void = await client.benchmarks.approve(id);
  const me: Reply<'getSelf'> = await client.self.get();
  const body: Body<'createTag'> = { name: 'gpu' };
  // @ts-expect-error an unknown operationId
  await client.call('getBenchmarks', { params: { id } });
  // @ts-expect-error getBenchmark needs its path parameter
  await client.call('getBenchmark');
  await client.call('getBenchmark', { params: { id } });
  return [name, site, nothing, me, body];
}

export async function idempotencyKeys(id: string) {
  // Creating calls take an idempotencyKey; other calls do not.
  await client.call('createTag', { body: { name: 'gpu' }, idempotencyKey: 'tag-gpu-1' });
  await client.tags.create({ name: 'gpu' }, { idempotencyKey: 'tag-gpu-1' });
  await client.results.claim(id, 'wrong', { idempotencyKey: 'claim-1' });
  // @ts-expect-error approving declares no Idempotency-Key
  await client.call('approveTag', { params: { id }, idempotencyKey: 'k' });
  // @ts-expect-error the key is a string
  await client.sites.create({ name: 'x', address: 'y' }, { idempotencyKey: 1 });
}

export async function exports(benchmark_id: string) {
  // Results arrive typed, filters from where() allowed; the method chooses the format.
  for await (const r of client.results.export({ benchmark_id, filters: [where('cpu.count').gte(4)] })) {
    const flavor: string = r.flavor.name;
    void flavor;
  }
  const csv: ReadableStream<Uint8Array> = client.results.exportCsv({ benchmark_id, columns: ['id', 'json.result.score'] });
  // @ts-expect-error the format is the method's
  client.results.export({ format: 'csv' });
  // @ts-expect-error columns are for CSV
  client.results.export({ columns: ['id'] });
  return csv;
}

export async function requestOptions(id: string, signal: AbortSignal) {
  // Every method takes the per-call options last; creating calls also a key.
  await client.benchmarks.get(id, { signal, timeoutMs: 5_000, headers: { 'x-request-id': 'r-1' } });
  await client.benchmarks.delete(id, { cascade: true }, { signal });
  await client.flavors.update(id, { name: 'x' }, { timeoutMs: 0 });
  await client.claims.approve(id, { headers: { 'x-note': 'n' } });
  await client.self.isAdmin({ signal });
  await client.health({ timeoutMs: 1_000 });
  await client.call('getBenchmark', { params: { id }, signal, timeoutMs: 1, headers: {} });
  await client.results.upload([], { batchSize: 1, signal, headers: { 'x-note': 'n' } });
  // @ts-expect-error a get takes no idempotency key
  await client.benchmarks.get(id, { idempotencyKey: 'k' });
  // @ts-expect-error header values are strings
  await client.benchmarks.get(id, { headers: { 'x-count': 1 } });
  // @ts-expect-error timeouts are numbers
  await client.tags.list({}, { timeoutMs: '5s' });
  const report = await client.results.upload(
    (async function* () {
      yield { benchmark_id: id, flavor_id: id, execution_datetime: '2025-01-01T00:00:00Z', json: {} };
    })(),
  );
  const stored: number = report.stored;
  const first = report.outcomes[0];
  if (first?.ok) {
    const outcomeId: string = first.id;
    void outcomeId;
  }
  // @ts-expect-error a number is no source
  await client.results.upload(42);
  return stored;
}
