/**
 * The process boundary, passed to every command's `run(options, io)`: the real process in
 * `main.ts`, buffers in tests. Nothing else in the CLI touches `process.std*` or `process.env`.
 */
export interface Io {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  stdin: NodeJS.ReadableStream;
  isTTY: { stdin: boolean; stdout: boolean; stderr: boolean };
  env: Record<string, string | undefined>;
  /** Width of the terminal stderr/stdout is shown on, when known. */
  columns?: number;
}

export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    isTTY: { stdin: Boolean(process.stdin.isTTY), stdout: Boolean(process.stdout.isTTY), stderr: Boolean(process.stderr.isTTY) },
    env: process.env,
    columns: process.stdout.columns || process.stderr.columns || undefined,
  };
}

/** Reads a whole stream as UTF-8 text (stdin for `-`). */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
