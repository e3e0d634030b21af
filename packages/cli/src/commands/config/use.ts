import type { Command } from 'commander';
import { loadConfig, saveConfig, configPath } from '../../config.ts';
import type { Io } from '../../io.ts';
import { runs, group, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ name: string }>;

export function register(program: Command): void {
  group(program, 'config')
    .command('use')
    .description('Make a profile the default one (when neither --profile nor BENCHMARKS_PROFILE names one)')
    .argument('<profile>', 'profile name')
    .addHelpText('after', '\nExample:\n  benchmarks config use staging')
    .action(runs(run, ['name']));
}

export async function run(options: Options, io: Io): Promise<void> {
  const path = configPath(io.env);
  const config = await loadConfig(path);
  config.profile = options.name;
  await saveConfig(path, config);
  if (!options.quiet) io.stderr.write(`Profile "${options.name}" is now the default.\n`);
}
