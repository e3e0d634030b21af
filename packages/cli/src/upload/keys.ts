/**
 * The Idempotency-Key of each upload request, derived from what it sends: the server, the
 * operation, and each item with its place in the input (file and line or index). Running the same
 * upload again (after an interruption, a timeout, a failed CI job) sends the same keys, and the
 * server, which remembers a key and its answer for 24 h, answers with the results it stored the
 * first time instead of storing them twice. The place keeps two identical results in different
 * lines apart, as they were before keys existed.
 */
import { createHash } from 'node:crypto';
import type { UploadItem } from '@benchmarks/sdk';
import type { RawItem } from './inputs.ts';

/** Bumped if what goes into a key ever changes, so old and new keys never meet. */
const VERSION = 'benchmarks-cli/1';

/** JSON with object members in code-point order: the same content gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Where an item was read: `results/r003.json:1`, `runs.json[4]`. */
export function placeOf(raw: RawItem): string {
  return raw.index !== undefined ? `${raw.source}[${raw.index}]` : `${raw.source}:${raw.line ?? 1}`;
}

/**
 * The key of one request: `benchmarks-cli/1:<operation>:<SHA-256 of server, operation and the
 * items with their places>` (about 100 characters, under the server's 255).
 */
export function uploadKey(server: string, operation: string, items: readonly { place: string; item: UploadItem }[]): string {
  const content = canonicalJson({ version: VERSION, server, operation, items: items.map(({ place, item }) => [place, item]) });
  return `${VERSION}:${operation}:${createHash('sha256').update(content).digest('hex')}`;
}
