/**
 * Whether what a command printed has the shape of the sample a document shows: the documents'
 * samples come from other data (other names, ids, numbers), so they are compared by structure.
 *
 * - JSON: every member the sample shows is there, with a value of the same type (null in either
 *   matches anything), recursively; each element of a sample array matches some element of the
 *   actual one. `…` and `...` stand for what the sample leaves out.
 * - Text: the same lines (blank ones aside), each starting with the same word; numbers are any
 *   numbers and a word of punctuation only (a chart's axis, a marker) is any such word.
 */

/** Parses a sample of JSON in which `…` or `...` (outside strings) stands for members, elements or a value left out. */
export function parseSample(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = endOfString(text, i);
      out += text.slice(i, end + 1);
      i = end;
    } else if (ch === '…' || text.startsWith('...', i)) {
      i += ch === '…' ? 0 : 2;
      // An elided value (`"a": …`) is any value; an elided member or element simply goes.
      if (/:\s*$/.test(out)) out += 'null';
      else out = out.replace(/,\s*$/, '');
      const rest = text.slice(i + 1);
      if (/^\s*,/.test(rest) && /[{[]\s*$/.test(out)) i += rest.indexOf(',') + 1;
    } else out += ch;
  }
  return JSON.parse(out);
}

function endOfString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  throw new Error(`an unterminated string in: ${text.slice(start, start + 40)}`);
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** The differences between a sample and an actual value, as `path: what` lines; none when it has the shape. */
export function jsonShapeDifferences(sample: unknown, actual: unknown, path = '$'): string[] {
  if (sample === null || actual === null) return [];
  if (typeOf(sample) !== typeOf(actual)) return [`${path}: the sample shows ${typeOf(sample)}, the answer has ${typeOf(actual)}`];
  if (Array.isArray(sample)) {
    const items = actual as unknown[];
    if (sample.length > 0 && items.length === 0) return [`${path}: the sample shows elements, the answer has none`];
    return sample.flatMap((s, i) => {
      const fits = items.map((a) => jsonShapeDifferences(s, a, `${path}[${i}]`));
      return fits.some((d) => d.length === 0) ? [] : fits[0]!;
    });
  }
  if (typeof sample === 'object') {
    const obj = actual as Record<string, unknown>;
    return Object.entries(sample as Record<string, unknown>).flatMap(([key, value]) =>
      key in obj ? jsonShapeDifferences(value, obj[key], `${path}.${key}`) : [`${path}: no member "${key}" in the answer`],
    );
  }
  return [];
}

/** The first word of each non-blank line, numbers as `#`, a word without letters or digits as `~`. */
export function lineShape(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const word = line.split(/\s+/)[0]!;
      return /[\p{L}\d]/u.test(word) ? word.replace(/\d+(?:[.,]\d+)*/g, '#') : '~';
    });
}

/** The differences between the shape of a text sample and of what was printed (the first three); none when alike. */
export function textShapeDifferences(sample: string, actual: string): string[] {
  const want = lineShape(sample);
  const got = lineShape(actual);
  const out: string[] = [];
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (want[i] !== got[i])
      out.push(`line ${i + 1}: the sample starts with ${want[i] ?? '(no line)'}, the output with ${got[i] ?? '(no line)'}`);
  }
  return out.length > 3 ? [...out.slice(0, 3), `${out.length - 3} more`] : out;
}

/**
 * Whether a value is what a comment of an example claims (`// 'machine.cpu.count >= 4'`,
 * `// { status: 'ok', version: '...' }`): strings equal (`...` in the claim matching anything),
 * numbers and booleans equal, objects holding the claimed members.
 */
export function claimDifferences(claim: unknown, actual: unknown, path = '$'): string[] {
  if (typeof claim === 'string') {
    const text = typeof actual === 'string' ? actual : String(actual);
    const pattern = new RegExp(
      `^${claim
        .split(/\.\.\.|…/)
        .map(escapeRegExp)
        .join('.*')}$`,
      's',
    );
    return pattern.test(text) ? [] : [`${path}: claimed ${JSON.stringify(claim)}, got ${JSON.stringify(text)}`];
  }
  if (claim === null || typeof claim !== 'object') {
    return Object.is(claim, actual) ? [] : [`${path}: claimed ${JSON.stringify(claim)}, got ${JSON.stringify(actual)}`];
  }
  if (actual === null || typeof actual !== 'object') return [`${path}: claimed an object, got ${JSON.stringify(actual)}`];
  return Object.entries(claim).flatMap(([key, value]) =>
    key in actual ? claimDifferences(value, (actual as Record<string, unknown>)[key], `${path}.${key}`) : [`${path}: no member "${key}"`],
  );
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The value, when it is what the example's comment at `where` claims; throws otherwise. */
export function checkClaim<T>(where: string, value: T, claim: unknown): T {
  const differences = claimDifferences(claim, value);
  if (differences.length) throw new Error(`${where}: the comment says what the value is, and it is not: ${differences.join('; ')}`);
  return value;
}
