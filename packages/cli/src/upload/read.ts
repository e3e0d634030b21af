/**
 * Reads the inputs as streams, chunk by chunk: a file of any size is never held whole in memory.
 * `.ndjson` and `.jsonl` files are one value per line; anything else (`.json`, stdin) is detected:
 * one object, an array of objects, or NDJSON (see JsonSplitter).
 */
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { CliError } from '../errors.ts';
import { NDJSON_EXTENSIONS, STDIN, type RawItem } from './inputs.ts';
import { JsonSplitter, type Piece } from './json-splitter.ts';

const CHUNK_BYTES = 256 * 1024;

/** The line a parse error points at: the piece's first line plus the line breaks before the position. */
function errorLine(piece: Piece, message: string): number {
  const position = /position (\d+)/.exec(message);
  if (!position) return piece.line;
  let line = piece.line;
  const end = Math.min(Number(position[1]), piece.text.length);
  for (let at = piece.text.indexOf('\n'); at !== -1 && at < end; at = piece.text.indexOf('\n', at + 1)) line++;
  return line;
}

export function toItem(source: string, piece: Piece): RawItem {
  const place = piece.index !== undefined ? { index: piece.index } : { line: piece.line };
  if (piece.error) return { source, ...place, error: piece.error };
  let value: unknown;
  try {
    value = JSON.parse(piece.text);
  } catch (err) {
    const message = (err as Error).message;
    return { source, ...(piece.index !== undefined ? place : { line: errorLine(piece, message) }), error: `malformed JSON: ${message}` };
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return { source, ...place, value: value as Record<string, unknown>, size: piece.text.length };
  }
  return {
    source,
    ...place,
    error: `not a JSON object (got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value})`,
  };
}

/** The items of one input, a chunk at a time; `onBytes` hears how many bytes each chunk had. */
export async function* readInput(file: string, stdin: NodeJS.ReadableStream, onBytes?: (bytes: number) => void): AsyncGenerator<RawItem[]> {
  const source = file === STDIN ? '<stdin>' : file;
  const splitter = new JsonSplitter(file !== STDIN && NDJSON_EXTENSIONS.has(extname(file).toLowerCase()) ? 'lines' : 'detect');
  const decoder = new StringDecoder('utf8');
  const stream = file === STDIN ? stdin : createReadStream(file, { highWaterMark: CHUNK_BYTES });
  const iterator = stream[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<string | Buffer>;
      try {
        next = await iterator.next();
      } catch (err) {
        throw new CliError(`Cannot read ${file === STDIN ? 'stdin' : file}: ${(err as Error).message}`);
      }
      if (next.done) break;
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      onBytes?.(chunk.length);
      const pieces = splitter.push(decoder.write(chunk));
      if (pieces.length) yield pieces.map((p) => toItem(source, p));
    }
  } finally {
    // Stops reading a file when the upload stops early (a file stream only: stdin belongs to the process).
    if (file !== STDIN) await iterator.return?.();
  }
  const rest = [...splitter.push(decoder.end()), ...splitter.end()];
  if (rest.length) yield rest.map((p) => toItem(source, p));
}
