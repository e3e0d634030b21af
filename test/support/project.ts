/**
 * A user's project in a fresh directory outside the repository: `npm init -y`, then the tarballs
 * installed as npm installs them, everything else coming from the registry (or npm's cache).
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, ok, type Outcome } from './run.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const INSTALL = ['--no-audit', '--no-fund', '--prefer-offline'];

export interface Project {
  dir: string;
  /** `npm install <specs...>` in the project. */
  install(...specs: string[]): Promise<Outcome>;
  /** node_modules/.bin/<name>. */
  bin(name: string): string;
  /** Copies test/fixtures/<name> into the project. */
  copyFixture(name: string): string;
  writeJson(name: string, value: unknown): string;
}

export async function createProject(dir: string): Promise<Project> {
  await mkdir(dir, { recursive: true });
  await ok('npm', ['init', '-y'], { cwd: dir, timeoutMs: 30_000 });
  return {
    dir,
    install: (...specs) => ok('npm', ['install', ...INSTALL, ...specs], { cwd: dir, timeoutMs: 180_000 }),
    bin: (name) => join(dir, 'node_modules', '.bin', name),
    copyFixture: (name) => {
      copyFileSync(join(FIXTURES, name), join(dir, name));
      return join(dir, name);
    },
    writeJson: (name, value) => {
      writeFileSync(join(dir, name), JSON.stringify(value, null, 2));
      return join(dir, name);
    },
  };
}

/** `npm install -g --prefix <prefix> <spec>`: a global install that keeps to `prefix`. */
export function installGlobally(prefix: string, spec: string): Promise<Outcome> {
  return ok('npm', ['install', '-g', '--prefix', prefix, ...INSTALL, spec], { cwd: prefix, timeoutMs: 120_000 });
}

/** The settings of the consumer's tsconfig: as strict as users make them, declarations of the packages checked. */
export function strictTsconfig(module: 'node16' | 'nodenext' | 'bundler', file: string) {
  const resolution = module === 'bundler' ? { module: 'esnext', moduleResolution: 'bundler' } : { module, moduleResolution: module };
  return {
    compilerOptions: {
      ...resolution,
      target: 'es2022',
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
    },
    files: [file],
  };
}

/** npx keeps what it installs under ~/.npm/_npx/<hash>: removes the entries that came from `dir`. */
export function removeNpxEntriesFrom(dir: string): void {
  const npx = join(cleanEnv().HOME!, '.npm', '_npx');
  if (!existsSync(npx)) return;
  for (const entry of readdirSync(npx)) {
    try {
      const manifest = JSON.parse(readFileSync(join(npx, entry, 'package.json'), 'utf8')) as { _npx?: { packages?: string[] } };
      if (manifest._npx?.packages?.some((p) => p.startsWith(dir))) rmSync(join(npx, entry), { recursive: true, force: true });
    } catch {
      // not an npx entry of ours
    }
  }
}
