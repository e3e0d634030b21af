/**
 * `npm run bench:cli-upload`: the CLI's streaming upload, end to end. Generates an NDJSON file of
 * results (~230 bytes each, like a benchmark runner's dump), starts a real server on an embedded
 * PostgreSQL trusting a real OpenID provider (the test harness: rate limits off, since the client
 * is measured), uploads the file with the bundled CLI (`packages/cli/dist/benchmarks.js`, built
 * first) and reports the time, results/s and the CLI's peak RSS (VmHWM from /proc/<pid>/status),
 * then checks that the server stored every result once.
 *
 *   npm run bench:cli-upload                    # a 1024 MB file
 *   npm run bench:cli-upload -- --mb 64         # a quick run
 *   npm run bench:cli-upload -- --mb 256 --heap 64 --dry-run --source
 *
 * Options: --mb N (file size), --heap MB (the CLI's --max-old-space-size; default Node's own),
 * --node-args '<flags>' (more Node flags for the CLI),
 * --batch-size N, --concurrency N (the CLI's defaults otherwise), --dry-run (also time a dry run
 * first), --source (run the CLI from its TypeScript sources, bin/benchmarks.js, instead of the bundle).
 * Writes bench/results/cli-upload.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestServer, type TestServer } from '../packages/server/test/support/harness.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    mb: { type: 'string', default: '1024' },
    heap: { type: 'string' },
    'node-args': { type: 'string' },
    'batch-size': { type: 'string' },
    concurrency: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    source: { type: 'boolean', default: false },
  },
});
const log = (message: string) => console.log(`[cli-upload ${new Date().toISOString().slice(11, 19)}] ${message}`);

/** A benchmark (whose schema requires a numeric score), a site and a flavor, approved (created by an admin). */
async function seed(t: TestServer) {
  const admin = await t.admin('bench-admin');
  const created = async (path: string, body: unknown) => {
    const res = await t.request('POST', path, { token: admin, body });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body as { id: string; name: string };
  };
  const schema = { type: 'object', required: ['score'], properties: { score: { type: 'number' }, machine: { type: 'object' } } };
  const benchmark = await created('/benchmarks', { container_image: 'ghcr.io/bench/upload', container_tag: '1.0', json_schema: schema });
  const site = await created('/sites', { name: 'Bench site', address: 'Santiago de Compostela, Spain' });
  const flavor = await created(`/sites/${site.id}/flavors`, { name: 'c4.large' });
  return { benchmark, site, flavor };
}

/** Writes results until the file reaches `bytes`; resolves to the number of lines. */
async function generate(path: string, bytes: number): Promise<number> {
  const out = createWriteStream(path, { highWaterMark: 1 << 20 });
  let written = 0;
  let lines = 0;
  while (written < bytes) {
    const i = lines++;
    const line =
      `{"score":${((i * 7919) % 100000) / 10},"machine":{"cpu":{"count":${(i % 64) + 1},"model":"AMD EPYC 7763"},"memory_gb":${(i % 8) * 16 + 16}},` +
      `"run":{"seq":${i},"host":"node-${i % 512}","duration_s":${(i % 3600) + 0.25}},"latency_ms":[${i % 13},${i % 17},${i % 19},${i % 23}],"ok":true}\n`;
    written += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return lines;
}

/** Runs the CLI, sampling its memory: resolves to its exit, time and peak RSS (MB). */
async function runCli(cli: string[], argv: string[], env: Record<string, string>) {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [...cli, ...argv], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
  let peakKb = 0;
  let rssKb = 0;
  const sample = async () => {
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
    peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? rssKb);
  };
  const timer = setInterval(() => void sample(), 100);
  const [code] = (await once(child, 'close')) as [number | null];
  clearInterval(timer);
  return { code, seconds: Number(process.hrtime.bigint() - started) / 1e9, peakMb: peakKb / 1024, lastRssMb: rssKb / 1024, stderr };
}

