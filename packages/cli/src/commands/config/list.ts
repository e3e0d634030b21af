import type { Command } from 'commander';
import { createContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { renderJson, renderNdjson, text } from '../../output.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { shown } from './keys.ts';

export type Options = WithGlobals<object>;

export function register(program: Command): void {
  group(program, 'config')
    .command('list')
    .description('Show the config file: its path, the profiles and their settings (secrets hidden)')
    .addHelpText('after', '\nExample:\n  benchmarks config list')
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  const { settings } = await createContext(options, io);
  const { profiles = {}, profile: selected, ...shared } = settings.config;
  const data = {
    path: settings.configPath,
    profile: settings.profile,
    ...(Object.keys(shared).length ? { shared: shown(shared) } : {}),
    profiles: Object.fromEntries(Object.entries(profiles).map(([name, p]) => [name, shown(p)])),
    ...(selected ? { default_profile: selected } : {}),
  };
  if (settings.output !== 'table') {
    io.stdout.write(settings.output === 'ndjson' ? renderNdjson([data]) : renderJson(data));
    return;
  }
  const lines = [`path     ${data.path}`, `profile  ${data.profile}`];
  for (const [name, p] of Object.entries(data.profiles)) {
    lines.push('', `[${name}]`);
    for (const [key, value] of Object.entries(p)) lines.push(`  ${key} = ${text(value)}`);
  }
  io.stdout.write(`${lines.join('\n')}\n`);
}
