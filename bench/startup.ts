/**
 * `npm run bench:startup [-- options]`: how fast the packages start, how much memory the server
 * holds and what the packages weigh, compiled (now) against the sources through tsx (before).
 * Reports figures; it checks nothing. See docs/performance.md, "Start-up, memory and size".
 *
 *   --runs <n>     runs of each CLI command (default 20)
 *   --starts <n>   measured starts of each server variant (default 5)
 *   --no-build     measure the packages/*\/dist already built (default: `npm run build` first)
 *   --no-docs      write bench/results/startup.json only
 *   --render       run nothing: rewrite docs/performance.md from bench/results/startup.json
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startTemporaryCluster } from '../packages/server/test/support/database.ts';
import { killAll, output } from './startup-process.ts';
import { markdownSection, writeJson, writeMarkdown, type StartupReport } from './startup-report.ts';
import { installFootprint, pack, repositoryFootprint } from './startup-size.ts';
import { measureServerStart, timeCommands, type Command, type ServerStart } from './startup-timing.ts';
import { productionNodeArgs } from './server-process.ts';
import { percentile } from './stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The last commit before the packages were built to dist/: the old way of installing. */
const BEFORE_COMMIT = '5292b44';
const IDLE_SECONDS = 5;
const WARMUP_REQUESTS = 200;

