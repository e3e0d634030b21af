/** Parsing and showing the keys `config set/get/unset` handle. */
import { apiBaseUrl } from '@benchmarks/sdk/url';
import { OUTPUT_FORMATS, SETTABLE_KEYS, type Profile, type SettableKey } from '../../config.ts';
import { UsageError } from '../../errors.ts';

export function checkKey(key: string): SettableKey {
  if (!(SETTABLE_KEYS as readonly string[]).includes(key)) {
    throw new UsageError(`Unknown config key '${key}': use one of ${SETTABLE_KEYS.join(', ')}.`);
  }
  return key as SettableKey;
}

export function parseValue(key: SettableKey, value: string): Profile[SettableKey] {
  switch (key) {
    case 'server':
      try {
        apiBaseUrl(value);
      } catch (err) {
        throw new UsageError(`Invalid server address '${value}': ${(err as Error).message}.`);
      }
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
export function shown(profile: Profile): Record<string, unknown> {
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
