/**
 * `npm run bench [-- options]`: the performance benchmark of "Read and write load" (scenarios 1 to 7) and 16
 * (compare and export, 8 to 10).
 *
 *   --results <n>        results to generate and load (default 1000000)
 *   --shape <shape>      default: 20 benchmarks of every kind; origin: 4 benchmarks of c-ray's documents, a quarter each,
 *                        one created through the API by a user, one by an administrator
 *   --duration <s>       seconds per measured run (default 10, 2 below 100,000 results; at least 0.1)
 *   --warmup <s>         seconds of API warm-up per scenario (default 2, 1 below 100,000 results)
 *   --connections <list> concurrent connections, e.g. 1,8,32 (default)
 *   --scenarios <list>   which scenarios, 1 to 27, e.g. 1,2,4 or 18-27 (default 1-7); 8 to 10: compare and export; 11 to 15:
 *                        "Every metric fast"; 16: changes over time, 17: compare against a baseline; 18 to 27: the users' shape
 *                        (one benchmark's list, filtered sorts at 1/75/100 %, a result, the benchmarks list, /health under load)
 *   --baseline <tool>    auto (pgbench when installed), pgbench or node
 *   --seed <n>           generator seed
 *   --quiet-wait <s>     before each run, wait up to s seconds for other programs to leave the CPU (default 60, 0 below 100,000 results)
 *   --data-dir <dir>     where the embedded PostgreSQL and its data live (default bench/results/data)
 *   --keep               keep the data directory: the next run with the same --results reuses the data
 *   --out <dir>          where latest.json and explain/ go (default bench/results)
 *   --docs <file>        the Markdown file whose generated section is rewritten (default docs/performance.md)
 *   --no-docs            do not rewrite any Markdown file
 *   --render             run nothing: rewrite the Markdown section from <out>/latest.json
 *   --default-admission  the server's default admission of expensive lists (EXPENSIVE_LIST_*), not 64 places
 */
import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DEFAULTS, runBench, SMALL_DEFAULTS, SMALL_RESULTS, type BenchOptions } from './harness.ts';
import { markdownSection, rederive, writeJson, writeMarkdown, type BenchReport } from './report.ts';

function parseArgs(argv: string[]): Partial<BenchOptions> & { render?: boolean } {
  const out: Partial<BenchOptions> & { render?: boolean } = {};
  const list = (v: string, name: string) => {
    const items = v.split(',').map((x) => Number(x.trim()));
    if (!items.length || items.some((n) => !Number.isInteger(n) || n < 1))
      throw new Error(`${name} takes a comma-separated list of positive integers, not '${v}'`);
    return items;
  };
  const number = (v: string | undefined, name: string, min: number) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min) throw new Error(`${name} takes a number >= ${min}, not '${v}'`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--results':
        out.results = Math.floor(number(value(), flag, 100));
        break;
      case '--shape': {
        const v = value();
        if (v !== 'default' && v !== 'origin') throw new Error(`--shape is default or origin, not '${v}'`);
        out.shape = v;
        break;
      }
      case '--duration':
        out.duration = number(value(), flag, 0.1);
        break;
      case '--warmup':
        out.warmup = number(value(), flag, 0);
        break;
      case '--connections':
        out.connections = list(value() ?? '', flag);
        break;
      case '--scenarios': {
        // Ranges too: 1-7,18-27.
        const s = (value() ?? '').split(',').flatMap((part) => {
          const [from, to] = part.split('-').map((x) => x.trim());
          return to === undefined
            ? list(from!, flag)
            : Array.from({ length: Math.max(0, Number(to) - Number(from) + 1) }, (_, k) => Number(from) + k);
        });
        if (!s.length || s.some((n) => !Number.isInteger(n) || n < 1 || n > 27))
          throw new Error('--scenarios are numbered 1 to 27, e.g. 1,2,4 or 18-27');
        out.scenarios = s;
        break;
      }
      case '--baseline': {
        const v = value();
        if (v !== 'auto' && v !== 'pgbench' && v !== 'node') throw new Error(`--baseline is auto, pgbench or node, not '${v}'`);
        out.baseline = v;
        break;
      }
      case '--seed':
        out.seed = Math.floor(number(value(), flag, 0));
        break;
      case '--variants':
        out.variants = Math.floor(number(value(), flag, 1));
        break;
      case '--quiet-wait':
        out.quietWait = number(value(), flag, 0);
        break;
      case '--data-dir':
        out.dataDir = resolve(value() ?? '');
        break;
      case '--out':
        out.outDir = resolve(value() ?? '');
        break;
      case '--render':
        out.render = true;
        break;
      case '--keep':
        out.keep = true;
        break;
      case '--default-admission':
        out.defaultAdmission = true;
        break;
      case '--docs':
        out.docs = resolve(value() ?? '');
        break;
      case '--no-docs':
        out.docs = null;
        break;
      case '--help':
      case '-h':
        console.log(`usage: npm run bench -- [--results n] [--shape default|origin] [--duration s] [--warmup s] [--connections 1,8,32] [--scenarios 1-7 (up to 27)]
                       [--baseline auto|pgbench|node] [--seed n] [--data-dir dir] [--keep] [--out dir] [--no-docs]
defaults: ${BENCH_DEFAULTS.results} results, ${BENCH_DEFAULTS.duration} s per run (${SMALL_DEFAULTS.duration} s below ${SMALL_RESULTS} results), connections ${BENCH_DEFAULTS.connections.join(',')}`);
        process.exit(0);
        break; // not reached: process.exit does not return
      default:
        throw new Error(`unknown option ${arg} (see --help)`);
    }
  }
  return out;
}

try {
  const options = parseArgs(process.argv.slice(2));
  if (options.render) {
    const out = options.outDir ?? BENCH_DEFAULTS.outDir;
    const docs = options.docs === undefined ? BENCH_DEFAULTS.docs : options.docs;
    const report = rederive(JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as BenchReport);
    writeJson(join(out, 'latest.json'), report);
    if (docs) writeMarkdown(docs, markdownSection(report));
    console.log(`rewrote ${join(out, 'latest.json')}${docs ? ` and ${docs}` : ''}`);
    process.exit(0);
  }
  const report = await runBench(options);
  const errors = report.scenarios
    .flatMap((s) => s.runs)
    .reduce((n, r) => n + r.api.errors + r.api.timeouts + r.api.non2xx + (r.sql?.errors ?? 0), 0);
  if (errors) console.error(`${errors} requests or transactions failed: see bench/results/latest.json`);
  process.exit(errors ? 1 : 0);
} catch (err) {
  console.error((err as Error).stack ?? String(err));
  process.exit(1);
}
