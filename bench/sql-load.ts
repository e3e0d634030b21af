/**
 * The raw SQL baseline: the statements a scenario needs, sent straight to PostgreSQL by `connections`
 * clients for `seconds`, one "transaction" being the statements of one request variant in order.
 *
 * - With pgbench installed: one custom script per variant (`-f file@1`, pgbench picks a script at
 *   random for each transaction), simple query protocol as the server's driver uses,
 *   per-transaction log (`-l`) for the latency percentiles.
 * - Without it: a minimal Node loop, one pg client per connection, each running variants round-robin
 *   until the deadline; the same statements, the same protocol.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { summarize, type LatencySummary } from './stats.ts';

export type BaselineTool = 'pgbench' | 'node';

export interface SqlTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface SqlRunStats {
  tool: BaselineTool;
  connections: number;
  seconds: number;
  transactions: number;
  tps: number;
  latencyMs: LatencySummary;
  errors: number;
  firstError: string | null;
}

/** pgbench caps the number of scripts per run. */
export const MAX_SCRIPTS = 100;

let pgbenchChecked: string | null | undefined;

/** The pgbench version line, or null when pgbench is not installed. */
export function pgbenchVersion(): string | null {
  if (pgbenchChecked === undefined) {
    const r = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
    pgbenchChecked = r.status === 0 ? r.stdout.trim() : null;
  }
  return pgbenchChecked;
}

export function runSqlLoad(
  tool: BaselineTool,
  target: SqlTarget,
  scripts: string[][],
  connections: number,
  seconds: number,
  workDir: string,
): Promise<SqlRunStats> {
  if (scripts.length === 0) throw new Error('no SQL to run');
  return tool === 'pgbench' ? runPgbench(target, scripts, connections, seconds, workDir) : runNode(target, scripts, connections, seconds);
}

const statement = (sql: string) => sql.trim().replace(/;\s*$/, '');

async function runPgbench(
  target: SqlTarget,
  scripts: string[][],
  connections: number,
  seconds: number,
  workDir: string,
): Promise<SqlRunStats> {
  const dir = join(workDir, `pgbench-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const used = scripts.slice(0, MAX_SCRIPTS);
  const files = used.map((statements, i) => {
    const file = join(dir, `script-${i}.sql`);
    writeFileSync(file, statements.map((s) => `${statement(s)};\n`).join(''));
    return file;
  });
  const args = [
    '-n', // no vacuum of pgbench's own tables
    '-M',
    'simple',
    '-c',
    String(connections),
    '-j',
    String(Math.min(connections, 2)),
    // pgbench takes whole seconds: a run of 10.5 s is one of 11.
    '-T',
    String(Math.max(1, Math.ceil(seconds))),
    '-l',
    '--log-prefix',
    join(dir, 'log'),
    '-h',
    target.host,
    '-p',
    String(target.port),
    '-U',
    target.user,
    ...files.flatMap((f) => ['-f', `${f}@1`]),
    target.database,
  ];
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('pgbench', args, { env: { ...process.env, PGPASSWORD: target.password, PGAPPNAME: 'bench-baseline' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const latencies: number[] = [];
  for (const name of readdirSync(dir).filter((f) => f.startsWith('log'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      // client_id transaction_no time(µs) script_no time_epoch time_us
      const fields = line.split(' ');
      if (fields.length >= 6) latencies.push(Number(fields[2]) / 1000);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out.stdout);
  const processed = /number of transactions actually processed: (\d+)/.exec(out.stdout);
  const failed = /number of failed transactions: (\d+)/.exec(out.stdout);
  const aborted = /(client \d+ aborted[^\n]*|ERROR:[^\n]*)/.exec(out.stderr);
  const errors = (failed ? Number(failed[1]) : 0) + (out.code === 0 ? 0 : Math.max(1, (out.stderr.match(/aborted/g) ?? []).length));
  if (!tps && out.code !== 0) {
    throw new Error(`pgbench failed (exit ${out.code}): ${out.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  }
  return {
    tool: 'pgbench',
    connections,
    seconds: Math.max(1, Math.ceil(seconds)),
    transactions: processed ? Number(processed[1]) : latencies.length,
    tps: tps ? Math.round(Number(tps[1]) * 10) / 10 : 0,
    latencyMs: summarize(latencies),
    errors,
    firstError: aborted ? aborted[1]! : null,
  };
}

async function runNode(target: SqlTarget, scripts: string[][], connections: number, seconds: number): Promise<SqlRunStats> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ ...target, application_name: 'bench-baseline' });
      await c.connect();
      return c;
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  try {
    await Promise.all(
      clients.map(async (client, k) => {
        for (let i = k; performance.now() < deadline; i++) {
          const script = scripts[i % scripts.length]!;
          const t0 = performance.now();
          try {
            for (const sql of script) await client.query(statement(sql));
            latencies.push(performance.now() - t0);
          } catch (err) {
            errors++;
            firstError ??= (err as Error).message;
            await client.query('rollback').catch(() => {});
          }
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  const elapsed = (performance.now() - started) / 1000;
  return {
    tool: 'node',
    connections,
    seconds: Math.round(elapsed * 100) / 100,
    transactions: latencies.length,
    tps: Math.round((latencies.length / elapsed) * 10) / 10,
    latencyMs: summarize(latencies),
    errors,
    firstError,
  };
}
