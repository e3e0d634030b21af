/**
 * Calls a module's exports in a child process with a small heap: a loop that never ends while it
 * allocates (a tick array growing forever) fails its test within a moment, counted in memory rather
 * than time, instead of taking gigabytes of a shared machine and aborting the test process. (A
 * worker thread with `resourceLimits` is not enough: a fast enough allocation aborts the whole process.)
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface BoundedModule {
  /** `module[name](...args)` in the child; arguments and result are copied (structured clone). */
  call<T>(name: string, ...args: unknown[]): Promise<T>;
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./bounded-child.ts', import.meta.url));
const REGISTER = fileURLToPath(new URL('../../../../scripts/dev/register.js', import.meta.url));

/** Loads `module` (a TypeScript file) in a child process whose heap is at most `heapMb` MB. */
export async function boundedModule(module: URL, heapMb = 64): Promise<BoundedModule> {
  const child = fork(CHILD, [module.href], {
    execArgv: [`--max-old-space-size=${heapMb}`, '--import', REGISTER],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  let failure: Error | undefined;
  let nextId = 0;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      const why = stderr.split('\n').find((l) => /FATAL ERROR|Error/.test(l)) ?? stderr.slice(0, 500);
      failure ??= new Error(`the process calling ${module.pathname} ended (${signal ?? `exit ${code}`}): ${why}`);
      for (const p of pending.values()) p.reject(failure);
      pending.clear();
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    void exited.then(() => reject(failure));
  });
  child.on('message', (m: { id: number; value?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error === undefined) p?.resolve(m.value);
    else p?.reject(new Error(m.error));
  });
  return {
    call: <T>(name: string, ...args: unknown[]) =>
      new Promise<T>((resolve, reject) => {
        if (failure) return reject(failure);
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ id, name, args });
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    },
  };
}
