/** Waiting that a stop can interrupt: an interrupted start-up (exit.ts) rejects at once with its signal's reason. */

/** Rejects with `signal.reason` once `signal` aborts; otherwise settles as `work` does. */
export async function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/** Resolves after `ms`; rejects with `signal.reason` as soon as `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const paused = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return abortable(paused, signal).finally(() => clearTimeout(timer));
}
