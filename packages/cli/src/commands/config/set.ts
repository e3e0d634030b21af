import type { Command } from 'commander';
import { updateProfile } from '../../config.ts';
import { createContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { checkKey, parseValue } from './keys.ts';

export type Options = WithGlobals<{ key: string; value: string }>;

export function register(program: Command): void {
  group(program, 'config')
    .command('set')
    .description('Save a setting in the profile')
    .argument('<key>', 'server, token, output, quiet, verbose or wide')
    .argument('<value>', 'its value')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks config set server https://performance.example.org\n  benchmarks config set output json --profile ci',
    )
    .action(runs(run, ['key', 'value']));
}

export async function run(options: Options, io: Io): Promise<void> {
  const key = checkKey(options.key);
  const value = parseValue(key, options.value);
  const ctx = await createContext(options, io);
  await updateProfile(ctx.settings.configPath, ctx.settings.profile, (profile) => {
    (profile as Record<string, unknown>)[key] = value;
  });
  ctx.info(`Saved ${key} in profile "${ctx.settings.profile}" (${ctx.settings.configPath}).`);
}
