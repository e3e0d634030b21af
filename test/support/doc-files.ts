/**
 * The files the CLI guide's upload examples read, in the working directory: `out.json` (a run's
 * output), `results/`, `runs/**\/*.jsonl` (envelopes), `big.ndjson`, the schemas of `benchmarks
 * create` and `update`, a `docs/` directory, and `failing/results/`, whose upload gives the guide's sample of failures.
 */
import { BENCH_SCHEMA, benchResult } from './doc-fixtures.ts';
import type { DocEnv } from './doc-context.ts';

const lines = (n: number, line: (i: number) => unknown) => `${Array.from({ length: n }, (_, i) => JSON.stringify(line(i))).join('\n')}\n`;

export async function cliFiles(env: DocEnv): Promise<void> {
  const f = env.file;
  // `compare -o svg --out docs/compare.svg` writes into the project's docs.
  await f('docs/README.md', '# Benchmarks of this project\n');
  await f('out.json', JSON.stringify(benchResult(4, 2270.5)));
  await f('schema.json', JSON.stringify(BENCH_SCHEMA));
  const v2 = structuredClone(BENCH_SCHEMA) as { properties: Record<string, unknown> };
  v2.properties.memory = { type: 'object', properties: { bandwidth: { type: 'number' } } };
  await f('schema-v2.json', JSON.stringify(v2));
  for (const i of [1, 2, 3]) await f(`results/r00${i}.json`, JSON.stringify(benchResult(4, 2200 + i)));
  await f(
    'big.ndjson',
    lines(30, (i) => benchResult(8, 2100 + i)),
  );
  const envelope = (i: number) => ({
    benchmark_id: 'ghcr.io/org/bench:1.0',
    flavor_id: 'CESGA/c4.large',
    execution_datetime: `2025-01-31T1${i}:00:00Z`,
    json: benchResult(4, 2300 + i),
  });
  await f('runs/2025-01/node-1.jsonl', lines(2, envelope));
  // Two failures: a score that is not a number, and a line that is not JSON.
  await f('failing/results/r001.json', JSON.stringify(benchResult(4, 2201)));
  await f('failing/results/r002.json', JSON.stringify(benchResult(4, 2202)));
  await f('failing/results/r003.json', JSON.stringify({ ...benchResult(4, 2203), score: 'fast' }));
  await f('failing/results/nested/batch.ndjson', `${lines(40, (i) => benchResult(2, 2000 + i))}{"score": 1, oops}\n`);
}
