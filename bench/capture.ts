/**
 * What the server asks of PostgreSQL, read from PostgreSQL's statement log (bench/database.ts): each
 * request variant of a scenario is sent once, alone, between two marks. The statements are then the
 * raw SQL baseline and are explained with EXPLAIN (ANALYZE, BUFFERS) against the same database.
 */
import type pg from 'pg';
import type { StatementLog } from './database.ts';
import type { Scenario } from './scenarios.ts';
import type { ServerProcess } from './server.ts';

export interface CapturedRequest {
  variant: number;
  status: number;
  body: unknown;
  /** Executable SQL text of every statement, in the order the server sent them. */
  statements: string[];
  problem: string | null;
  /** Wall time of the request alone, in ms. */
  ms: number;
}

export interface ExplainedStatement {
  role: string;
  sql: string;
  plan: string;
  executionMs: number | null;
  indexes: string[];
  seqScans: string[];
  error: string | null;
}

/**
 * A list page: `… limit N offset M`, possibly inside the subquery `(…) p` that the outputs wrap, or
 * the page of a sort walked in the metric values table: `(… limit N offset M) k join result r on
 * r.id = k.result_id order by …) p`.
 */
export const PAGE_STATEMENT =
  /\blimit '?\d+'? offset '?\d+'?(\s*\)\s*p|\) k join result r on r\.id = k\.result_id order by [^()]*\)\s*p)?\s*$/i;

export function statementRole(sql: string): string {
  if (/^\s*(begin|commit|rollback|savepoint|release|start transaction)\b/i.test(sql)) return 'transaction';
  if (/^\s*select count\(\*\)/i.test(sql)) return 'total';
  if (PAGE_STATEMENT.test(sql)) return 'page';
  if (/\bfrom result r where r\.id = /i.test(sql)) return 'result row';
  if (/^\s*(with \w+ as \(\s*)?insert\b|\binsert into result\b/i.test(sql)) return 'insert';
  if (/\bxmin::text as version\b/i.test(sql)) return 'embedded rows (until cached)';
  if (/\bapp_user\b/i.test(sql)) return 'caller lookup';
  if (/\bvar_samp\(/i.test(sql)) return 'compare';
  if (/\bjsonb_to_recordset\(/i.test(sql) && /\barray_agg\(/i.test(sql)) return 'compare order statistics';
  if (/^\s*declare\s+\w+\s+no\s+scroll\s+cursor\b/i.test(sql)) return 'export cursor';
  if (/^\s*fetch\b/i.test(sql)) return 'export fetch';
  if (/\border by r\.execution_datetime, r\.id\)\s*p\s*$/i.test(sql)) return 'export rows';
  if (/\bresult_tag\b/i.test(sql)) return 'tags of the page';
  return 'lookup';
}

/** The body as JSON when it is, else as text. */
async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text; // not JSON: kept as text for the message
  }
}

/** Sends every variant of `scenario` once, recording the statements each one caused. */
export async function captureScenario(server: ServerProcess, statements: StatementLog, scenario: Scenario): Promise<CapturedRequest[]> {
  const out: CapturedRequest[] = [];
  await statements.start();
  try {
    for (const [i, variant] of scenario.variants.entries()) {
      const { method, path, headers, body } = variant.request;
      const started = performance.now();
      const res = await fetch(`${server.url}${path}`, { method, headers: { accept: 'application/json', ...headers }, body });
      const parsed = variant.consume && res.ok ? await variant.consume(res) : await bodyOf(res);
      const ms = performance.now() - started;
      const issued = (await statements.take()).filter((s) => !UTILITY.test(s));
      out.push({ variant: i, status: res.status, body: parsed, statements: issued, problem: variant.check(res.status, parsed), ms });
    }
  } finally {
    await statements.stop();
  }
  return out;
}

/** Statements that are not the request's work and cannot be explained. */
const UTILITY = /^\s*(set|reset|show|listen|unlisten|discard|deallocate|select pg_advisory)/i;

/**
 * EXPLAIN (ANALYZE, BUFFERS) of each statement, in one transaction that is rolled back (so inserts
 * are measured but not kept); `setup` runs first in it (e.g. removing the row a captured insert made).
 */
export async function explainStatements(client: pg.Client, statements: string[], setup: string[] = []): Promise<ExplainedStatement[]> {
  const out: ExplainedStatement[] = [];
  await client.query('begin');
  try {
    for (const sql of setup) await client.query(sql);
    for (const sql of statements) {
      const role = statementRole(sql);
      if (role === 'transaction') continue;
      await client.query('savepoint explain');
      try {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        const time = /Execution Time: ([\d.]+) ms/.exec(plan);
        out.push({
          role,
          sql,
          plan,
          executionMs: time ? Number(time[1]) : null,
          indexes: [
            ...new Set(
              [...plan.matchAll(/(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\S+)/g)].map((m) => m[1]!),
            ),
          ],
          seqScans: [...new Set([...plan.matchAll(/Seq Scan on (\S+)/g)].map((m) => m[1]!))],
          error: null,
        });
        await client.query('release savepoint explain');
      } catch (err) {
        await client.query('rollback to savepoint explain');
        out.push({ role, sql, plan: '', executionMs: null, indexes: [], seqScans: [], error: (err as Error).message });
      }
    }
  } finally {
    await client.query('rollback');
  }
  return out;
}

/** The text file saved for a scenario: each statement, its role and its plan. */
export function explainText(scenario: Scenario, groups: { label: string; path: string; explained: ExplainedStatement[] }[]): string {
  const lines = [
    `# Scenario ${scenario.id}: ${scenario.title}`,
    `# ${scenario.endpoint}`,
    '# Every statement the server issued for the request, in order, with EXPLAIN (ANALYZE, BUFFERS)',
    '# (run inside a transaction that is rolled back).',
    '',
  ];
  for (const group of groups) {
    lines.push(`## Request: ${group.label}`, `## ${group.path}`, '');
    group.explained.forEach((e, i) => {
      const sql = e.sql.length > 4000 ? `${e.sql.slice(0, 4000)} … (${e.sql.length} characters)` : e.sql;
      lines.push(`-- [${i + 1}/${group.explained.length}] ${e.role}`, `${sql};`, '');
      lines.push(e.error ? `ERROR: ${e.error}` : e.plan, '');
    });
  }
  return lines.join('\n');
}
