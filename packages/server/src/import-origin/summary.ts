/**
 * What an import did, per kind of row: imported, skipped (already here), refused and flagged
 * (imported, worth a look). Counts are exact; each reason keeps a few examples (the summary stays
 * small at a million results), and every refused or flagged row goes to the report (`--report`).
 */

/** The kinds of rows an import moves, in the order it moves them. */
export const KINDS = ['users', 'tags', 'benchmarks', 'sites', 'flavors', 'results', 'result_tags', 'claims'] as const;
export type Kind = (typeof KINDS)[number];

export interface KindCounts {
  /** Rows of this kind in the source (its snapshot). */
  source: number;
  imported: number;
  skipped: number;
  refused: number;
  /** Notes about imported rows (a row may carry more than one). */
  flagged: number;
}

export type NoteOutcome = 'skipped' | 'refused' | 'flagged';

/** One refused or flagged row: its kind, id, a stable UPPER_SNAKE code and a sentence. */
export interface Note {
  kind: Kind;
  id: string;
  code: string;
  reason: string;
}

/** Every row of one kind sharing an outcome and a code: how many, and the first few. */
export interface ReasonGroup {
  kind: Kind;
  outcome: NoteOutcome;
  code: string;
  count: number;
  examples: { id: string; reason: string }[];
}

export interface ImportSummary {
  /** The source's URL without its password. */
  source: string;
  /** How the source's naive timestamps were read. */
  sourceTimezone: string;
  /** False when the run stopped early (interrupted): run it again to finish. */
  complete: boolean;
  seconds: number;
  kinds: Record<Kind, KindCounts>;
  /** Refusals first, then notes, then skips; skipped rows carry no examples. */
  reasons: ReasonGroup[];
}

/** A line of the report file. */
export type ReportLine = Note & { outcome: 'refused' | 'flagged' };

/** Examples kept per reason in the summary (the report file has them all). */
export const EXAMPLES_PER_REASON = 10;

const OUTCOME_ORDER: NoteOutcome[] = ['refused', 'flagged', 'skipped'];

/** Counts of one batch, applied to the tally once the batch is committed (a rolled-back batch counts nothing). */
export class BatchTally {
  readonly imported = new Map<Kind, number>();
  readonly skipped: { kind: Kind; code: string; count: number }[] = [];
  readonly notes: ReportLine[] = [];

  import(kind: Kind, count = 1): void {
    if (count) this.imported.set(kind, (this.imported.get(kind) ?? 0) + count);
  }

  skip(kind: Kind, code: string, count = 1): void {
    if (count) this.skipped.push({ kind, code, count });
  }

  refuse(kind: Kind, id: string, code: string, reason: string): void {
    this.notes.push({ outcome: 'refused', kind, id, code, reason });
  }

  flag(kind: Kind, id: string, code: string, reason: string): void {
    this.notes.push({ outcome: 'flagged', kind, id, code, reason });
  }
}

export class Tally {
  readonly #kinds = Object.fromEntries(KINDS.map((k) => [k, { source: 0, imported: 0, skipped: 0, refused: 0, flagged: 0 }])) as Record<
    Kind,
    KindCounts
  >;
  readonly #groups = new Map<string, ReasonGroup>();
  readonly #report?: (line: ReportLine) => void;

  constructor(report?: (line: ReportLine) => void) {
    this.#report = report;
  }

  setSource(kind: Kind, count: number): void {
    this.#kinds[kind].source = count;
  }

  counts(kind: Kind): Readonly<KindCounts> {
    return this.#kinds[kind];
  }

  /** Rows of a kind dealt with so far, whatever their outcome. */
  done(kind: Kind): number {
    const c = this.#kinds[kind];
    return c.imported + c.skipped + c.refused;
  }

  /** Applies a committed batch. */
  apply(batch: BatchTally): void {
    for (const [kind, count] of batch.imported) this.#kinds[kind].imported += count;
    for (const s of batch.skipped) {
      this.#kinds[s.kind].skipped += s.count;
      this.#group(s.kind, 'skipped', s.code).count += s.count;
    }
    for (const note of batch.notes) {
      this.#kinds[note.kind][note.outcome] += 1;
      const group = this.#group(note.kind, note.outcome, note.code);
      group.count += 1;
      if (group.examples.length < EXAMPLES_PER_REASON) group.examples.push({ id: note.id, reason: note.reason });
      this.#report?.(note);
    }
  }

  #group(kind: Kind, outcome: NoteOutcome, code: string): ReasonGroup {
    const key = `${outcome}\u0000${kind}\u0000${code}`;
    let group = this.#groups.get(key);
    if (!group) {
      group = { kind, outcome, code, count: 0, examples: [] };
      this.#groups.set(key, group);
    }
    return group;
  }

  summary(fields: Omit<ImportSummary, 'kinds' | 'reasons'>): ImportSummary {
    const reasons = [...this.#groups.values()].sort(
      (a, b) => OUTCOME_ORDER.indexOf(a.outcome) - OUTCOME_ORDER.indexOf(b.outcome) || KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind),
    );
    return { ...fields, kinds: structuredClone(this.#kinds), reasons: structuredClone(reasons) };
  }
}

/** Whether anything was refused: the command then exits 1. */
export function anyRefused(summary: ImportSummary): boolean {
  return KINDS.some((k) => summary.kinds[k].refused > 0);
}
