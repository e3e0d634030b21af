/**
 * Where the results to upload come from: files, directories (searched recursively for .json,
 * .ndjson and .jsonl files), glob patterns (for shells that did not expand them) and `-` for stdin.
 * Each file holds one JSON object, an array of them, or one object per line (NDJSON).
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { CliError, UsageError } from '../errors.ts';

export const STDIN = '-';
const RESULT_EXTENSIONS = new Set(['.json', '.ndjson', '.jsonl']);
export const NDJSON_EXTENSIONS = new Set(['.ndjson', '.jsonl']);

/** One item read from an input: its value, or why it could not be read. */
export interface RawItem {
  /** The file (`<stdin>` for `-`). */
  source: string;
  /** 1-based line, for NDJSON lines and single-object files. */
  line?: number;
  /** 0-based position, for items of a JSON array. */
  index?: number;
  value?: Record<string, unknown>;
  error?: string;
  /** Length of its text, to bound the size of a batch before it is serialized. */
  size?: number;
}

const hasGlob = (arg: string) => /[*?[]/.test(arg);

/**
 * The files below `dir`, sorted, hidden ones left out. `results`: only .json, .ndjson and .jsonl
 * files, and a directory that cannot be read is an error; else (a glob's base) every file, and
 * directories that cannot be read are skipped.
 */
async function walk(dir: string, out: string[], results: boolean): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (results) throw err;
    return;
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, out, results);
    else if (entry.isFile() && (!results || RESULT_EXTENSIONS.has(extname(entry.name).toLowerCase()))) out.push(path);
  }
}

/** A glob as a regular expression over `/`-separated paths: `**` any directories, `*` and `?` within one name. */
export function globRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      re += slash ? '(?:[^/]*/)*' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        re += `[${pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

async function expandGlob(pattern: string): Promise<string[]> {
  const normalized = pattern.split(sep).join('/');
  const segments = normalized.split('/');
  const firstGlob = segments.findIndex(hasGlob);
  const base = segments.slice(0, firstGlob).join('/') || (normalized.startsWith('/') ? '/' : '.');
  const files: string[] = [];
  await walk(base, files, false);
  const matcher = globRegExp(normalized.replace(/^\.\//, ''));
  return files.filter((file) => {
    const path = file.split(sep).join('/');
    return matcher.test(base === '.' ? relative('.', file).split(sep).join('/') : path);
  });
}

/** The files the arguments name, in order, each once; `-` stays `-`. */
export async function expandInputs(args: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const arg of args) {
    if (arg === STDIN) {
      files.push(STDIN);
      continue;
    }
    const info = await stat(arg).catch(() => undefined);
    if (info?.isDirectory()) {
      const found: string[] = [];
      await walk(arg, found, true);
      if (found.length === 0) throw new CliError(`No .json, .ndjson or .jsonl files in the directory ${arg}.`);
      files.push(...found);
    } else if (info) {
      files.push(arg);
    } else if (hasGlob(arg)) {
      const found = await expandGlob(arg);
      if (found.length === 0) throw new CliError(`No files match ${arg}.`);
      files.push(...found);
    } else {
      throw new UsageError(`No such file or directory: ${arg}`);
    }
  }
  return [...new Set(files)];
}

/** `file:17`, `file[3]` or `file` (a report's items say null for no line or index). */
export function where(item: { source: string; line?: number | null; index?: number | null }): string {
  if (typeof item.index === 'number') return `${item.source}[${item.index}]`;
  return typeof item.line === 'number' ? `${item.source}:${item.line}` : item.source;
}
