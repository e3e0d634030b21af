/**
 * Warnings of the service: answers given in full that may not be what the caller meant, such as a
 * JSON path the benchmark's schema does not describe. JSON answers carry them as `warnings`; every
 * answer (CSV, SVG and exports too) carries them in the `Warning` header, read here.
 */
import type { Static } from '@sinclair/typebox';
import type { Warning as WarningSchema } from './contract/warnings.ts';

/**
 * One warning of a JSON answer (`page.warnings`, `comparison.warnings`): `code` (`UNDESCRIBED_PATH`),
 * `parameter`, `path`, `suggestion` (the nearest described path, or null) and `message`.
 * @example
 * const page = await client.results.list({ benchmark_id, filters: [where('machine.cpu.cont').gte(4)] });
 * for (const w of page.warnings ?? []) console.error(`${w.path}: did you mean ${w.suggestion}?`);
 */
export type Warning = Static<typeof WarningSchema>;

/**
 * The messages of a `Warning` header (`299 - "<text>", 299 - "<text>"`): quoted pairs unescaped
 * and the percent-encoding the server applies to what a header cannot carry decoded. Values that
 * are not warnings of that form are skipped.
 * @example
 * parseWarningHeader('299 - "json.a is not described by the benchmark\'s schema"'); // ["json.a is not described by the benchmark's schema"]
 */
export function parseWarningHeader(value: string | null | undefined): string[] {
  const messages: string[] = [];
  if (!value) return messages;
  let i = 0;
  while (i < value.length) {
    const open = value.indexOf('"', i);
    if (open < 0) break;
    let text = '';
    let j = open + 1;
    for (; j < value.length && value[j] !== '"'; j++) text += value[j] === '\\' && j + 1 < value.length ? value[++j] : value[j];
    messages.push(percentDecoded(text));
    // Past the closing quote, and a date if the warning has one (`299 - "text" "date"`), up to the next comma.
    const comma = nextComma(value, j + 1);
    i = comma < 0 ? value.length : comma + 1;
  }
  return messages;
}

/** The next comma outside quotes from `from`, or -1. */
function nextComma(value: string, from: number): number {
  let quoted = false;
  for (let k = from; k < value.length; k++) {
    if (value[k] === '\\' && quoted) k++;
    else if (value[k] === '"') quoted = !quoted;
    else if (value[k] === ',' && !quoted) return k;
  }
  return -1;
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
