/** `config list|get|set|unset|use`: the config file, its profiles and their settings. */
import type { Command } from 'commander';
import {
  configPath,
  loadConfig,
  OUTPUT_FORMATS,
  SETTABLE_KEYS,
  saveConfig,
  updateProfile,
  type Profile,
  type SettableKey,
} from '../config.ts';
import { createContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { checkServer, resolveSettings } from '../global-options.ts';
import type { Io } from '../io.ts';
import { renderJson, renderNdjson, text } from '../output.ts';
import { group, runs, type WithGlobals } from './common.ts';

type Options = WithGlobals<{ key: string; value: string; name: string }>;

function checkKey(key: string): SettableKey {
  if (!(SETTABLE_KEYS as readonly string[]).includes(key)) {
    throw new UsageError(`Unknown config key '${key}': use one of ${SETTABLE_KEYS.join(', ')}.`);
  }
  return key as SettableKey;
}

function parseValue(key: SettableKey, value: string): Profile[SettableKey] {
  switch (key) {
    case 'server':
      checkServer(value);
      return value;
    case 'output':
      if (!(OUTPUT_FORMATS as readonly string[]).includes(value))
        throw new UsageError(`output must be one of ${OUTPUT_FORMATS.join(', ')}.`);
      return value as Profile['output'];
    case 'quiet':
    case 'verbose':
    case 'wide':
      if (!/^(true|false)$/.test(value)) throw new UsageError(`${key} must be true or false.`);
      return value === 'true';
    case 'token':
      return value;
  }
}

/** A profile as shown: secrets replaced by what they are. */
function shown(profile: Profile): Record<string, unknown> {
  const { auth, token, ...rest } = profile;
  return {
    ...rest,
    ...(token ? { token: '(set)' } : {}),
    ...(auth
      ? {
          login: {
            issuer: auth.issuer,
            expires_at: auth.expires_at ? new Date(auth.expires_at * 1000).toISOString() : null,
            refresh: Boolean(auth.refresh_token),
          },
        }
      : {}),
  };
}

async function list(options: Options, io: Io): Promise<void> {
  const settings = await resolveSettings(options, io);
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

async function get(options: Options, io: Io): Promise<void> {
  const key = checkKey(options.key);
  const value = (await resolveSettings(options, io)).stored[key];
  if (value !== undefined) io.stdout.write(`${text(value)}\n`);
}

/** `set` (`set` true) or `unset` one key of the profile. */
async function change(options: Options, io: Io, set: boolean): Promise<void> {
  const key = checkKey(options.key);
  const value = set ? parseValue(key, options.value) : undefined;
  const ctx = await createContext(options, io);
  const { configPath: path, profile } = ctx.settings;
  await updateProfile(path, profile, (stored) => {
    if (set) (stored as Record<string, unknown>)[key] = value;
    else delete stored[key];
  });
  ctx.info(set ? `Saved ${key} in profile "${profile}" (${path}).` : `Removed ${key} from profile "${profile}".`);
}

async function use(options: Options, io: Io): Promise<void> {
  const path = configPath(io.env);
  const config = await loadConfig(path);
  config.profile = options.name;
  await saveConfig(path, config);
  if (!options.quiet) io.stderr.write(`Profile "${options.name}" is now the default.\n`);
}

const KEY = 'server, token, output, quiet, verbose or wide';

export function register(program: Command): void {
  const config = group(program, 'config');
  config
    .command('list')
    .description('Show the config file: its path, the profiles and their settings (secrets hidden)')
    .addHelpText('after', '\nExample:\n  benchmarks config list')
    .action(runs(list));
  config
    .command('get')
    .description('Print one setting of the profile (as stored, before flags and environment)')
    .argument('<key>', KEY)
    .addHelpText('after', '\nExample:\n  benchmarks config get server --profile staging')
    .action(runs(get));
  config
    .command('set')
    .description('Save a setting in the profile')
    .argument('<key>', KEY)
    .argument('<value>', 'its value')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks config set server https://performance.example.org\n  benchmarks config set output json --profile ci',
    )
    .action(runs((options: Options, io) => change(options, io, true)));
  config
    .command('unset')
    .description('Remove a setting from the profile')
    .argument('<key>', KEY)
    .addHelpText('after', '\nExample:\n  benchmarks config unset token')
    .action(runs((options: Options, io) => change(options, io, false)));
  config
    .command('use')
    .description('Make a profile the default one (when neither --profile nor BENCHMARKS_PROFILE names one)')
    .argument('<profile>', 'profile name')
    .addHelpText('after', '\nExample:\n  benchmarks config use staging')
    .action(runs(use, ['name']));
}
