/** `npm run bench [-- options]`: the performance benchmark (docs/performance.md, "Running the benchmark"); `--help` lists the options. */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { GENERATE_DEFAULTS } from './generate.ts';
import { runBench } from './harness.ts';
import { ROOT } from './server.ts';
import { SCENARIOS } from './scenarios.ts';

/** The options, as --help prints them: those followed by `<…>` take a value. */
const HELP = `usage: npm run bench -- [options]
  --results <n>         results to generate and load (default 1000000)
  --shape <shape>       default (20 benchmarks of every kind) or origin (4 of c-ray's, two created through the API)
  --duration <s>        seconds per measured run (default 10; at least 0.1)
  --warmup <s>          seconds of API warm-up per scenario (default 2)
  --connections <list>  concurrent connections (default 1,8,32)
  --scenarios <list>    e.g. 1,2,4 or 18-27 (default 1-7): 1 to 7 read and write load, 8 to 10 compare and export, 16 changes
                        over time, 17 compare against a baseline, 18 to 27 the users' shape; a range skips the numbers unused
  --baseline <tool>     auto (pgbench when installed), pgbench or node
  --seed <n>, --variants <n>   generator seed; how many benchmarks, terms, ids… a scenario cycles through (default 20)
  --quiet-wait <s>      before each run, wait up to s seconds for other programs to leave the CPU (default 60)
  --data-dir <dir>, --keep   where the embedded PostgreSQL lives (default bench/results/data); keep it for the next run
  --out <dir>           where latest.json and explain/ go (default bench/results)
  --docs <file>, --no-docs   the Markdown file whose generated section is rewritten (default docs/performance.md), or none
  --default-admission   the server's default admission of expensive lists, not 64 places
  --help                this text

Below 100,000 results: 2 s runs, 1 s warm-ups, slow requests' runs lengthened twice at most (not 6
times), no waiting for a quiet CPU. Options given explicitly win.`;
const flags = [...HELP.matchAll(/--([a-z-]+)( <)?/g)].map(([, name, value]) => [name!, { type: value ? 'string' : 'boolean' }] as const);
const v = parseArgs({ args: process.argv.slice(2), options: Object.fromEntries(flags) }).values as Record<string, string | undefined>;
if (v.help) {
  console.log(HELP);
  process.exit(0);
}

function number(name: string, min: number, otherwise: number): number {
  const n = Number(v[name] ?? otherwise);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} takes a number >= ${min}, not '${v[name]}'`);
  return n;
}
/** `1-7,18-27` → [1, …, 7, 18, …, 27]; a range keeps only the numbers of `known`, when given. */
function list(name: string, otherwise: number[], known?: number[]): number[] {
  const items = (v[name]?.split(',') ?? otherwise.map(String)).flatMap((part) => {
    const [from, to] = part.split('-').map(Number) as [number, number?];
    if (to === undefined) return [from];
    const range = Array.from({ length: Math.max(0, to - from + 1) }, (_, k) => from + k);
    return known ? range.filter((n) => known.includes(n)) : range;
  });
  if (!items.length || items.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--${name} takes numbers and ranges, not '${v[name]}'`);
  return items;
}
function choice<T extends string>(name: string, choices: T[]): T {
  if (v[name] !== undefined && !choices.includes(v[name] as T)) throw new Error(`--${name} is ${choices.join(', ')}, not '${v[name]}'`);
  return (v[name] ?? choices[0]) as T;
}

try {
  const results = number('results', 100, GENERATE_DEFAULTS.results);
  const small = results < 100_000;
  const scenarios = list('scenarios', [1, 2, 3, 4, 5, 6, 7], SCENARIOS);
  const unknown = scenarios.filter((id) => !SCENARIOS.includes(id));
  if (unknown.length) throw new Error(`no scenario ${unknown.join(', ')}: they are ${SCENARIOS.join(', ')}`);
  const report = await runBench({
    results,
    shape: choice('shape', ['default', 'origin']),
    seed: number('seed', 0, GENERATE_DEFAULTS.seed),
    duration: number('duration', 0.1, small ? 2 : 10),
    warmup: number('warmup', 0, small ? 1 : 2),
    connections: list('connections', [1, 8, 32]),
    scenarios,
    baseline: choice('baseline', ['auto', 'pgbench', 'node']),
    variants: number('variants', 1, 20),
    quietWait: number('quiet-wait', 0, small ? 0 : 60),
    dataDir: resolve(v['data-dir'] ?? join(ROOT, 'bench', 'results', 'data')),
    outDir: resolve(v.out ?? join(ROOT, 'bench', 'results')),
    docs: v['no-docs'] ? null : resolve(v.docs ?? join(ROOT, 'docs', 'performance.md')),
    keep: !!v.keep,
    defaultAdmission: !!v['default-admission'],
    small,
    log: (m) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`),
  });
  const runs = report.scenarios.flatMap((s) => s.runs);
  const errors = runs.reduce((n, r) => n + r.api.errors + r.api.timeouts + r.api.non2xx + (r.sql?.errors ?? 0), 0);
  if (errors) console.error(`${errors} requests or transactions failed: see bench/results/latest.json`);
  process.exit(errors ? 1 : 0);
} catch (err) {
  console.error((err as Error).stack ?? String(err));
  process.exit(1);
}
