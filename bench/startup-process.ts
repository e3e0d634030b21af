/**
 * Child processes of `npm run bench:startup`: a clean environment, a command whose output is wanted,
 * and a register of everything still running so that an interrupted run leaves nothing behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/**
 * The environment of every measured or installing child: ours without NODE_OPTIONS (it would change
 * what is measured) and without npm's npm_* variables (set by `npm run`; a nested npm would take
 * our npm's configuration, and its workspace, for its own).
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) && !['NODE_OPTIONS', 'NODE_ENV', 'INIT_CWD'].includes(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

const running = new Set<ChildProcess>();

/** spawn, remembered until it exits. */
export function track(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.once('error', () => running.delete(child));
  return child;
}

/** Kills whatever is still running (an interrupted or failed run). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Runs a command to its end; resolves with its stdout, rejects with its stderr when it fails. */
export function output(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = track(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${err.slice(-2000)}`)),
    );
  });
}

/** Disk usage of the given paths in kB (`du -skc`: blocks used, as a user's disk sees them). */
export async function duKb(cwd: string, paths: string[], exclude?: string): Promise<number> {
  if (!paths.length) return 0;
  const out = await output('du', ['-skc', ...(exclude ? [`--exclude=${exclude}`] : []), ...paths], { cwd });
  return Number(/^(\d+)\s+total$/m.exec(out)?.[1] ?? 0);
}