function parseArgs(argv: string[]) {
  const o = { runs: 20, starts: 5, build: true, docs: true, render: false };
  for (let i = 0; i < argv.length; i++) {
    const count = () => {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${argv[i - 1]} takes a positive integer, not '${argv[i]}'`);
      return n;
    };
    if (argv[i] === '--runs') o.runs = count();
    else if (argv[i] === '--starts') o.starts = count();
    else if (argv[i] === '--no-build') o.build = false;
    else if (argv[i] === '--no-docs') o.docs = false;
    else if (argv[i] === '--render') o.render = true;
    else if (argv[i] === '--help' || argv[i] === '-h') {
      console.log('usage: npm run bench:startup -- [--runs 20] [--starts 5] [--no-build] [--no-docs] [--render]');
      process.exit(0);
    } else throw new Error(`unknown option ${argv[i]} (see --help)`);
  }
  return o;
}

const log = (message: string) => process.stderr.write(`[bench:startup] ${message}\n`);

async function build(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', join(ROOT, 'scripts/dev/register.js'), join(ROOT, 'scripts/build.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the build failed (exit ${code})`);
  return Math.round((performance.now() - started) / 100) / 10;
}

function medianStart(starts: ServerStart[]): ServerStart {
  const med = (pick: (s: ServerStart) => number) =>
    percentile(
      starts.map(pick).sort((a, b) => a - b),
      50,
    );
  return {
    listenMs: med((s) => s.listenMs),
    healthMs: med((s) => s.healthMs),
    cpuMs: med((s) => s.cpuMs),
    idleRssMb: med((s) => s.idleRssMb),
    childRssMb: med((s) => s.childRssMb),
    warmRssMb: med((s) => s.warmRssMb),
  };
}

/** The server variants: the sources through tsx (with and without its compile cache) and the installed package. */
function servers(installed: string): { key: string; label: string; entry: string; env: Record<string, string> }[] {
  return [
    {
      key: 'before-cold',
      label: 'before, tsx without its cache (a new container)',
      entry: 'bin/benchmarks-server.js',
      env: { TSX_DISABLE_CACHE: '1' },
    },
    { key: 'before', label: 'before: `node bin/benchmarks-server.js` (tsx, warm cache)', entry: 'bin/benchmarks-server.js', env: {} },
    {
      key: 'after',
      label: 'after: `benchmarks-server` = `node …/@benchmarks/server/dist/cli.js`',
      entry: join(installed, 'node_modules/@benchmarks/server/dist/cli.js'),
      env: {},
    },
  ];
}

async function measureServers(
  work: string,
  installed: string,
  starts: number,
  onCluster: (stop: () => Promise<void>) => void,
): Promise<StartupReport['server']> {
  const variants = servers(installed);
  log('starting PostgreSQL');
  const cluster = await startTemporaryCluster();
  onCluster(cluster.stop);
  // The cluster's `benchmarks` database (created with it); its URL names `postgres`.
  const databaseUrl = cluster.url.replace(/\/postgres$/, '/benchmarks');
  const dataDir = join(work, 'server-data');
  const samples = new Map<string, ServerStart[]>(variants.map((s) => [s.key, []]));
  try {
    // One unmeasured start of each: the first applies the migrations, the others fill the caches.
    for (const s of variants)
      await measureServerStart({ cwd: ROOT, entry: s.entry, env: s.env, databaseUrl, dataDir, idleSeconds: 0, warmupRequests: 0 });
    for (let i = 0; i < starts; i++) {
      // Taking turns, in a rotating order, so that neither variant always follows the other.
      for (let j = 0; j < variants.length; j++) {
        const s = variants[(i + j) % variants.length]!;
        const start = await measureServerStart({
          cwd: ROOT,
          entry: s.entry,
          env: s.env,
          databaseUrl,
          dataDir,
          idleSeconds: IDLE_SECONDS,
          warmupRequests: WARMUP_REQUESTS,
        });
        log(
          `server ${s.key} #${i + 1}: first 200 after ${start.healthMs} ms (${start.cpuMs} ms CPU), idle RSS ${start.idleRssMb} MB, ${start.warmRssMb} MB after requests`,
        );
        samples.get(s.key)!.push(start);
      }
    }
  } finally {
    await cluster.stop();
  }
  return variants.map((s) => ({ key: s.key, label: s.label, median: medianStart(samples.get(s.key)!), starts: samples.get(s.key)! }));
}

/** The packages and their installs; `dirs` are the install folders (by key), which outlive this. */
async function measureSizes(work: string): Promise<Pick<StartupReport, 'packages' | 'installs'> & { dirs: Record<string, string> }> {
  const packs = join(work, 'packs');
  mkdirSync(packs);
  const packages = await pack(ROOT, { sdk: 'dist/index.js', server: 'dist/cli.js', cli: 'dist/benchmarks.js', demo: 'dist/cli.js' }, packs);
  const file = (name: string) => packages.find((p) => p.name === name)!.filename;
  const sdk = file('@benchmarks/sdk');
  const server = file('@benchmarks/server');
  const sets = [
    { key: 'sdk', label: '`@benchmarks/sdk`', tarballs: [sdk] },
    { key: 'server', label: '`@benchmarks/server` (with the SDK)', tarballs: [sdk, server] },
    { key: 'cli', label: '`@benchmarks/cli`', tarballs: [file('@benchmarks/cli')] },
    { key: 'demo', label: '`@benchmarks/demo` (with the server and the SDK)', tarballs: [sdk, server, file('@benchmarks/demo')] },
  ];
  const installs: StartupReport['installs'] = [];
  const dirs: Record<string, string> = {};
  for (const set of sets) {
    log(`installing ${set.key}`);
    dirs[set.key] = mkdtempSync(join(work, `install-${set.key}-`));
    installs.push({ key: set.key, label: set.label, footprint: await installFootprint(dirs[set.key]!, set.tarballs) });
  }
  log(`installing the repository at ${BEFORE_COMMIT} for production`);
  const before = await repositoryFootprint(ROOT, BEFORE_COMMIT, mkdtempSync(join(work, 'before-')));
  installs.push({ key: 'before', label: `before: the repository at ${BEFORE_COMMIT}, \`npm ci --omit=dev\``, footprint: before });
  return { packages: packages.map((p) => ({ ...p, filename: p.filename.slice(packs.length + 1) })), installs, dirs };
}

const JSON_FILE = join(ROOT, 'bench', 'results', 'startup.json');
const DOCS = join(ROOT, 'docs', 'performance.md');
const started = performance.now();
const loadAtStart = loadavg()[0]!;
const options = parseArgs(process.argv.slice(2));
if (options.render) {
  writeMarkdown(DOCS, markdownSection(JSON.parse(readFileSync(JSON_FILE, 'utf8')) as StartupReport));
  console.log(`rewrote ${DOCS} from ${JSON_FILE}`);
  process.exit(0);
}
// Outside the repository, so that npm finds no workspace above the test installs.
const work = mkdtempSync(join(tmpdir(), 'benchmarks-startup-'));
let stopCluster: (() => Promise<void>) | undefined;
const cleanUp = async () => {
  killAll();
  await stopCluster?.().catch(() => {});
  stopCluster = undefined;
  rmSync(work, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

try {
  const buildSeconds = options.build ? await build() : null;
  // Packed and installed right after the build: the 'after' figures are those of the installed
  // packages, which a concurrent build or test in this tree (emptying packages/*/dist) cannot disturb.
  const { dirs, ...sizes } = await measureSizes(work);
  const cliBundle = join(dirs.cli!, 'node_modules/@benchmarks/cli/dist/benchmarks.js');
  const empty = join(work, 'empty.mjs');
  writeFileSync(empty, '');
  const commands: Command[] = [
    { key: 'node', label: '`node -e 0` (baseline)', args: ['-e', '0'] },
    { key: 'empty', label: '`node empty.mjs`', args: [empty] },
    { key: 'before-help', label: 'before: `node bin/benchmarks.js --help` (tsx)', args: ['bin/benchmarks.js', '--help'] },
    {
      key: 'after-help',
      label: 'after: `benchmarks --help` = `node …/@benchmarks/cli/dist/benchmarks.js --help`',
      args: [cliBundle, '--help'],
    },
    { key: 'after-version', label: 'after: `benchmarks --version`', args: [cliBundle, '--version'] },
  ];
  log(`timing the CLI: ${options.runs} runs of ${commands.length} commands`);
  const timings = await timeCommands(ROOT, commands, options.runs);
  const cli = commands.map((c) => ({
    key: c.key,
    label: c.label,
    timing: timings[c.key]!,
    ratio: Math.round((timings[c.key]!.medianMs / timings.node!.medianMs) * 10) / 10,
  }));
  const server = await measureServers(work, dirs.server!, options.starts, (stop) => (stopCluster = stop));
  stopCluster = undefined;
  const report: StartupReport = {
    version: 1,
    generatedAt: new Date().toISOString(),
    elapsedSeconds: Math.round((performance.now() - started) / 1000),
    buildSeconds,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGb: Math.round(totalmem() / 2 ** 30),
      platform: `${platform()} ${release()}`,
      node: process.version,
      npm: (await output('npm', ['--version'], { cwd: work })).trim(),
      loadAverage: [Math.round(loadAtStart * 10) / 10, Math.round(loadavg()[0]! * 10) / 10],
    },
    options: {
      runs: options.runs,
      starts: options.starts,
      idleSeconds: IDLE_SECONDS,
      warmupRequests: WARMUP_REQUESTS,
      beforeCommit: BEFORE_COMMIT,
      serverNodeArgs: productionNodeArgs(),
    },
    cli,
    server,
    ...sizes,
  };
  writeJson(JSON_FILE, report);
  if (options.docs) writeMarkdown(DOCS, markdownSection(report));
  process.stdout.write(`${markdownSection(report)}\n\nwrote ${JSON_FILE}${options.docs ? ' and docs/performance.md' : ''}\n`);
} catch (err) {
  console.error((err as Error).stack ?? String(err));
  process.exitCode = 1;
} finally {
  await cleanUp();
}
