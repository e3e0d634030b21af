/**
 * The embedded cluster's log: each line of its stderr handed on with its level, and its last lines
 * kept for error messages, read from its newest log file once it logs to files (`logging_collector`).
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parsePostgresLogLine, PostgresLogReader, type PostgresLogLine } from './postgres-log.ts';

export class ClusterLog {
  readonly #recent: string[] = [];
  #directory: string | undefined;
  readonly #reader: PostgresLogReader;

  /** `log` receives each line; `adjust` may change its level first. */
  constructor(
    private readonly databaseDir: string,
    log: (line: PostgresLogLine) => void,
    adjust: (line: PostgresLogLine) => PostgresLogLine = (line) => line,
  ) {
    this.#reader = new PostgresLogReader((line) => {
      this.#recent.push(line.text);
      if (this.#recent.length > 20) this.#recent.shift();
      // The rest of the log goes to files, and this line says where.
      const announced = /Future log output will appear in directory "(.+)"/.exec(line.message);
      if (announced) this.#directory = resolve(this.databaseDir, announced[1]!);
      log(adjust(line));
    });
  }

  write(chunk: string): void {
    this.#reader.write(chunk);
  }

  /** The cluster's last log lines, oldest first, one line each. */
  async lastLines(count = 5): Promise<string[]> {
    this.#reader.flush();
    if (this.#directory) {
      const fromFiles = await tailOfNewestFile(this.#directory, count).catch(() => []);
      if (fromFiles.length) return fromFiles;
    }
    return this.#recent.slice(-count).map(oneLine);
  }
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `its last log lines: "…" | "…"`, for error messages. */
export function describeLines(lines: string[]): string {
  return lines.length ? `its last log lines: ${lines.map((l) => `"${l}"`).join(' | ')}` : 'it logged nothing';
}

/** The last lines of the newest file in `dir`, read from its last 16 KB. */
async function tailOfNewestFile(dir: string, count: number): Promise<string[]> {
  let newest: { path: string; mtime: number } | undefined;
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const s = await stat(path);
    if (s.isFile() && (!newest || s.mtimeMs > newest.mtime)) newest = { path, mtime: s.mtimeMs };
  }
  if (!newest) return [];
  const file = await open(newest.path, 'r');
  try {
    const { size } = await file.stat();
    const length = Math.min(size, 16 * 1024);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    const lines = buffer
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim());
    return lines.slice(-count).map((l) => oneLine(parsePostgresLogLine(l)?.text ?? l));
  } finally {
    await file.close();
  }
}
