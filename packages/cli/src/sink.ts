/**
 * Where a command's data goes: stdout, or a file written as `FILE.partial` and renamed to `FILE`
 * once complete, so that a write cut short never leaves a file that looks whole. Each write waits
 * while the destination is full (back-pressure), so what streams through takes constant memory.
 * A closed stdout (`| head`) ends the process quietly: see main.ts.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { CliError } from './errors.ts';
import type { Io } from './io.ts';

/** A destination that may say "full" (`write` returns false) and emit `drain` once it has room. */
interface Destination {
  write(chunk: string | Uint8Array): unknown;
  once?: (event: string, listener: (...args: unknown[]) => void) => unknown;
}

/** The suffix of a file being written. */
export const PARTIAL = '.partial';

export class Sink {
  #bytes = 0;

  private constructor(
    private readonly destination: Destination,
    private readonly file?: { path: string; stream: WriteStream },
  ) {}

  /** stdout, or `path` + `.partial` created now (a CliError when it cannot be). */
  static async open(io: Io, path?: string): Promise<Sink> {
    if (path === undefined) return new Sink(io.stdout as Destination);
    const stream = createWriteStream(path + PARTIAL);
    try {
      await once(stream, 'open');
    } catch (err) {
      throw new CliError(`Cannot write ${path}${PARTIAL}: ${(err as Error).message}`);
    }
    return new Sink(stream, { path, stream });
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The file written, if any. */
  get path(): string | undefined {
    return this.file?.path;
  }

  /** Writes, then waits while the destination is full. */
  async write(chunk: string | Uint8Array): Promise<void> {
    this.#bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    const room = this.destination.write(chunk);
    const onNext = this.destination.once;
    if (room === false && onNext) await new Promise((drained) => onNext.call(this.destination, 'drain', drained));
  }

  /** Everything was written: the file gets its name. */
  async commit(): Promise<void> {
    if (!this.file) return;
    this.file.stream.end();
    await finished(this.file.stream);
    await rename(this.file.path + PARTIAL, this.file.path);
  }

  /**
   * The write failed: the partial file is closed and kept when something was written (it is named
   * as such), removed when nothing was. Returns the partial file's path when it is kept.
   */
  async abandon(): Promise<string | undefined> {
    if (!this.file) return undefined;
    const partial = this.file.path + PARTIAL;
    this.file.stream.end();
    await finished(this.file.stream).catch(() => undefined);
    if (this.#bytes > 0) return partial;
    await unlink(partial).catch(() => undefined);
    return undefined;
  }
}
