/** The outcome of every item: the summary on stderr, the `--report` file, the data on stdout. */
import { writeFile } from 'node:fs/promises';
import { ApiError } from '@benchmarks/sdk';
import { describeKnown } from '../errors.ts';
import type { Column } from '../output.ts';
import { where, type RawItem } from './inputs.ts';

export type ItemStatus = 'uploaded' | 'failed' | 'skipped' | 'valid' | 'invalid';

export interface ItemReport {
  source: string;
  line: number | null;
  index: number | null;
  status: ItemStatus;
  /** The stored result's id, once uploaded. */
  result_id: string | null;
  /** Why it failed: the server's reason, or what was wrong locally. */
  error: { message: string; status?: number; code?: string; errors?: { in: string; path: string; message: string }[] } | null;
}

export function itemReport(raw: RawItem, status: ItemStatus, extra: { resultId?: string; error?: unknown } = {}): ItemReport {
  return {
    source: raw.source,
    line: raw.line ?? null,
    index: raw.index ?? null,
    status,
    result_id: extra.resultId ?? null,
    error: extra.error === undefined ? null : errorReport(extra.error),
  };
}

function errorReport(error: unknown): ItemReport['error'] {
  if (typeof error === 'string') return { message: error };
  if (error && typeof error === 'object' && !(error instanceof Error) && typeof (error as { message?: unknown }).message === 'string') {
    return error as ItemReport['error'];
  }
  if (error instanceof ApiError) {
    return { message: error.detail, status: error.status, code: error.code, ...(error.errors.length ? { errors: error.errors } : {}) };
  }
  return { message: describeKnown(error)?.message ?? (error instanceof Error ? error.message : String(error)) };
}

/** `422 SCHEMA_VIOLATION: detail (/a: must be number; ...)` */
export function reason(e: NonNullable<ItemReport['error']>): string {
  const details = (e.errors ?? []).map((d) => (d.path && d.path !== '/' ? `${d.path}: ${d.message}` : d.message));
  const shown = details.slice(0, 5).join('; ') + (details.length > 5 ? `; and ${details.length - 5} more` : '');
  return `${e.status ? `${e.status} ${e.code}: ` : ''}${e.message}${shown ? ` (${shown})` : ''}`;
}

/** `file:line: reason` */
export function failureLine(item: ItemReport): string {
  const place = where({ source: item.source, line: item.line ?? undefined, index: item.index ?? undefined });
  return item.error ? `${place}: ${reason(item.error)}` : place;
}

export function summarize(items: readonly ItemReport[]) {
  const count = (status: ItemStatus) => items.filter((i) => i.status === status).length;
  return {
    total: items.length,
    uploaded: count('uploaded'),
    failed: count('failed'),
    skipped: count('skipped'),
    valid: count('valid'),
    invalid: count('invalid'),
  };
}

export async function writeReport(path: string, report: { dry_run: boolean; summary: ReturnType<typeof summarize>; items: ItemReport[] }) {
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
}

export const reportColumns: Column<ItemReport>[] = [
  { header: 'source', value: (i) => i.source },
  { header: 'line', value: (i) => i.line },
  { header: 'index', value: (i) => i.index },
  { header: 'status', value: (i) => i.status },
  { header: 'result_id', value: (i) => i.result_id },
  { header: 'error', value: (i) => (i.error ? reason(i.error) : null) },
];
