/**
 * A comparison against a large baseline with many small groups (GET /results:compare?baseline=…,
 * docs/compare.md "Against a baseline"): `node --import ./scripts/dev/register.js
 * bench/baseline-scale.ts [--baseline 100000] [--groups 10000] [--n 10] [--runs 5] [--db]`.
 *
 * - Without `--db`: the work in Node alone, as compare.ts does it from the sorted values: the
 *   baseline prepared, each group's ratio and p-value (`versus`), each group's interval at a
 *   confidence (`ratioVersus`). Values about 100 ± 10 rounded to 0.01 (ties, as real scores have).
 * - With `--db`: the same data in a flavor each of a fresh database of an embedded PostgreSQL (the
 *   test harness's), its metric values filled in, then `compareResults` as the route calls it:
 *   computed (nothing remembered) from the metric values table and from the documents, and at
 *   another confidence (the read remembered); and the same through HTTP.
 *
 * Then 20 comparisons through HTTP at as many confidences (a client stepping through them), and the
 * heap before and after (collected first when node runs with --expose-gc). `--loops <seconds>`:
 * then four clients (four addresses, `--same-address`: one) loop over that comparison at ever new
 * confidences for that long, while another address asks six small comparisons two seconds apart:
 * the statuses of both and the small ones' times.
 *
 * Prints one JSON object: wall-clock ms, and CPU ms of this process (`node`) and of the PostgreSQL
 * processes below it (`pg`, Linux only: /proc), the best and the median of the runs. CPU is what a
 * loaded machine does not inflate by waiting.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { prepareBaseline, ratioVersus, versus } from '../packages/server/src/services/compare/compare-baseline.ts';
import { compareResults, type CompareParams } from '../packages/server/src/services/compare/compare.ts';
import { startTestServer } from '../packages/server/test/support/harness.ts';
import { createSeeder } from '../packages/server/test/support/seed.ts';
import { Rng } from './random.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const M = arg('baseline', 100_000);
const GROUPS = arg('groups', 10_000);
const N = arg('n', 10);
const RUNS = arg('runs', 5);
const DB = process.argv.includes('--db');
const LOOPS_S = arg('loops', 0);
const SAME_ADDRESS = process.argv.includes('--same-address');

/** CPU ms of the PostgreSQL processes below this one (utime + stime, in clock ticks of 10 ms). */
function postgresCpu(): number {
  if (process.platform !== 'linux') return 0;
  const parents = new Map<number, number>();
  const stat = (pid: string) => {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  };
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      parents.set(Number(pid), Number(stat(pid)[1]));
    } catch {
      // gone meanwhile
    }
  }
  let ms = 0;
  const below = (parent: number) => {
    for (const [pid, of] of parents) {
      if (of !== parent) continue;
      try {
        const fields = stat(String(pid));
        ms += (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        // gone meanwhile
      }
      below(pid);
    }
  };
  below(process.pid);
  return ms;
}

const nodeCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Sample {
  wall: number;
  node: number;
  pg: number;
}

async function measure(work: () => Promise<unknown> | unknown): Promise<Sample> {
  const [wall, node, pg] = [performance.now(), nodeCpu(), postgresCpu()];
  await work();
  return { wall: performance.now() - wall, node: nodeCpu() - node, pg: postgresCpu() - pg };
}

function summary(samples: Sample[]) {
  const pick = (key: keyof Sample) => {
    const sorted = samples.map((s) => s[key]).sort((a, b) => a - b);
    return { best: Math.round(sorted[0]!), p50: Math.round(sorted[Math.floor(sorted.length / 2)]!) };
  };
  return { wall: pick('wall'), node: pick('node'), pg: pick('pg') };
}

const rng = new Rng(20261127);
const value = (center: number) => Math.round((center + 10 * (rng.next() - 0.5) * 2) * 100) / 100;
const baseline = Float64Array.from({ length: M }, () => value(100)).sort();
const groups = Array.from({ length: GROUPS }, (_, g) => Float64Array.from({ length: N }, () => value(95 + (10 * g) / GROUPS)).sort());
const report: Record<string, unknown> = { baseline: M, groups: GROUPS, n: N, runs: RUNS };

const inNode: Sample[] = [];
for (let run = 0; run < RUNS; run++) {
  inNode.push(
    await measure(() => {
      const prepared = prepareBaseline(baseline);
      for (const x of groups) ratioVersus(versus(x, prepared), prepared, 0.95);
    }),
  );
}
report.nodeOnly = summary(inNode);

