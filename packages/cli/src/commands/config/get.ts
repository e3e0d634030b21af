import type { Command } from 'commander';
import { createContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { text } from '../../output.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { checkKey } from './keys.ts';

export type Options = WithGlobals<{ key: string }>;

export function register(program: Command): void {
  group(program, 'config')
    .command('get')
    .description('Print one setting of the profile (as stored, before flags and environment)')
    .argument('<key>', 'server, token, output, quiet, verbose or wide')
    .addHelpText('after', '\nExample:\n  benchmarks config get server --profile staging')
    .action(runs(run, ['key']));
}

export async function run(options: Options, io: Io): Promise<void> {
  const key = checkKey(options.key);
  const { settings } = await createContext(options, io);
  const value = settings.stored[key];
  if (value !== undefined) io.stdout.write(`${text(value)}\n`);
}
