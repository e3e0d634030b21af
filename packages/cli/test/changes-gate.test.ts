/**
 * The nightly CI gate for real: one result per night for 30 nights, 15 % slower from night 20 (a
 * lower-is-better time), each uploaded on its own, then `benchmarks changes --fail-on regression`
 * run as a CI job would, logged in. It passes until the regression is found, fails that night and
 * every night after, and passes again once the change is acknowledged.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, type Client } from '@benchmarks/sdk';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { sandbox, type Sandbox } from './support/cli.ts';

const DAY = 86_400_000;
let t: TestServer;
let box: Sandbox;
let sdk: Client;
let token: string;

test.before(async () => {
  t = await startTestServer({ watchRefreshInterval: '1' }, 'cli_gate');
  box = await sandbox();
  box.env.BENCHMARKS_SERVER = t.url;
  sdk = createClient({ baseUrl: t.url, token: await t.admin('gate-admin') });
  token = await t.user('nightly');
});
test.after(async () => {
  await sdk?.close();
  await box?.cleanup();
  await t?.close();
});

test('changes --fail-on regression: 0 until the regression is found, 1 from that night on, 0 once acknowledged', async () => {
  const schema = { type: 'object', properties: { seconds: { type: 'number', 'x-better': 'lower' } } };
  const benchmark = await sdk.benchmarks.create({ container_image: 'ghcr.io/cli-test/nightly', container_tag: '1', json_schema: schema });
  const site = await sdk.sites.create({ name: 'CESGA', address: 'x' });
  const flavor = await sdk.flavors.create(site.id, { name: 'hpc.nightly' });
  const nightly = createClient({ baseUrl: t.url, token });
  const start = Date.now() - 31 * DAY;
  const gate = ['changes', '--benchmark', 'ghcr.io/cli-test/nightly:1', '--metric', 'seconds', '--fail-on', 'regression', '-o', 'json'];
  const codes: number[] = [];
  let firstFound = -1;
  for (let night = 0; night < 30; night++) {
    const seconds = (night < 20 ? 100 : 115) + ((night * 7) % 5) / 5;
    await nightly.results.create(
      { benchmark_id: benchmark.id, flavor_id: flavor.id, execution_datetime: new Date(start + night * DAY).toISOString() },
      { seconds },
    );
    const res = await box.run(gate, { env: { BENCHMARKS_TOKEN: token } });
    codes.push(res.code ?? -1);
    if (night === 0) assert.match(res.stderr, /^Created watch [0-9a-f-]{36} for this series/, 'said once');
    else if (res.code === 0) assert.is(res.stderr, '', `night ${night}: nothing said`);
    const reported = JSON.parse(res.stdout).groups[0].changes.length;
    if (firstFound < 0 && reported > 0) firstFound = night;
    if (res.code === 1) assert.match(res.stderr, /^Error: 1 regression found:\nCESGA \/ hpc\.nightly: regression at \S+ \(\+1\d(\.\d+)?%/);
  }
  assert.ok(firstFound >= 20 && firstFound < 30, `found on night ${firstFound}`);
  assert.equal(
    codes,
    codes.map((_, night) => (night < firstFound ? 0 : 1)),
    'exit 0 before, 1 from the night it is found',
  );
  const [record] = await nightly.changes.list({ direction: 'regression' }).toArray({ max: 10 });
  await nightly.changes.acknowledge(record!.id, 'expected: new kernel');
  const after = await box.run(gate, { env: { BENCHMARKS_TOKEN: token } });
  assert.is(after.code, 0, after.stderr);
  assert.is((await nightly.watches.list().toArray({ max: 10 })).length, 1, 'one watch, created once');
  await nightly.close();
});

test.run();
