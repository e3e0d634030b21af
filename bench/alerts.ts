/**
 * `npm run bench:alerts [-- options]`: what watches and webhooks cost, through the SDK, with a real OpenID provider and a webhook
 * receiver on loopback: 1. upload throughput with no watch, 100 watches on another benchmark, 10 and 100 on the series uploaded
 * to; 2. upload to delivered `change.detected` under 1,000 results/s; 3. deliveries per second; 4. the server's memory with
 * 10,000 deliveries pending. Writes bench/results/alerts.json and prints a Markdown table for docs/performance.md.
 *
 *   --data-dir <dir>   the cluster (default bench/results/alerts-data; recreated every run)
 *   --uploads <n>      results per throughput run (default 20000)
 *   --rounds <n>       throughput runs per configuration, alternated (default 2; the median counts)
 *   --seconds <n>      length of the sustained upload (default 60)
 */
import { createServer, type IncomingMessage } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startIssuer } from '@benchmarks/demo/issuer';
import { createClient, type Client } from '@benchmarks/sdk';
import { startBenchDatabase } from './database.ts';
import { logger, median, sleep, waitUntil } from './measure.ts';
import { ROOT, startServerProcess } from './server.ts';

const option = (value: string) => ({ type: 'string' as const, default: value });
const dataDir = join(ROOT, 'bench/results/alerts-data');
const options = { 'data-dir': option(dataDir), uploads: option('20000'), rounds: option('2'), seconds: option('60') };
const { values: args } = parseArgs({ options });
const [UPLOADS, ROUNDS] = [Number(args.uploads), Number(args.rounds)];
const [FLAVORS, BATCH, ADMIN] = [100, 500, 'urn:bench:admin'] as const;
const log = logger('alerts');

