/**
 * The performance harness (bench/, `npm run bench`) in a tiny configuration: 2,000 results, one
 * connection, 0.2 s per run, its own temporary PostgreSQL cluster (the harness starts one in its
 * data directory: COPY reads files there), the Node baseline (CI has no pgbench). Checks correctness
 * only, never timing: every scenario (1 to 10) ran without an error or a non-2xx answer, its SQL
 * read back from PostgreSQL's statement log and explained, the generated results satisfy their
 * benchmark's JSON Schema, the loaded counts are the generated ones, the export streamed every
 * visible result, changes over time and compare with a baseline (16, 17) computed from the metric
 * values table and remembered, and the report, its Markdown section and the EXPLAIN files are
 * written. Then the origin shape (4 benchmarks, two created
 * through the API) with its scenarios (18 to 27): thresholds that keep the shares aimed at, each
 * run divided by the plain list's, /health probed while changes and comparisons are computed.
 *
 * bench/ is its own TypeScript project, so it is reached the way users reach it: `bench/run.ts` in a
 * child process, and the generator through a dynamic import (typed here by what the test reads).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkJsonSchema, resultValidator } from '../src/services/schemas/json-schema.ts';

const RESULTS = 2000;
const ROOT = resolve(new URL('../../..', import.meta.url).pathname);

interface GeneratedResult {
  id: string;
  json: Record<string, unknown>;
  benchmark: { id: string; json_schema: Record<string, unknown>; def: { key: string; category: string } };
  flavor: { id: string; site_id: string };
  tag_ids: string[];
  hidden: boolean;
}
interface Catalogue {
  benchmarks: GeneratedResult['benchmark'][];
  sites: { id: string }[];
  flavors: { id: string; site_id: string }[];
  tags: { id: string }[];
}
interface GeneratorModule {
  GENERATE_DEFAULTS: { results: number };
  generateCatalogue(options: unknown): Catalogue;
  generateResults(catalogue: Catalogue, options: unknown): Iterable<GeneratedResult>;
}
interface Report {
  options: { results: number; connections: number[] };
  data: {
    load: { method: string; expected: Record<string, number>; loaded: Record<string, number>; checks: Record<string, number> };
    created?: { key: string; createdBy: string; status: string }[];
  };
  server: { peakRssMb: number };
  scenarios: {
    id: number;
    kind: string;
    resultsPerRequest?: number;
    captureProblems: string[];
    explainFile: string;
    statements: { role: string; error: string | null }[];
    reference?: number;
    selectivity?: { target: number; share: number; passing: number; total: number };
    runs: {
      connections: number;
      vsReference?: number | null;
      export?: {
        results: number;
        expected: number;
        bytes: number;
        resultsPerSecond: number;
        sqlResultsPerSecond: number;
        rss: { startMb: number; peakMb: number; endMb: number };
      };
      ratio: number | null;
      serverPeakRssMb: number;
      api: { responses: number; errors: number; timeouts: number; non2xx: number; statusCodes: Record<string, number> };
      sql: { transactions: number; errors: number; firstError: string | null } | null;
    }[];
  }[];
  targets: { target: string; status: string; detail: string }[];
  shapeData: { created?: { createdBy: string; status: string; metricIndexes: number }[] };
  everyMetric: {
    changes: ColdRemembered | null;
    compareBaseline: ColdRemembered | null;
    health: {
      idleMs: { count: number };
      loadedMs: { count: number };
      healthStatuses: Record<string, number>;
      loops: { answers: number; statuses: Record<string, number> }[];
    } | null;
    loadAverage: { samples: number };
    goals: { target: string; status: string }[];
  };
}
interface ColdRemembered {
  groups: number;
  rounds: number;
  coldMs: { count: number; p50: number };
  rememberedMs: { count: number; p50: number };
  afterWriteMs: { count: number; p50: number } | null;
  sqlMs: { count: number; p50: number };
  statements: number;
  fromTable: boolean;
  statuses: Record<string, number>;
}

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-bench-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as the postgres user when we are root
});

test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('the generator is deterministic and its results satisfy their benchmark schemas', async () => {
  const gen = (await import(pathToFileURL(join(ROOT, 'bench', 'generate.ts')).href)) as GeneratorModule;
  const options = { ...gen.GENERATE_DEFAULTS, results: RESULTS };
  const catalogue = gen.generateCatalogue(options);
  assert.is(catalogue.benchmarks.length, 20);
  assert.is(catalogue.sites.length, 50);
  assert.is(catalogue.flavors.length, 500);
  assert.is(catalogue.tags.length, 30);
  assert.equal(new Set(catalogue.benchmarks.map((b) => b.def.category)), new Set(['cpu', 'gpu', 'storage', 'network']));
  for (const b of catalogue.benchmarks) {
    assert.is(b.json_schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.is(checkJsonSchema(b.json_schema), null, `schema of ${b.def.key}`);
  }
  const first = [...gen.generateResults(catalogue, options)];
  const again = [...gen.generateResults(gen.generateCatalogue(options), options)];
  assert.is(first.length, RESULTS);
  assert.equal(
    again.map((r) => r.id),
    first.map((r) => r.id),
  );
  assert.equal(again[RESULTS - 1]!.json, first[RESULTS - 1]!.json);
  const flavorSite = new Map(catalogue.flavors.map((f) => [f.id, f.site_id]));
  let hidden = 0;
  for (const r of first) {
    const problems = resultValidator(r.benchmark.id, r.benchmark.json_schema)(r.json);
    assert.is(problems, null, `${r.benchmark.def.key}: ${JSON.stringify(problems)}`);
    const size = JSON.stringify(r.json).length;
    assert.ok(size >= 900 && size <= 3072, `a result of ${size} bytes`);
    assert.ok(r.tag_ids.length <= 3);
    assert.is(r.flavor.site_id, flavorSite.get(r.flavor.id));
    if (r.hidden) hidden++;
  }
  assert.ok(hidden > 0 && hidden < RESULTS * 0.1, `${hidden} hidden`);
});

/** `npm run bench` in the tiny configuration with `extra` options; its report. */
async function runBench(extra: string[], out: string, docs: string): Promise<Report> {
  const args = [
    '--import',
    join(ROOT, 'scripts', 'dev', 'register.js'),
    join(ROOT, 'bench', 'run.ts'),
    '--results',
    String(RESULTS),
    '--duration',
    '0.2',
    '--warmup',
    '0',
    '--connections',
    '1',
    '--baseline',
    'node',
    '--variants',
    '2',
    '--quiet-wait',
    '0',
    '--data-dir',
    join(dir, 'data'),
    '--out',
    out,
    '--docs',
    docs,
    ...extra,
  ];
  const { code, output } = await new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (c) => done({ code: c, output }));
  });
  assert.is(code, 0, output);
  return JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as Report;
}

