import type { Command } from 'commander';
import { revoke } from '../../auth.ts';
import { updateProfile } from '../../config.ts';
import { createContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<object>;

export function register(program: Command): void {
  program
    .command('logout')
    .description('Forget the stored login of the profile (and revoke its refresh token)')
    .addHelpText('after', '\nExample:\n  benchmarks logout --profile staging')
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  const ctx = await createContext(options, io);
  const auth = ctx.settings.config.profiles?.[ctx.settings.profile]?.auth;
  if (!auth) {
    ctx.info(`Not logged in (profile "${ctx.settings.profile}").`);
  } else {
    await updateProfile(ctx.settings.configPath, ctx.settings.profile, (profile) => {
      delete profile.auth;
    });
    const revoked = await revoke(auth);
    ctx.info(`Logged out (profile "${ctx.settings.profile}")${revoked ? '; the refresh token was revoked' : ''}.`);
  }
  if (ctx.settings.token) ctx.warn('Note: a token is still given by --token, BENCHMARKS_TOKEN or the config file, and will be used.');
}
