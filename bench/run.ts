/**
 * `npm run bench [-- options]`: the performance benchmark (docs/performance.md, "Running the benchmark").
 *
 *   --results <n>        results to generate and load (default 1000000)
 *   --shape <shape>      default: 20 benchmarks of every kind; origin: 4 benchmarks of c-ray's documents, a quarter each,
 *                        one created through the API by a user, one by an administrator
 *   --duration <s>       seconds per measured run (default 10, 2 below 100,000 results; at least 0.1)
 *   --warmup <s>         seconds of API warm-up per scenario (default 2, 1 below 100,000 results)
 *   --connections <list> concurrent connections, e.g. 1,8,32 (default)
 *   --scenarios <list>   which scenarios, e.g. 1,2,4 or 18-27 (default 1-7): 1 to 7 read and write load; 8 to 10 compare and
 *                        export; 16 changes over time, 17 compare against a baseline; 18 to 27 the users' shape
 *   --baseline <tool>    auto (pgbench when installed), pgbench or node
 *   --seed <n>, --variants <n>   generator seed; how many benchmarks, terms, ids… a scenario cycles through (default 20)
 *   --quiet-wait <s>     before each run, wait up to s seconds for other programs to leave the CPU (default 60, 0 below 100,000 results)
 *   --data-dir <dir>     where the embedded PostgreSQL and its data live (default bench/results/data)
 *   --keep               keep the data directory: the next run with the same --results reuses the data
 *   --out <dir>          where latest.json and explain/ go (default bench/results)
 *   --docs <file>, --no-docs   the Markdown file whose generated section is rewritten (default docs/performance.md), or none
 *   --default-admission  the server's default admission of expensive lists (EXPENSIVE_LIST_*), not 64 places
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runBench, SCENARIOS, type BenchOptions } from './harness.ts';

function number(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} takes a number >= ${min}, not '${v}'`);
  return n;
}

/** `1-7,18-27` → [1, …, 7, 18, …, 27]; a range keeps only the numbers of `known`, when given. */
function list(v: string, name: string, known?: number[]): number[] {
  const items = v.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number);
    if (to === undefined) return [from!];
    const range = Array.from({ length: Math.max(0, to - from! + 1) }, (_, k) => from! + k);
    return known ? range.filter((n) => known.includes(n)) : range;
  });
  if (!items.length || items.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--${name} takes numbers and ranges, not '${v}'`);
  return items;
}

function options(argv: string[]): Partial<BenchOptions> {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      ...Object.fromEntries(
        [
          'results',
          'shape',
          'duration',
          'warmup',
          'connections',
          'scenarios',
          'baseline',
          'seed',
          'variants',
          'quiet-wait',
          'data-dir',
          'out',
          'docs',
        ].map((k) => [k, { type: 'string' as const }]),
      ),
      ...Object.fromEntries(['keep', 'no-docs', 'default-admission', 'help'].map((k) => [k, { type: 'boolean' as const }])),
    },
  }) as { values: Record<string, string | boolean | undefined> };
  const s = (k: string) => v[k] as string | undefined;
  if (v.help) {
    console.log('usage: npm run bench -- [options]: see bench/run.ts');
    process.exit(0);
  }
  if (s('shape') && s('shape') !== 'default' && s('shape') !== 'origin')
    throw new Error(`--shape is default or origin, not '${s('shape')}'`);
  if (s('baseline') && !['auto', 'pgbench', 'node'].includes(s('baseline')!)) throw new Error('--baseline is auto, pgbench or node');
  const scenarios = s('scenarios') === undefined ? undefined : list(s('scenarios')!, 'scenarios', SCENARIOS);
  const unknown = scenarios?.filter((id) => !SCENARIOS.includes(id));
  if (unknown?.length) throw new Error(`no scenario ${unknown.join(', ')}: they are ${SCENARIOS.join(', ')}`);
  const out: Partial<BenchOptions> = {
    results: number(s('results'), 'results', 100),
    shape: s('shape') as BenchOptions['shape'] | undefined,
    duration: number(s('duration'), 'duration', 0.1),
    warmup: number(s('warmup'), 'warmup', 0),
    connections: s('connections') === undefined ? undefined : list(s('connections')!, 'connections'),
    scenarios,
    baseline: s('baseline') as BenchOptions['baseline'] | undefined,
    seed: number(s('seed'), 'seed', 0),
    variants: number(s('variants'), 'variants', 1),
    quietWait: number(s('quiet-wait'), 'quiet-wait', 0),
    dataDir: s('data-dir') && resolve(s('data-dir')!),
    outDir: s('out') && resolve(s('out')!),
    docs: v['no-docs'] ? null : s('docs') && resolve(s('docs')!),
    keep: v.keep as boolean | undefined,
    defaultAdmission: v['default-admission'] as boolean | undefined,
  };
  return Object.fromEntries(Object.entries(out).filter(([, x]) => x !== undefined));
}

try {
  const report = await runBench(options(process.argv.slice(2)));
  const errors = report.scenarios
    .flatMap((s) => s.runs)
    .reduce((n, r) => n + r.api.errors + r.api.timeouts + r.api.non2xx + (r.sql?.errors ?? 0), 0);
  if (errors) console.error(`${errors} requests or transactions failed: see bench/results/latest.json`);
  process.exit(errors ? 1 : 0);
} catch (err) {
  console.error((err as Error).stack ?? String(err));
  process.exit(1);
}
