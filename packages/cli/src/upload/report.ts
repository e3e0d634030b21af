/**
 * The outcome of every item: counted for the summary, written to the `--report` file as the upload
 * goes (never all held in memory), the first failures kept to be listed at the end (summary.ts).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { ApiError } from '@benchmarks/sdk';
import { describeKnown, problemList } from '../errors.ts';
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

export function itemReport(raw: RawItem, status: ItemStatus, extra: { resultId?: string | null; error?: unknown } = {}): ItemReport {
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
export const reason = (e: NonNullable<ItemReport['error']>) =>
  `${e.status ? `${e.status} ${e.code}: ` : ''}${e.message}${problemList(e.errors ?? [])}`;

/** `file:line: reason` */
export const failureLine = (item: ItemReport) => (item.error ? `${where(item)}: ${reason(item.error)}` : where(item));

export type Summary = Record<'total' | ItemStatus, number>;

/**
 * Failures listed in the summary; the rest are only counted (every one is in the report). Enough to
 * see what went wrong, few enough that a CI log stays readable whatever the size of the upload.
 */
export const SHOWN_FAILURES = 20;

/** Counts the outcomes and keeps the first failures to list. */
export class Tally {
  readonly summary: Summary = { total: 0, uploaded: 0, failed: 0, skipped: 0, valid: 0, invalid: 0 };
  /** The first {@link SHOWN_FAILURES} failed or invalid items, in input order. */
  readonly failures: ItemReport[] = [];
  /** Items uploaded by the run a `--resume` continues (counted in `uploaded` too). */
  resumed = 0;
  /** Items the server had already stored, under the same Idempotency-Key (counted in `uploaded` too). */
  duplicates = 0;

  add(items: readonly ItemReport[]): void {
    for (const item of items) {
      this.summary.total++;
      this.summary[item.status]++;
      if ((item.status === 'failed' || item.status === 'invalid') && this.failures.length < SHOWN_FAILURES) this.failures.push(item);
    }
  }

  get bad(): number {
    return this.summary.failed + this.summary.invalid;
  }
}

/** What the report records of the command, so that `--resume` can run it again the same way. */
export interface RecordedCommand {
  server: string;
  inputs: string[];
  benchmark: string | null;
  flavor: string | null;
  /** The execution time as sent (`now` resolved once). */
  executed_at: string | null;
  tags: string[];
  batch_size: number;
}

/**
 * The `--report` file, written as the upload goes: one item per line, in input order, so that an
 * interrupted upload leaves a report that `--resume` can read (up to its last whole line).
 * Synchronous writes: each item is in the file as soon as it is known.
 */
export class ReportFile {
  readonly #fd: number;
  /** The last item's line, written with its comma once another follows. */
  #held: string | undefined;

  constructor(path: string, header: { dry_run: boolean; command: RecordedCommand | null }) {
    this.#fd = openSync(path, 'w');
    writeSync(this.#fd, `{\n  "dry_run": ${header.dry_run},\n  "command": ${JSON.stringify(header.command)},\n  "items": [\n`);
  }

  add(items: readonly ItemReport[]): void {
    if (items.length === 0) return;
    const lines = items.map((item) => `    ${JSON.stringify(item)}`);
    const text =
      (this.#held === undefined ? '' : `${this.#held},\n`) +
      lines
        .slice(0, -1)
        .map((l) => `${l},\n`)
        .join('');
    this.#held = lines[lines.length - 1];
    if (text) writeSync(this.#fd, text);
  }

  close(summary: Summary): void {
    writeSync(this.#fd, `${this.#held === undefined ? '' : `${this.#held}\n`}  ],\n  "summary": ${JSON.stringify(summary)}\n}\n`);
    closeSync(this.#fd);
  }
}
