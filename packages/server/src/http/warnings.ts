/** The `Warning` header (`299 - "<text>"`, RFC 7234) of answers with warnings: it reaches CSV, SVG and NDJSON too. */
import type Koa from 'koa';

/** Bytes of the header at most: it travels with every answer and clients cap header sizes. */
const MAX_HEADER_LENGTH = 4096;

/** U+FFFD, for a lone surrogate, which has no UTF-8 form. */
const REPLACEMENT = '%EF%BF%BD';

/** A header value holds visible ASCII only: the rest, and `%`, percent-encoded (UTF-8); `"` and `\` quoted pairs. */
function quotedText(text: string): string {
  let out = '';
  for (const char of text) {
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (char === '%' || char < ' ' || char > '~') out += /^[\uD800-\uDFFF]$/.test(char) ? REPLACEMENT : encodeURIComponent(char);
    else out += char;
  }
  return out;
}

/** The header's value for these warnings (at most MAX_HEADER_LENGTH bytes), or undefined for none. */
export function warningHeader(warnings: readonly { message: string }[] | undefined): string | undefined {
  if (!warnings?.length) return undefined;
  const values: string[] = [];
  let length = 0;
  for (const [i, warning] of warnings.entries()) {
    const value = `299 - "${quotedText(warning.message)}"`;
    // Room is kept for the closing note.
    if (length + value.length + 2 > MAX_HEADER_LENGTH - 100) {
      values.push(`299 - "${warnings.length - i} more warnings are left out of this header"`);
      break;
    }
    values.push(value);
    length += value.length + 2;
  }
  return values.join(', ');
}

/** Sets the header on the answer when there are warnings. */
export function setWarnings(koa: Koa.Context, warnings: readonly { message: string }[] | undefined): void {
  const value = warningHeader(warnings);
  if (value) koa.set('Warning', value);
}
