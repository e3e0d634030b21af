/**
 * The data directory (`--data-dir`), created level by level and tried with a file, so that a place
 * where nothing can be created fails at once (Node's recursive `mkdir` spins for minutes on /proc/nope).
 */
import { mkdir, open, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ConfigurationError } from '../core/errors.ts';

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ENOENT: 'nothing can be created there',
};

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return REASONS[code] ? `${REASONS[code]} (${code})` : (err as Error).message;
}

/** Makes sure `dataDir` exists and this process can create files in it; otherwise one clear ConfigurationError. */
export async function ensureDataDir(dataDir: string): Promise<void> {
  const dir = resolve(dataDir);
  const fail = (why: string) =>
    new ConfigurationError(`The data directory ${dir} cannot be created or written: ${why} (--data-dir, BENCHMARKS_DATA_DIR).`);
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    // ENOTDIR: a level above is a file, found further up.
    const found = await stat(at).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ENOTDIR' ? undefined : err));
    if (found instanceof Error) throw fail(reason(found));
    if (found) {
      if (!found.isDirectory()) throw fail(`${at} is a file, not a directory`);
      break;
    }
    if (at === dirname(at)) break;
    missing.unshift(at);
  }
  for (const level of missing) {
    try {
      await mkdir(level);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fail(`${reason(err)} creating ${level}`);
    }
  }
  const probe = join(dir, `.write-test-${process.pid}`);
  try {
    await (await open(probe, 'wx')).close();
    await unlink(probe);
  } catch (err) {
    throw fail(reason(err));
  }
}
