/**
 * The packages as npm publishes them: `npm run build` from a clean slate, then `npm pack` of each
 * workspace package, with the file list npm reports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentBuild } from '../../scripts/current-build.ts';
import { ROOT, cleanEnv, ok } from './run.ts';

export const PACKAGES = ['sdk', 'server', 'demo', 'cli'] as const;
export type PackageName = (typeof PACKAGES)[number];

export interface Manifest {
  name: string;
  version: string;
  bin?: Record<string, string>;
  exports?: Record<string, string | Record<string, string>>;
  types?: string;
  dependencies?: Record<string, string>;
}

export interface Tarball {
  /** Absolute path of the .tgz. */
  file: string;
  /** Bytes of the .tgz, and of its contents unpacked. */
  size: number;
  unpackedSize: number;
  /** Every path in the tarball, relative to the package root. */
  files: string[];
  /** The package.json that went into the tarball. */
  manifest: Manifest;
}

export const packageDir = (name: PackageName) => join(ROOT, 'packages', name);

export function manifestOf(name: PackageName): Manifest {
  return JSON.parse(readFileSync(join(packageDir(name), 'package.json'), 'utf8')) as Manifest;
}

/**
 * `npm run build` (compiles sdk, server and demo with tsc and bundles the CLI), unless the build in
 * place is the build of the sources in place (scripts/current-build.ts): CI builds once, before the
 * tests. Says which it did.
 */
export const build = (): Promise<string> => currentBuild(ROOT);

/** `npm pack --json` of one package into `destination`. */
export async function pack(name: PackageName, destination: string): Promise<Tarball> {
  const { stdout } = await ok('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: packageDir(name),
    env: cleanEnv(),
    timeoutMs: 60_000,
  });
  const [info] = JSON.parse(stdout) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  return {
    file: join(destination, info!.filename),
    size: info!.size,
    unpackedSize: info!.unpackedSize,
    files: info!.files.map((f) => f.path).sort(),
    manifest: manifestOf(name),
  };
}

/** The files that `exports` (every condition but the workspace's own), `types` and `bin` name. */
export function entryPoints(manifest: Manifest): string[] {
  const targets: string[] = [];
  for (const target of Object.values(manifest.exports ?? {})) {
    const conditions = typeof target === 'string' ? { default: target } : target;
    for (const [condition, path] of Object.entries(conditions)) if (condition !== '@benchmarks/source') targets.push(path);
  }
  if (manifest.types) targets.push(manifest.types);
  targets.push(...Object.values(manifest.bin ?? {}));
  return [...new Set(targets.map((p) => p.replace(/^\.\//, '')))];
}

/** Whether `files` hold `entry`, a path or an `exports` subpath pattern with one `*`. */
export function includes(files: string[], entry: string): boolean {
  if (!entry.includes('*')) return files.includes(entry);
  const [prefix, suffix] = entry.split('*') as [string, string];
  return files.some((f) => f.length > prefix.length + suffix.length && f.startsWith(prefix) && f.endsWith(suffix));
}
