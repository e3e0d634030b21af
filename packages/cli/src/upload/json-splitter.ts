/**
 * Cuts a stream of JSON text into the texts of its items without parsing them, so that a file of
 * any size is read with bounded memory: each item is then `JSON.parse`d alone.
 *
 * - A top-level array (`[ {...}, {...} ]`): each element, with its index.
 * - One value per line (NDJSON), also detected when the first value ends on the line it starts.
 * - Values that span lines (a pretty-printed object, or several one after the other): each value,
 *   with the line it starts on.
 *
 * It tracks only strings (and their escapes) and bracket depth; a malformed item still ends at the
 * next `,`/`]` of its depth (arrays), at its closing bracket (values) or at the end of its line.
 */

/** One item's text, where it starts, or what was structurally wrong at that place. */
export interface Piece {
  text: string;
  /** 1-based line where it starts (not counted inside a top-level array: there the index says where). */
  line: number;
  /** Position in the top-level array. */
  index?: number;
  /** The input's structure was wrong here (`text` is then empty). */
  error?: string;
}

type Mode = 'start' | 'array' | 'value' | 'lines' | 'after-array' | 'done';

const NL = 10;
const QUOTE = 34;
const COMMA = 44;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const isSpace = (c: number) => c === 32 || c === NL || c === 13 || c === 9;

export class JsonSplitter {
  #mode: Mode;
  /** Text of the unfinished piece (or line) from earlier chunks. */
  #carry = '';
  #inPiece = false;
  #depth = 0;
  #inString = false;
  /** The previous chunk ended on a backslash inside a string: skip the next character. */
  #escape = false;
  #line = 1;
  #pieceLine = 1;
  #index = 0;
  /** In an array: a comma was read and no element since. */
  #afterComma = false;
  #firstValue = true;
  #started = false;

  /** `lines` forces one value per line (.ndjson, .jsonl); `detect` looks at the text. */
  constructor(format: 'lines' | 'detect' = 'detect') {
    this.#mode = format === 'lines' ? 'lines' : 'start';
  }

  push(chunk: string): Piece[] {
    const out: Piece[] = [];
    if (!this.#started) {
      this.#started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    this.#scan(chunk, out);
    return out;
  }

  /** The pieces left when the input ends, with an error if it ended inside one. */
  end(): Piece[] {
    const out: Piece[] = [];
    if (this.#mode === 'lines') {
      const text = this.#carry.trim();
      if (text) out.push({ text, line: this.#line });
    } else if (this.#mode === 'array') {
      const error = this.#inPiece
        ? `malformed JSON: the input ends inside element ${this.#index} of the array`
        : 'malformed JSON: the input ends before the array is closed with ]';
      if (this.#inPiece || this.#afterComma || this.#index === 0) out.push({ text: '', line: this.#pieceLine, index: this.#index, error });
      else out.push({ text: '', line: this.#line, error });
    } else if (this.#inPiece) {
      if (this.#depth === 0 && !this.#inString) out.push({ text: this.#carry.trim(), line: this.#pieceLine });
      else out.push({ text: '', line: this.#pieceLine, error: 'malformed JSON: the input ends inside this value' });
    }
    this.#carry = '';
    this.#inPiece = false;
    this.#mode = 'done';
    return out;
  }

  #emit(out: Piece[], s: string, start: number, end: number): void {
    const text = (this.#carry + s.slice(start, end)).trim();
    this.#carry = '';
    this.#inPiece = false;
    if (this.#mode === 'array') out.push({ text, line: this.#pieceLine, index: this.#index });
    else out.push({ text, line: this.#pieceLine });
  }

  #scan(s: string, out: Piece[]): void {
    const n = s.length;
    let i = 0;
    let start = 0;
    /** The next backslash at or after i (-1: none left in this chunk); found lazily, once per backslash. */
    let backslash = -2;
    while (i < n) {
      const mode = this.#mode;
      if (mode === 'done') return;
      if (mode === 'lines') {
        const nl = s.indexOf('\n', i);
        if (nl === -1) {
          this.#carry += s.slice(i);
          return;
        }
        const text = (this.#carry + s.slice(i, nl)).trim();
        this.#carry = '';
        if (text) out.push({ text, line: this.#line });
        this.#line++;
        i = nl + 1;
        continue;
      }
      if (this.#inString) {
        if (this.#escape) {
          this.#escape = false;
          i++;
          continue;
        }
        if (backslash !== -1 && backslash < i) backslash = s.indexOf('\\', i);
        const quote = s.indexOf('"', i);
        if (backslash !== -1 && (quote === -1 || backslash < quote)) {
          this.#escape = true;
          i = backslash + 1;
          continue;
        }
        if (quote === -1) break;
        this.#inString = false;
        i = quote + 1;
        if (this.#depth === 0 && mode === 'value') this.#endValue(out, s, start, i);
        continue;
      }
      const c = s.charCodeAt(i);
      if (!this.#inPiece) {
        if (isSpace(c)) {
          if (c === NL) this.#line++;
          i++;
          continue;
        }
        if (mode === 'start') {
          if (c === OPEN_BRACKET) {
            this.#mode = 'array';
            i++;
            continue;
          }
          this.#mode = 'value';
        } else if (mode === 'array') {
          if (c === CLOSE_BRACKET) {
            if (this.#afterComma)
              out.push({ text: '', line: this.#line, index: this.#index, error: 'malformed JSON: an empty element before ]' });
            this.#mode = 'after-array';
            i++;
            continue;
          }
          if (c === COMMA) {
            out.push({ text: '', line: this.#line, index: this.#index++, error: 'malformed JSON: an empty element' });
            this.#afterComma = true;
            i++;
            continue;
          }
        } else if (mode === 'after-array') {
          out.push({
            text: '',
            line: this.#line,
            error: 'malformed JSON: unexpected text after the closing ] of the array (the rest is ignored)',
          });
          this.#mode = 'done';
          return;
        }
        this.#inPiece = true;
        this.#afterComma = false;
        this.#depth = 0;
        this.#pieceLine = this.#line;
        start = i;
      }
      // In a piece, outside strings.
      if (c === QUOTE) {
        this.#inString = true;
        i++;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        this.#depth++;
        i++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (this.#depth === 0) {
          if (this.#mode === 'array' && c === CLOSE_BRACKET) {
            this.#emit(out, s, start, i);
            this.#index++;
            this.#mode = 'after-array';
          }
          i++;
          continue;
        }
        this.#depth--;
        i++;
        if (this.#depth === 0 && this.#mode === 'value') this.#endValue(out, s, start, i);
      } else if (c === COMMA && this.#depth === 0 && this.#mode === 'array') {
        this.#emit(out, s, start, i);
        this.#index++;
        this.#afterComma = true;
        i++;
      } else if (isSpace(c) && this.#depth === 0 && this.#mode === 'value') {
        // A top-level scalar (or garbage) ends at a space or a line end.
        this.#endValue(out, s, start, i);
      } else {
        if (c === NL && this.#mode === 'value') this.#line++;
        i++;
      }
    }
    if (this.#inPiece) this.#carry += s.slice(start);
  }

  /** A top-level value ended at `end`; the first one, if it is on one line, makes the rest NDJSON. */
  #endValue(out: Piece[], s: string, start: number, end: number): void {
    this.#emit(out, s, start, end);
    if (this.#firstValue && this.#pieceLine === this.#line) this.#mode = 'lines';
    this.#firstValue = false;
  }
}
