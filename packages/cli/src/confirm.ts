/**
 * Asking before something that cannot be undone: `[y/N]` on a terminal; `--yes` in scripts. Without a
 * terminal and without `--yes` the command is refused (exit 2) before it does anything.
 */
import { createInterface } from 'node:readline/promises';
import { CliError, UsageError } from './errors.ts';
import type { Io } from './io.ts';

/** Refuses (exit 2) when nobody can be asked and `--yes` was not given. */
export function mustBeAbleToAsk(io: Io, yes: boolean | undefined, refusal: string): void {
  if (!yes && !io.isTTY.stdin) throw new UsageError(refusal);
}

/** Asks `question [y/N]` on a terminal unless `--yes`; anything but y/yes ends the command with `declined`. */
export async function confirm(io: Io, yes: boolean | undefined, question: string, declined: string): Promise<void> {
  if (yes) return;
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream, terminal: false });
  const answer = await rl.question(`${question} [y/N] `).finally(() => rl.close());
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError(declined);
}
