/**
 * From what was read to what is sent: each item's benchmark, flavor, execution time and tags come
 * from its envelope `{benchmark_id, flavor_id, execution_datetime, tags_ids, json}` when it has one,
 * else from the flags. Names stand for ids (`image:tag`, `site/flavor`, tag names).
 */
import type { UploadItem } from '@benchmarks/sdk';
import { describeKnown, UsageError } from '../errors.ts';
import type { Resolver } from '../resolve.ts';
import type { RawItem } from './inputs.ts';

const ENVELOPE_KEYS = new Set(['benchmark_id', 'flavor_id', 'execution_datetime', 'tags_ids', 'json']);

/** What the flags give every item. */
export interface Defaults {
  benchmark?: string;
  flavor?: string;
  executedAt?: string;
  tags?: string[];
}

/** An item ready to send (`upload`), or why it cannot be (`error`). */
export interface Prepared {
  raw: RawItem;
  upload?: UploadItem;
  error?: string;
  /** With --resume: what the earlier run's report says of this item (absent: the report ends before it). */
  previous?: { status: string; result_id: string | null };
}

/** An object with a `json` object and no keys but the envelope's. */
export function isEnvelope(value: Record<string, unknown>): boolean {
  const json = value.json;
  return Boolean(json && typeof json === 'object' && !Array.isArray(json)) && Object.keys(value).every((k) => ENVELOPE_KEYS.has(k));
}

/** `now`, or an ISO 8601 date-time with a zone designator (the server needs one). */
export function executionTime(value: string): string {
  if (value.trim().toLowerCase() === 'now') return new Date().toISOString();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value.trim()) || Number.isNaN(Date.parse(value))) {
    throw new UsageError(
      `'${value}' is not an execution time: give an ISO 8601 date-time with a zone, e.g. 2025-01-31T10:00:00Z (or "now").`,
    );
  }
  return value.trim();
}

const message = (err: unknown) => describeKnown(err)?.message ?? (err instanceof Error ? err.message : String(err));

/** The flags' benchmark, flavor and tags as ids, and their execution time, found once for every item. */
export type Resolved = Awaited<ReturnType<typeof resolveDefaults>>;

/** Resolves the flags; `now` becomes one time for the whole upload. */
export async function resolveDefaults(defaults: Defaults, resolver: Resolver) {
  const [benchmark_id, flavor_id, tags_ids] = await Promise.all([
    defaults.benchmark ? resolver.benchmark(defaults.benchmark) : undefined,
    defaults.flavor ? resolver.flavor(defaults.flavor) : undefined,
    Promise.all((defaults.tags ?? []).map((t) => resolver.tag(t))),
  ]);
  return { benchmark_id, flavor_id, execution_datetime: defaults.executedAt && executionTime(defaults.executedAt), tags_ids };
}

/**
 * What to send for one item, or why it cannot be sent. A plain result takes the resolved flags at
 * once (no await per item); an envelope resolves the names it gives (cached by the resolver).
 */
export function prepare(raw: RawItem, defaults: Defaults, resolved: Resolved, resolver: Resolver): Prepared | Promise<Prepared> {
  if (raw.error || !raw.value) return { raw, error: raw.error ?? 'no result' };
  if (isEnvelope(raw.value)) return prepareEnvelope(raw, defaults, resolver);
  const { benchmark_id, flavor_id, execution_datetime, tags_ids } = resolved;
  if (!benchmark_id) return { raw, error: 'no benchmark: pass --benchmark, or give benchmark_id in an envelope' };
  if (!flavor_id) return { raw, error: 'no flavor: pass --flavor, or give flavor_id in an envelope' };
  if (!execution_datetime) return { raw, error: 'no execution time: pass --executed-at, or give execution_datetime in an envelope' };
  const upload: UploadItem = { benchmark_id, flavor_id, execution_datetime, json: raw.value };
  if (tags_ids.length) upload.tags_ids = tags_ids;
  return { raw, upload };
}

async function prepareEnvelope(raw: RawItem, defaults: Defaults, resolver: Resolver): Promise<Prepared> {
  const envelope = raw.value!;
  const json = envelope.json as Record<string, unknown>;
  const pick = (key: string, fallback: string | undefined) => {
    const value = envelope[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') throw new Error(`${key} must be a string`);
    return value;
  };
  try {
    const benchmark = pick('benchmark_id', defaults.benchmark);
    const flavor = pick('flavor_id', defaults.flavor);
    const executed = pick('execution_datetime', defaults.executedAt);
    if (!benchmark) return { raw, error: 'no benchmark: pass --benchmark, or give benchmark_id in an envelope' };
    if (!flavor) return { raw, error: 'no flavor: pass --flavor, or give flavor_id in an envelope' };
    if (!executed) return { raw, error: 'no execution time: pass --executed-at, or give execution_datetime in an envelope' };
    const tagRefs = envelope.tags_ids ?? defaults.tags ?? [];
    if (!Array.isArray(tagRefs) || tagRefs.some((t) => typeof t !== 'string')) throw new Error('tags_ids must be a list of strings');
    const [benchmark_id, flavor_id, tags_ids] = await Promise.all([
      resolver.benchmark(benchmark),
      resolver.flavor(flavor),
      Promise.all((tagRefs as string[]).map((t) => resolver.tag(t))),
    ]);
    const upload: UploadItem = { benchmark_id, flavor_id, execution_datetime: executionTime(executed), json };
    if (tags_ids.length) upload.tags_ids = tags_ids;
    return { raw, upload };
  } catch (err) {
    return { raw, error: message(err) };
  }
}
