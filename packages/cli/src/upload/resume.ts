/**
 * `--resume REPORT`: the report of an earlier upload, read line by line alongside the inputs (its
 * items are in input order), so that what it stored is not sent again. A report cut short (the
 * process was killed) is read up to its last whole item line.
 */
import { createReadStream } from 'node:fs';
import { CliError, UsageError } from '../errors.ts';
import { where } from './inputs.ts';
import { JsonSplitter } from './json-splitter.ts';
import type { ItemReport, RecordedCommand } from './report.ts';

async function* reportLines(path: string): AsyncGenerator<string> {
  const splitter = new JsonSplitter('lines');
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  try {
    for await (const chunk of stream) for (const piece of splitter.push(chunk as string)) yield piece.text;
  } catch (err) {
    throw new UsageError(`Cannot read the report ${path}: ${(err as Error).message}`);
  }
  for (const piece of splitter.end()) yield piece.text;
}

const withoutComma = (line: string) => (line.endsWith(',') ? line.slice(0, -1) : line);

export class ResumeReport {
  /** The earlier command, as recorded. */
  readonly command: RecordedCommand;
  /** Items read from the report and not yet matched with the inputs. */
  #buffered: ItemReport[] = [];
  #lines: AsyncGenerator<string>;
  #inItems = true;
  /** Items the report covers so far. */
  covered = 0;

  private constructor(command: RecordedCommand, lines: AsyncGenerator<string>) {
    this.command = command;
    this.#lines = lines;
  }

  /** Reads the report's header: a report of an upload (not a dry run) written by this version. */
  static async open(path: string): Promise<ResumeReport> {
    const lines = reportLines(path);
    const fields: Record<string, unknown> = {};
    // Not `for await`: leaving it would close the lines that the items are read from next.
    for (let next = await lines.next(); !next.done; next = await lines.next()) {
      const line = next.value;
      if (line === '"items": [') {
        if (fields.dry_run !== false) throw new UsageError(`${path} is the report of a dry run: there is nothing to resume.`);
        const command = fields.command as RecordedCommand | null | undefined;
        if (!command || !Array.isArray(command.inputs)) throw new UsageError(`${path} does not record its command: it cannot be resumed.`);
        return new ResumeReport(command, lines);
      }
      if (!line.startsWith('"')) continue;
      try {
        Object.assign(fields, JSON.parse(`{${withoutComma(line)}}`));
      } catch {
        break;
      }
    }
    await lines.return(undefined);
    throw new UsageError(
      `${path} is not a report of \`benchmarks results upload --report\` (written by this version): it cannot be resumed.`,
    );
  }

  /**
   * What the report says of the next input item, which must be the one it names (the same inputs in
   * the same order); `undefined` once the report ends (complete, or cut short).
   */
  async next(item: { source: string; line?: number; index?: number }): Promise<ItemReport | undefined> {
    if (this.#buffered.length === 0 && this.#inItems) await this.#fill();
    const previous = this.#buffered.shift();
    if (!previous) return undefined;
    if (previous.source !== item.source || (previous.line ?? undefined) !== item.line || (previous.index ?? undefined) !== item.index) {
      throw new CliError(
        `The report does not match the inputs: its item ${this.covered + 1} is ${where(previous)}, ` +
          `the inputs give ${where(item)}. Resume with the same inputs, in the same order, from the same directory.`,
      );
    }
    this.covered++;
    return previous;
  }

  /** The items the report records beyond those matched so far, as they are. */
  async *rest(): AsyncGenerator<ItemReport[]> {
    for (;;) {
      if (this.#buffered.length === 0 && this.#inItems) await this.#fill();
      if (this.#buffered.length === 0) return;
      const items = this.#buffered;
      this.#buffered = [];
      this.covered += items.length;
      yield items;
    }
  }

  async #fill(): Promise<void> {
    while (this.#buffered.length < 1000) {
      const next = await this.#lines.next();
      if (next.done) break;
      const line = withoutComma(next.value);
      if (!line.startsWith('{"source"')) {
        if (line.startsWith(']')) break;
        continue;
      }
      try {
        this.#buffered.push(JSON.parse(line) as ItemReport);
      } catch {
        // The last line of a report cut short: the report ends before it.
        break;
      }
    }
    if (this.#buffered.length < 1000) {
      this.#inItems = false;
      await this.#lines.return(undefined);
    }
  }
}

/** The options `--resume` takes from the report; one given differently would make other batches (exit 2). */
export interface ResumableOptions {
  inputs?: string[];
  benchmark?: string;
  flavor?: string;
  executedAt?: string;
  tag?: string[];
  batchSize?: number;
}

export function recordedOptions(options: ResumableOptions, path: string, recorded: RecordedCommand) {
  const same = (flag: string, given: unknown, was: unknown) => {
    if (given === undefined || JSON.stringify(given) === JSON.stringify(was)) return;
    throw new UsageError(
      `${path} records an upload with ${flag} ${JSON.stringify(was)}: leave ${flag} out (or give the same) to resume it.`,
    );
  };
  same('the inputs', options.inputs?.length ? options.inputs : undefined, recorded.inputs);
  same('--benchmark', options.benchmark, recorded.benchmark ?? undefined);
  same('--flavor', options.flavor, recorded.flavor ?? undefined);
  same('--executed-at', options.executedAt, recorded.executed_at ?? undefined);
  same('--tag', options.tag, recorded.tags.length ? recorded.tags : undefined);
  same('--batch-size', options.batchSize, recorded.batch_size);
  return {
    inputs: recorded.inputs,
    benchmark: recorded.benchmark ?? undefined,
    flavor: recorded.flavor ?? undefined,
    executedAt: recorded.executed_at ?? undefined,
    tag: recorded.tags,
    batchSize: recorded.batch_size,
  };
}
