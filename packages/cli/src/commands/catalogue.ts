/**
 * What the catalogue's `delete` and `update` verbs share (benchmarks, sites, flavors, tags): the
 * confirmation, the refusal of a referenced item turned into a hint about --cascade, and the
 * update as read, change the given fields, write back (the API replaces every editable field).
 */
import { ConflictError } from '@benchmarks/sdk';
import type { Command } from 'commander';
import { confirm, mustBeAbleToAsk } from '../confirm.ts';
import type { Context } from '../context.ts';
import { CliError, UsageError } from '../errors.ts';
import type { Io } from '../io.ts';

export interface DeleteOptions {
  cascade?: boolean;
  yes?: boolean;
}

/** `--cascade` (saying what it removes) and `--yes`. */
export function addDeleteOptions(command: Command, cascades: string): Command {
  return command.option('--cascade', cascades).option('-y, --yes', 'do not ask for confirmation (needed without a terminal)');
}

/** Before anything is looked up: without a terminal, `--yes` is required (exit 2). */
export function checkCanConfirm(io: Io, options: DeleteOptions, what: string): void {
  mustBeAbleToAsk(io, options.yes, `Deleting cannot be undone and there is no terminal to ask on: pass --yes to delete the ${what}.`);
}

/**
 * Asks, then deletes. A referenced item without --cascade is one clear line naming what refers to
 * it and the flag that deletes it all.
 */
export async function deleteItem(
  ctx: Context,
  options: DeleteOptions,
  described: string,
  consequence: string,
  remove: () => Promise<unknown>,
): Promise<void> {
  await confirm(
    ctx.io,
    options.yes,
    `Delete ${described}${options.cascade ? ` and ${consequence}` : ''}? This cannot be undone.`,
    'Nothing deleted.',
  );
  try {
    await remove();
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'REFERENCED') {
      const detail = err.detail.includes('?cascade=true')
        ? err.detail.replace(/add \?cascade=true to/, 'pass --cascade to')
        : `${err.detail} Pass --cascade to delete what refers to it too.`;
      throw new CliError(detail);
    }
    throw err;
  }
  ctx.info(`Deleted ${described}${options.cascade ? ` and ${consequence}` : ''}.`);
}

/** `--description ''` (or `--url ''`) clears the field. */
export const orNull = (value: string | undefined, current: string | null): string | null =>
  value === undefined ? current : value === '' ? null : value;

/** At least one field to change. */
export function requireChanges(options: object, flags: readonly string[]): void {
  const given = flags.some(
    (flag) =>
      (options as Record<string, unknown>)[flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] !== undefined,
  );
  if (!given) throw new UsageError(`Nothing to change: give ${flags.slice(0, -1).join(', ')} or ${flags.at(-1)}.`);
}
