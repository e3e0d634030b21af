/**
 * The config file: named profiles (servers) and the credentials `login` stores.
 *
 *   { "profile": "default",
 *     "profiles": { "default": { "server": "https://perf.example.org", "output": "table",
 *                                "auth": { "issuer": "...", "access_token": "...", ... } } } }
 *
 * Keys at the top level (`server`, `output`, ...) apply to every profile that does not set them.
 * Location: BENCHMARKS_CONFIG, else $XDG_CONFIG_HOME/benchmarks/config.json, else
 * ~/.config/benchmarks/config.json. Written with mode 0600 in a 0700 directory: it holds tokens.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from './errors.ts';

export const OUTPUT_FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What `login` stores: never printed, never logged. */
export interface StoredAuth {
  issuer: string;
  client_id: string;
  access_token: string;
  refresh_token?: string;
  /** Seconds since the epoch. */
  expires_at?: number;
  scope?: string;
}

/** The settings a profile may hold: every global option, plus the stored login. */
export interface Profile {
  server?: string;
  token?: string;
  output?: OutputFormat;
  quiet?: boolean;
  verbose?: boolean;
  wide?: boolean;
  auth?: StoredAuth;
}

export interface ConfigFile extends Profile {
  /** The profile used when neither --profile nor BENCHMARKS_PROFILE names one. */
  profile?: string;
  profiles?: Record<string, Profile>;
}

/** Keys `config set` accepts, and how each is parsed. */
export const SETTABLE_KEYS = ['server', 'token', 'output', 'quiet', 'verbose', 'wide'] as const;
export type SettableKey = (typeof SETTABLE_KEYS)[number];

export const DEFAULT_PROFILE = 'default';

export function configPath(env: Record<string, string | undefined>): string {
  if (env.BENCHMARKS_CONFIG) return env.BENCHMARKS_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'benchmarks', 'config.json');
}

export async function loadConfig(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`Cannot read the config file ${path}: ${(err as Error).message}`);
  }
  if (!text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`The config file ${path} is not valid JSON (${(err as Error).message}): fix or delete it.`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(`The config file ${path} must hold a JSON object: fix or delete it.`);
  }
  return parsed as ConfigFile;
}

/** Writes atomically (temporary file, then rename), mode 0600; creates the directory with mode 0700. */
export async function saveConfig(path: string, config: ConfigFile): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** The settings of one profile, top-level keys filling what the profile leaves unset. */
export function profileOf(config: ConfigFile, name: string): Profile {
  const { profile: _selected, profiles, ...shared } = config;
  return { ...shared, ...(profiles?.[name] ?? {}) };
}

/** Reads, changes one profile, writes back: the file may have changed since this process started. */
export async function updateProfile(path: string, name: string, change: (profile: Profile) => void): Promise<void> {
  const config = await loadConfig(path);
  config.profiles ??= {};
  config.profiles[name] ??= {};
  const profile = config.profiles[name];
  change(profile);
  await saveConfig(path, config);
}