/** A receiver on loopback: counts what arrives, answers `status` (503 with Retry-After 1 h for "pending"). */
function startReceiver() {
  const received: { at: number; type: string; data: { flavor?: { id: string } | null; after?: { mean: number } } }[] = [];
  let mode: 'ok' | 'pending' = 'ok';
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (mode === 'pending') return void res.writeHead(503, { 'retry-after': '3600' }).end();
      received.push({ at: performance.now(), ...JSON.parse(body) });
      res.writeHead(204).end();
    });
  });
  return new Promise<{ url: string; received: typeof received; setMode(m: typeof mode): void; close(): void }>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/hook`, received, setMode: (m) => (mode = m), close: () => server.close() });
    }),
  );
}

const base = Date.now() - 30 * 86_400_000;
let clock = 0;
/** Results spread over the flavors, one second apart; `value(flavorIndex)` gives each score. */
const items = (benchmark_id: string, flavors: string[], n: number, value: (f: number) => number) =>
  Array.from({ length: n }, (_, i) => {
    const [execution_datetime, f] = [new Date(base + clock++ * 1000).toISOString(), i % flavors.length];
    return { benchmark_id, flavor_id: flavors[f]!, execution_datetime, json: { result: { score: value(f) } } };
  });

/** Uploads `all` in batches of 500, `concurrency` at a time; answers results/s. */
async function upload(client: Client, all: ReturnType<typeof items>, concurrency = 4): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < all.length) {
        const from = next;
        next += BATCH;
        await client.results.createMany(all.slice(from, next));
      }
    }),
  );
  return all.length / ((performance.now() - started) / 1000);
}

const noise = () => 100 + Math.random();

async function main() {
  mkdirSync(args['data-dir']!, { recursive: true });
  const db = await startBenchDatabase(args['data-dir']!, log);
  await db.recreate();
  const admin = { sub: 'bench-admin', email: 'admin@bench.example.org', email_verified: true, entitlements: [ADMIN] };
  const issuer = await startIssuer({ accounts: [admin] });
  const env = { DATABASE_URL: db.url, OIDC_ISSUERS: issuer.issuer, ADMIN_ENTITLEMENTS: ADMIN, RATE_LIMIT: '0', READ_RATE_LIMIT: '0' };
  const limits = { WEBHOOK_ALLOW_PRIVATE: 'true', MAX_WATCHES_PER_USER: '250', MAX_WEBHOOKS_PER_USER: '50' };
  const server = await startServerProcess({ ...env, ...limits }, log);
  const receiver = await startReceiver();
  const report: Record<string, unknown> = {};
  try {
    const token = await issuer.mintAccessToken({ sub: 'bench-admin', ttlSeconds: 7200 });
    const client = createClient({ baseUrl: server.url, token, timeoutMs: 120_000 });
    await client.self.register();
    const site = await client.sites.create({ name: 'Bench site', address: 'loopback' });
    const flavors: string[] = [];
    for (let f = 0; f < FLAVORS; f++) flavors.push((await client.flavors.create(site.id, { name: `flavor-${f}` })).id);
    const schema = { type: 'object', properties: { result: { type: 'object', properties: { score: { type: 'number' } } } } };
    const benchmark = (image: string) => client.benchmarks.create({ container_image: image, container_tag: '1', json_schema: schema });
    const [watched, other] = [await benchmark('bench/alerts-watched'), await benchmark('bench/alerts-other')];
    const watch = (benchmark_id: string, f: number) =>
      client.watches.create({ benchmark_id, metric: 'json.result.score', flavor_id: flavors[f]! });

    // 1. Upload throughput. Watches are added as the configurations go; each round runs them in turn.
    const otherIds: string[] = [];
    for (let f = 0; f < FLAVORS; f++) otherIds.push((await watch(other.id, f)).id);
    // Warm-up, and a series of 20 points for each watch on the other benchmark.
    await upload(client, items(other.id, flavors, 2 * FLAVORS * 10, noise));
    await upload(client, items(watched.id, flavors, 5000, noise));
    // Each configuration, and the watches it puts on the series uploaded to.
    const configs: Record<string, number> = { none: 0, 'other benchmark, 100': 0, 'uploaded series, 10': 10, 'uploaded series, 100': 100 };
    const throughput: Record<string, number[]> = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
    const watchedIds: string[] = [];
    const setWatches = async (n: number) => {
      while (watchedIds.length > n) await client.watches.delete(watchedIds.pop()!);
      while (watchedIds.length < n) watchedIds.push((await watch(watched.id, watchedIds.length)).id);
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of Object.keys(configs)) {
        if (name === 'none') for (const id of otherIds.splice(0)) await client.watches.delete(id);
        if (name === 'other benchmark, 100') for (let f = 0; f < FLAVORS; f++) otherIds.push((await watch(other.id, f)).id);
        await setWatches(configs[name]!);
        const rate = await upload(client, items(watched.id, flavors, UPLOADS, noise));
        throughput[name]!.push(rate);
        log(`upload with ${name} watches: ${rate.toFixed(0)} results/s`);
      }
    }
    report.throughput = Object.fromEntries(Object.entries(throughput).map(([k, v]) => [k, { runs: v, median: median(v) }]));

    // 2. Upload to event under 1,000 results/s: every 5 s one more watched flavor gets 50 % slower.
    await setWatches(100);
    await client.webhooks.create({ url: receiver.url, events: ['change.detected'] });
    receiver.received.length = 0;
    const shifted = new Map<number, number>(); // flavor -> when its min_size-th slower result was stored
    const perSecond = 1000;
    const seconds = Number(args.seconds);
    const started = performance.now();
    for (let s = 0; s < seconds; s++) {
      const step = s >= 5 && s % 5 === 0 ? s / 5 - 1 : -1;
      const slow = (f: number) => f < 10 && shifted.has(f);
      if (step >= 0 && step < 10) shifted.set(step, Number.NaN);
      const batch = items(watched.id, flavors, perSecond, (f) => (slow(f) ? 150 : 100) + Math.random());
      await upload(client, batch, 2);
      // Ten results per flavor per second: the fifth slower one (min_size 5) is in this second's upload.
      for (const [f, at] of shifted) if (Number.isNaN(at)) shifted.set(f, performance.now());
      const wait = started + (s + 1) * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const achieved = (perSecond * seconds) / ((performance.now() - started) / 1000);
    await waitUntil(async () => receiver.received.filter((e) => e.data.after!.mean > 140).length >= shifted.size, 200, 90);
    const latencies = [...shifted].map(([f, at]) => {
      const event = receiver.received.find((e) => e.data.flavor?.id === flavors[f] && e.data.after!.mean > 140);
      return event ? (event.at - at) / 1000 : null;
    });
    log(`upload to event at ${achieved.toFixed(0)} results/s: ${latencies.map((l) => l?.toFixed(1) ?? 'none').join(', ')} s`);
    report.latency = { resultsPerSecond: achieved, seconds: latencies };

    // 3. Deliveries per second: 40 endpoints of acknowledgements, and 50 of them (2,000 deliveries).
    for (let e = 0; e < 40; e++) await client.webhooks.create({ url: receiver.url, events: ['change.acknowledged'] });
    const records = [];
    for await (const r of client.changes.list({ benchmark_id: watched.id })) records.push(r);
    receiver.received.length = 0;
    const acknowledged = records.slice(0, 10);
    /** Acknowledges and reopens each of the records, `times` times: an event to every endpoint each time. */
    const acknowledge = async (times: number, note: string) => {
      for (let i = 0; i < times; i++)
        for (const r of acknowledged) {
          await client.changes.acknowledge(r.id, `${note} ${i}`);
          await client.changes.reopen(r.id);
        }
    };
    const t0 = performance.now();
    await acknowledge(5, 'bench');
    const expected = 5 * acknowledged.length * 40;
    const delivered = async () => receiver.received.filter((e) => e.type === 'change.acknowledged').length >= expected;
    await waitUntil(delivered, 100, 120 - (performance.now() - t0) / 1000); // 2 minutes after the first acknowledgement
    const acks = receiver.received.filter((e) => e.type === 'change.acknowledged');
    if (acks.length === 0) throw new Error(`no change.acknowledged delivery (${records.length} records)`);
    const span = (acks.at(-1)!.at - t0) / 1000;
    const deliveries = { delivered: acks.length, expected, seconds: span, perSecond: acks.length / span };
    log(`deliveries: ${deliveries.delivered} of ${expected} in ${span.toFixed(1)} s (${deliveries.perSecond.toFixed(0)}/s)`);
    report.deliveries = deliveries;

    // 4. Memory with 10,000 deliveries pending: 250 events or more × 40 endpoints the receiver refuses.
    const idleMb = await server.rssMb();
    receiver.setMode('pending');
    const window = server.window();
    const rounds = Math.ceil(10_000 / (40 * acknowledged.length));
    await acknowledge(rounds, 'pending');
    await sleep(30_000);
    const pendingMb = window.end().peakMb;
    log(`memory: ${idleMb.toFixed(0)} MB idle, peak ${pendingMb.toFixed(0)} MB with 10,000 deliveries pending`);
    report.memory = { idleMb, pendingPeakMb: pendingMb, pending: rounds * acknowledged.length * 40 };
  } finally {
    receiver.close();
    await server.stop();
    await issuer.close();
    await db.stop();
  }
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/results/alerts.json'), `${JSON.stringify(report, null, 2)}\n`);
  const t = report.throughput as Record<string, { median: number }>;
  const none = t.none!.median;
  console.log('| Watches | Upload, results/s | ÷ none |\n|---|---:|---:|');
  for (const [k, v] of Object.entries(t)) console.log(`| ${k} | ${v.median.toFixed(0)} | ${(v.median / none).toFixed(2)} |`);
}

await main();
