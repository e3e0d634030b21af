import type { Command } from 'commander';
import { updateProfile } from '../../config.ts';
import { createContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { checkKey } from './keys.ts';

export type Options = WithGlobals<{ key: string }>;

export function register(program: Command): void {
  group(program, 'config')
    .command('unset')
    .description('Remove a setting from the profile')
    .argument('<key>', 'server, token, output, quiet, verbose or wide')
    .addHelpText('after', '\nExample:\n  benchmarks config unset token')
    .action(runs(run, ['key']));
}

export async function run(options: Options, io: Io): Promise<void> {
  const key = checkKey(options.key);
  const ctx = await createContext(options, io);
  await updateProfile(ctx.settings.configPath, ctx.settings.profile, (profile) => {
    delete profile[key];
  });
  ctx.info(`Removed ${key} from profile "${ctx.settings.profile}".`);
}