async function main(): Promise<void> {
  const mb = Number(args.mb);
  if (!(mb > 0)) throw new Error('--mb must be a positive number');
  let cli = [join(ROOT, 'packages', 'cli', 'dist', 'benchmarks.js')];
  if (args.source) cli = [join(ROOT, 'bin', 'benchmarks.js')];
  else {
    log('building the CLI bundle (npm run build -- --cli)');
    const built = spawnSync(process.execPath, ['--import', './scripts/dev/register.js', 'scripts/build.ts', '--cli'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    if (built.status !== 0) throw new Error('the CLI bundle did not build');
  }
  if (args.heap) cli = [`--max-old-space-size=${args.heap}`, ...cli];
  if (args['node-args']) cli = [...args['node-args'].split(' ').filter(Boolean), ...cli];

  const dir = await mkdtemp(join(tmpdir(), 'benchmarks-cli-upload-'));
  let t: TestServer | undefined;
  try {
    const file = join(dir, 'results.ndjson');
    log(`generating ${mb} MB of NDJSON in ${file}`);
    const lines = await generate(file, mb * 1024 * 1024);
    const size = (await stat(file)).size;
    log(`${lines} results, ${(size / 1048576).toFixed(0)} MB`);

    t = await startTestServer({}, 'bench_cli_upload');
    const c = await seed(t);
    const token = await t.user('bench-uploader');
    const upload = [
      'results',
      'upload',
      file,
      '--benchmark',
      c.benchmark.name,
      '--flavor',
      `${c.site.name}/${c.flavor.name}`,
      '--executed-at',
      '2025-06-01T00:00:00Z',
      '--output',
      'table',
      '--quiet',
      ...(args['batch-size'] ? ['--batch-size', args['batch-size']] : []),
      ...(args.concurrency ? ['--concurrency', args.concurrency] : []),
    ];
    const env = { BENCHMARKS_SERVER: t.url, BENCHMARKS_TOKEN: token, BENCHMARKS_CONFIG: join(dir, 'config.json'), HOME: dir };

    let dry: Awaited<ReturnType<typeof runCli>> | undefined;
    if (args['dry-run']) {
      log('dry run');
      dry = await runCli(cli, [...upload, '--dry-run'], env);
      if (dry.code !== 0) throw new Error(`the dry run failed (${dry.code}):\n${dry.stderr}`);
      log(`dry run: ${dry.seconds.toFixed(1)} s, ${(lines / dry.seconds).toFixed(0)} results/s, peak RSS ${dry.peakMb.toFixed(0)} MB`);
    }
    log('upload');
    const up = await runCli(cli, upload, env);
    if (up.code !== 0) throw new Error(`the upload failed (${up.code}):\n${up.stderr}`);
    const stored = (await t.request('GET', '/results', { query: { benchmark_id: c.benchmark.id, per_page: 1 } })).body.total as number;
    if (stored !== lines) throw new Error(`the server stored ${stored} results, not ${lines}`);
    log(
      `upload: ${up.seconds.toFixed(1)} s, ${(lines / up.seconds).toFixed(0)} results/s, ${(size / 1048576 / up.seconds).toFixed(1)} MB/s, peak RSS ${up.peakMb.toFixed(0)} MB; ${stored} stored, each once`,
    );

    const result = {
      date: new Date().toISOString(),
      cli: args.source ? 'sources (bin/benchmarks.js)' : 'bundle (packages/cli/dist/benchmarks.js)',
      heapMb: args.heap ? Number(args.heap) : null,
      nodeArgs: args['node-args'] ?? null,
      fileMb: Math.round(size / 1048576),
      results: lines,
      batchSize: args['batch-size'] ? Number(args['batch-size']) : 100,
      concurrency: args.concurrency ? Number(args.concurrency) : 4,
      upload: { seconds: +up.seconds.toFixed(1), resultsPerSecond: Math.round(lines / up.seconds), peakRssMb: Math.round(up.peakMb) },
      dryRun: dry
        ? { seconds: +dry.seconds.toFixed(1), resultsPerSecond: Math.round(lines / dry.seconds), peakRssMb: Math.round(dry.peakMb) }
        : null,
    };
    await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
    await writeFile(join(ROOT, 'bench', 'results', 'cli-upload.json'), `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