if (DB) {
  // The defaults of admission; addresses from X-Forwarded-For, so that `--loops` can be several clients.
  const t = await startTestServer({ statementTimeout: '0', trustProxy: 'true' }, 'baseline_scale');
  try {
    const seed = await createSeeder(t);
    const benchmark = await seed.benchmark({ schema: { type: 'object', properties: { score: { type: 'number' } } } });
    const site = await seed.site();
    const em = () => t.server.context.orm.em.fork();
    const { uploader_iss: iss, uploader_sub: sub } = seed.owner;
    const flavors = await em().execute<{ id: string }[]>(
      `insert into flavor (id, site_id, name, status, upload_datetime, uploader_iss, uploader_sub)
       select gen_random_uuid(), ?, 'f' || lpad(g::text, 6, '0'), 'approved', now(), ?, ? from generate_series(0, ?) g returning id::text`,
      [site.id, iss, sub, GROUPS],
    );
    // One row per value: the flavor's index and its number (the baseline is flavor 0).
    const values = [baseline, ...groups];
    const ids = flavors.map((f) => f.id);
    const rows = values.flatMap((xs, i) => Array.from(xs, (x) => [ids[i]!, x] as const));
    for (let from = 0; from < rows.length; from += 50_000) {
      const batch = rows.slice(from, from + 50_000);
      await em().execute(
        `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
         select gen_random_uuid(), ?, ?, v.f, jsonb_build_object('score', v.x), now(), now(), ?, ?, false, false
         from unnest(?::uuid[], ?::float8[]) as v(f, x)`,
        [benchmark.id, site.id, iss, sub, batch.map((r) => r[0]), batch.map((r) => r[1])],
      );
    }
    await em().execute('vacuum analyze result');
    // The benchmark's metric values (as a server keeps them): comparisons read them, not the documents.
    await t.server.context.metrics.reconcile(em());
    await t.server.context.metrics.idle();
    const query = { benchmark_id: benchmark.id, metric: 'json.score', baseline: ids[0] } as CompareParams;
    const cache = t.server.context.compares;
    const computed: Sample[] = [];
    const otherConfidence: Sample[] = [];
    const fromDocuments: Sample[] = [];
    for (let run = 0; run < RUNS; run++) {
      fromDocuments.push(await measure(() => compareResults(em(), { ...query, confidence: 0.95 }, { documents: true })));
      cache.invalidate();
      computed.push(await measure(() => compareResults(em(), { ...query, confidence: 0.95 }, { cache })));
      otherConfidence.push(await measure(() => compareResults(em(), { ...query, confidence: 0.9 + run / 100 }, { cache })));
    }
    const http: Sample[] = [];
    for (let run = 0; run < RUNS; run++) {
      cache.invalidate();
      http.push(
        await measure(async () => {
          const res = await t.request('GET', '/results:compare', { query: { ...query, confidence: 0.95 } });
          if (res.status !== 200) throw new Error(`${res.status} ${res.text.slice(0, 200)}`);
        }),
      );
    }
    // A client stepping through confidences: what the process keeps of them.
    const heap = () => {
      (globalThis as { gc?: () => void }).gc?.();
      return Math.round(process.memoryUsage().heapUsed / 1048576);
    };
    cache.invalidate();
    const heapBefore = heap();
    const stepping: Sample[] = [];
    for (let i = 0; i < 20; i++) {
      stepping.push(await measure(() => t.request('GET', '/results:compare', { query: { ...query, confidence: 0.8 + i / 100 } })));
    }
    Object.assign(report, {
      results: rows.length,
      twentyConfidences: { ...summary(stepping), heapMB: { before: heapBefore, after: heap() } },
      computed: summary(computed),
      computedFromDocuments: summary(fromDocuments),
      otherConfidence: summary(otherConfidence),
      httpComputed: summary(http),
    });
    if (LOOPS_S > 0) report.loops = await loops(t, query, (await seed.benchmark()).id, ids[0]!, site.id, iss, sub);
  } finally {
    await t.close();
  }
}
console.log(JSON.stringify(report));

/** Four clients looping over the large comparison at new confidences; another asking small ones meanwhile. */
async function loops(
  t: Awaited<ReturnType<typeof startTestServer>>,
  query: CompareParams,
  small: string,
  flavor: string,
  site: string,
  iss: string,
  sub: string,
) {
  await t.server.context.orm.em.fork().execute(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?, jsonb_build_object('score', g), now(), now(), ?, ?, false, false from generate_series(1, 30) g`,
    [small, site, flavor, iss, sub],
  );
  const end = Date.now() + LOOPS_S * 1000;
  const statuses: Record<'loops' | 'other', Record<number, number>> = { loops: {}, other: {} };
  const get = async (who: 'loops' | 'other', address: string, params: Record<string, string | number>) => {
    const res = await fetch(`${t.api}/results:compare?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`, {
      headers: { 'x-forwarded-for': address },
    });
    await res.arrayBuffer();
    statuses[who][res.status] = (statuses[who][res.status] ?? 0) + 1;
  };
  const loop = async (i: number) => {
    for (let c = 0; Date.now() < end; c++) {
      const confidence = 0.5 + ((i * 997 + c * 7919) % 499) / 1000;
      await get('loops', SAME_ADDRESS ? '10.0.0.1' : `10.0.0.${i + 1}`, {
        benchmark_id: query.benchmark_id,
        metric: query.metric,
        baseline: query.baseline!,
        confidence,
      });
    }
  };
  const other = async () => {
    const ms: number[] = [];
    await new Promise((r) => setTimeout(r, 3000));
    for (let i = 0; i < 6 && Date.now() < end; i++) {
      const started = performance.now();
      await get('other', '10.0.0.99', { benchmark_id: small, metric: 'json.score', confidence: 0.9 + i / 100 });
      ms.push(Math.round(performance.now() - started));
      await new Promise((r) => setTimeout(r, 2000));
    }
    return ms;
  };
  const [, , , , otherMs] = await Promise.all([loop(0), loop(1), loop(2), loop(3), other()]);
  return { seconds: LOOPS_S, sameAddress: SAME_ADDRESS, statuses, otherMs, rssMB: Math.round(process.memoryUsage().rss / 1048576) };
}