test('npm run bench, tiny: every scenario runs without an error and is reported', async () => {
  const docs = join(dir, 'performance.md');
  writeFileSync(docs, 'Intro prose.\n\n<!-- bench:start -->\nold figures\n<!-- bench:end -->\n\nClosing prose.\n');
  const report = await runBench(['--scenarios', '1-10,16,17'], join(dir, 'out'), docs);
  assert.equal(
    report.scenarios.map((s) => s.id),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  const load = report.data.load;
  assert.equal(load.loaded, load.expected);
  assert.is(load.loaded.result, RESULTS);
  assert.is(load.loaded.benchmark, 20);
  assert.is(load.loaded.flavor, 500);
  for (const [check, n] of Object.entries(load.checks)) assert.is(n, 0, check);

  for (const s of report.scenarios) {
    assert.equal(s.captureProblems, [], `scenario ${s.id}`);
    assert.is(s.runs.length, 1);
    const run = s.runs[0]!;
    assert.is(run.connections, 1);
    assert.ok(run.api.responses > 0, `scenario ${s.id} answered`);
    assert.is(run.api.errors, 0, `scenario ${s.id} errors`);
    assert.is(run.api.timeouts, 0, `scenario ${s.id} timeouts`);
    assert.is(run.api.non2xx, 0, `scenario ${s.id} non-2xx: ${JSON.stringify(run.api.statusCodes)}`);
    assert.ok(run.sql && run.sql.transactions > 0, `scenario ${s.id}: the baseline ran`);
    assert.is(run.sql!.errors, 0, `scenario ${s.id} baseline: ${run.sql!.firstError}`);
    assert.ok(run.ratio !== null && run.ratio > 0);
    assert.ok(run.serverPeakRssMb > 0);
    assert.ok(s.statements.length > 0, `scenario ${s.id}: statements explained`);
    for (const st of s.statements) assert.is(st.error, null, `scenario ${s.id} ${st.role}: ${st.error}`);
    const explained = readFileSync(resolve(ROOT, s.explainFile), 'utf8');
    assert.ok(explained.includes('Execution Time'), `scenario ${s.id}: EXPLAIN ANALYZE saved`);
    assert.not.match(explained, /\$\d+\b/, `scenario ${s.id}: every bound value written in`);
  }
  const list = report.scenarios.find((s) => s.id === 1)!;
  assert.ok(list.statements.some((st) => st.role === 'page') && list.statements.some((st) => st.role === 'total'));
  assert.is(report.scenarios.find((s) => s.id === 6)!.kind, 'ingest');
  const batch = report.scenarios.find((s) => s.id === 7)!;
  assert.is(batch.kind, 'ingest');
  assert.is(batch.resultsPerRequest, 100);
  assert.ok(
    batch.statements.some((st) => st.role === 'insert'),
    'the batch insert is explained',
  );
  assert.match(report.targets.find((t) => t.target.startsWith('Ingest'))!.detail, /#6 .*; #7 .*best: #[67]/);
  // Compare: the statement explained; export: every visible result streamed and read again from SQL.
  for (const id of [8, 9]) assert.ok(report.scenarios.find((s) => s.id === id)!.statements.some((st) => st.role === 'compare'));
  const exported = report.scenarios.find((s) => s.id === 10)!;
  assert.is(exported.kind, 'export');
  // Every visible result when it ran: the loaded ones and those the ingest scenarios stored before.
  const visible = load.loaded.result! - load.loaded.result_hidden!;
  const e = exported.runs[0]!.export!;
  assert.is(e.results, e.expected);
  assert.ok(e.expected > visible, `${e.expected} exported, ${visible} loaded`);
  assert.ok(e.bytes > e.results * 900 && e.resultsPerSecond > 0 && e.sqlResultsPerSecond > 0);
  assert.ok(e.rss.startMb > 0 && e.rss.peakMb >= e.rss.startMb && e.rss.endMb > 0);
  assert.ok(exported.statements.some((st) => st.role === 'export rows'));
  assert.is(report.targets.length, 6);

  const m = report.everyMetric;
  assert.ok(m.loadAverage.samples >= 2);
  // 16 and 17: changes over time (its own benchmark of 10 series) and compare with a baseline, each
  // computed, remembered and its SQL replayed every round.
  for (const [c, name] of [
    [m.changes, 'changes'],
    [m.compareBaseline, 'compare with a baseline'],
  ] as const) {
    assert.ok(c, `${name} measured`);
    assert.ok(c.rounds >= 5);
    for (const times of [c.coldMs, c.rememberedMs, c.sqlMs])
      assert.ok(times.count === c.rounds && times.p50 > 0, `${name}: ${JSON.stringify(times)}`);
    assert.equal(Object.keys(c.statuses), ['200']);
    assert.ok(c.fromTable, `${name} read the metric values table`);
    assert.ok(c.statements >= 3, `${name}: the computation's transaction replayed`);
  }
  assert.is(m.changes!.groups, 10);
  assert.is(m.changes!.afterWriteMs?.count, m.changes!.rounds);
  assert.ok(m.compareBaseline!.groups > 1);
  // Changes computed and remembered, compare by flavor against PostgreSQL's median.
  assert.equal(
    m.goals.map((g) => g.target.slice(0, 5)),
    ['chang', 'chang', 'compa'],
  );
  for (const t of report.targets) assert.ok(['met', 'missed', 'not applicable'].includes(t.status), t.target);
  assert.ok(!existsSync(join(dir, 'data')), 'the data directory is removed without --keep');

  const text = readFileSync(docs, 'utf8');
  assert.ok(text.startsWith('Intro prose.\n'), 'prose before the section kept');
  assert.ok(text.trimEnd().endsWith('Closing prose.'), 'prose after the section kept');
  assert.not.ok(text.includes('old figures'));
  assert.is(text.split('<!-- bench:start -->').length, 2);
  assert.ok(text.includes('| 6 | Upload a result'));
  assert.ok(text.includes('| 7 | Upload results in batches of 100'));
  assert.ok(text.includes('| 8 | Compare the flavors of a benchmark'));
  assert.match(text, new RegExp(`\\| 10 \\| ${e.results.toLocaleString('en-US')} \\|`)); // the export table
  assert.ok(text.includes('Export (scenario 10)'));
});

test('npm run bench, tiny, origin shape: the filtered sorts keep the shares aimed at, against the plain list', async () => {
  const docs = join(dir, 'origin.md');
  const report = await runBench(['--shape', 'origin', '--scenarios', '19-27'], join(dir, 'origin-out'), docs);
  // 19 brought its reference, the plain list (18), along.
  assert.equal(
    report.scenarios.map((s) => s.id),
    [18, 19, 20, 21, 22, 23, 24, 25, 26],
  );
  assert.is(report.data.load.loaded.benchmark, 4);
  assert.equal(report.data.load.loaded, report.data.load.expected);
  assert.equal(
    report.data.created!.map((c) => [c.createdBy, c.status]),
    [
      ['user', 'on_review'],
      ['admin', 'approved'],
    ],
  );
  for (const s of report.scenarios) {
    assert.equal(s.captureProblems, [], `scenario ${s.id}`);
    const run = s.runs[0]!;
    assert.ok(
      run.api.responses > 0 && run.api.errors + run.api.timeouts + run.api.non2xx === 0,
      `scenario ${s.id}: ${JSON.stringify(run.api.statusCodes)}`,
    );
    assert.ok(run.sql && run.sql.transactions > 0 && run.sql.errors === 0, `scenario ${s.id} baseline: ${run.sql?.firstError}`);
    if (s.id === 18) continue;
    assert.is(s.reference, 18);
    assert.ok(run.vsReference! > 0, `scenario ${s.id} divided by the plain list`);
  }
  // 1 % and 75 % on the unsuggested path, which has values enough; 100 % on both.
  const share = (id: number) => report.scenarios.find((s) => s.id === id)!.selectivity!;
  for (const id of [21, 24]) assert.is(share(id).share, 1);
  assert.ok(Math.abs(share(22).share - 0.01) < 0.01, JSON.stringify(share(22)));
  assert.ok(Math.abs(share(23).share - 0.75) < 0.02, JSON.stringify(share(23)));
  const h = report.everyMetric.health!;
  assert.ok(h.idleMs.count > 0 && h.loadedMs.count > 0);
  assert.equal(Object.keys(h.healthStatuses), ['200']);
  for (const l of h.loops) {
    assert.ok(l.answers > 0);
    assert.equal(Object.keys(l.statuses), ['200']);
  }
  const text = readFileSync(docs, 'utf8');
  assert.match(text, /\| 19 \| machine\.cpu\.count >= \d+, -json\.result\.score: [\d.]+ % pass .*\| \d+% of #18 \|/);
  assert.ok(text.includes('**/health under load**'));
});

test.run();
