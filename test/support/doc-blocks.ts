/**
 * The fenced code blocks of the documentation, each with what the test does with it: run it, check
 * it against what a command prints, or leave it, for the reason its marker gives. The markers are
 * single-line HTML comments right above the opening fence (docs/architecture.md, "Examples in the
 * documentation"):
 *
 *   <!-- not run: REASON -->               the block is not run (REASON says why)
 *   <!-- not run `PREFIX`: REASON -->      in a shell block, the commands starting with PREFIX are not run
 *   <!-- output of: COMMAND -->            the block is what COMMAND prints: the same shape
 *   <!-- checked by: COMMAND -->           COMMAND, given the block as the file $BLOCK, exits 0
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The documents whose examples are run: the READMEs and docs/*.md (not the specification, not the code conventions). */
export function documents(root: string): string[] {
  const packages = readdirSync(join(root, 'packages'))
    .map((name) => join('packages', name, 'README.md'))
    .filter((path) => exists(join(root, path)));
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md') && name !== 'conventions.md')
    .map((name) => join('docs', name));
  return ['README.md', ...packages.sort(), ...docs.sort()];
}

function exists(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

export type Kind = 'shell' | 'js' | 'json' | 'config' | 'container' | 'text';

export interface Marker {
  type: 'not run' | 'not run lines' | 'output of' | 'checked by';
  /** The reason (not run), the command (output of, checked by). */
  text: string;
  /** The command prefix of `not run lines`. */
  prefix?: string;
}

export interface Block {
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  kind: Kind;
  /** The block's text, without the fences and without the indentation of the fence. */
  text: string;
  markers: Marker[];
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const JS = new Set(['js', 'mjs', 'cjs', 'ts', 'mts', 'javascript', 'typescript']);
const CONFIG = new Set(['yaml', 'yml', 'ini', 'nginx', 'toml', 'conf', 'properties']);
const CONTAINER = new Set(['dockerfile', 'containerfile']);

export function kindOf(lang: string): Kind {
  const l = lang.toLowerCase();
  if (SHELL.has(l)) return 'shell';
  if (JS.has(l)) return 'js';
  if (l === 'json') return 'json';
  if (CONFIG.has(l)) return 'config';
  if (CONTAINER.has(l)) return 'container';
  return 'text';
}

const REASON_MIN = 10;

/** Parses one marker comment; `undefined` for a comment that is not a marker, an Error for a malformed one. */
export function parseMarker(comment: string): Marker | Error | undefined {
  const lines = /^not run `([^`]+)`:\s*(.*)$/.exec(comment);
  if (lines) {
    const [, prefix, reason] = lines;
    if (reason!.length < REASON_MIN) return new Error(`"${comment}": give the reason the lines are not run`);
    return { type: 'not run lines', prefix: prefix!.trim(), text: reason! };
  }
  const m = /^(not run|output of|checked by)\s*:\s*(.*)$/.exec(comment);
  if (!m) return /^not[ -]run\b/i.test(comment) ? new Error(`"${comment}": write <!-- not run: REASON -->`) : undefined;
  const [, type, text] = m;
  if (type === 'not run' && text!.length < REASON_MIN) return new Error(`"${comment}": give the reason the block is not run`);
  if (!text) return new Error(`"${comment}": name the command`);
  return { type: type as Marker['type'], text: text! };
}

/** Every fenced block of a Markdown text, with its markers. Throws on a malformed marker or an unclosed fence. */
export function extractBlocks(doc: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim().startsWith(fence!) && line.trim().replace(/[`~]/g, '') === '') break;
      body.push(line.startsWith(indent!) ? line.slice(indent!.length) : line.trimStart());
    }
    if (i >= lines.length) throw new Error(`${doc}:${start + 1}: the code block is not closed`);
    const markers: Marker[] = [];
    for (let j = start - 1; j >= 0; j--) {
      const comment = /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lines[j]!);
      if (!comment) break;
      const marker = parseMarker(comment[1]!);
      if (marker instanceof Error) throw new Error(`${doc}:${j + 1}: ${marker.message}`);
      if (marker) markers.unshift(marker);
    }
    blocks.push({ doc, line: start + 1, lang: lang ?? '', kind: kindOf(lang ?? ''), text: body.join('\n'), markers });
  }
  return blocks;
}

export function readBlocks(root: string, doc: string): Block[] {
  return extractBlocks(relative(root, join(root, doc)), readFileSync(join(root, doc), 'utf8'));
}

export type Plan =
  | { action: 'run' }
  | { action: 'output'; command: string }
  | { action: 'check'; command: string }
  | { action: 'skip'; reason: string }
  | { action: 'unmarked'; why: string };

/** What the test does with a block: shell and JavaScript run unless marked; anything else needs a marker. */
export function planOf(block: Block): Plan {
  const whole = block.markers.find((m) => m.type !== 'not run lines');
  if (whole?.type === 'not run') return { action: 'skip', reason: whole.text };
  if (whole?.type === 'output of') return { action: 'output', command: whole.text };
  if (whole?.type === 'checked by') return { action: 'check', command: whole.text };
  if (block.kind === 'shell' || block.kind === 'js') return { action: 'run' };
  return {
    action: 'unmarked',
    why: `a ${block.lang || 'plain'} block is not run: mark it <!-- output of: COMMAND -->, <!-- checked by: COMMAND --> or <!-- not run: REASON -->`,
  };
}

/** One command of a shell block: its text (continuation lines joined), where it starts, its trailing comment. */
export interface Command {
  text: string;
  /** Index of its first line in the block. */
  line: number;
  comment: string;
}

/**
 * Splits a shell block into commands and comment lines: a command continues over a trailing
 * backslash and over a quoted string that spans lines; `#` outside quotes at the start of a word
 * starts a comment. Enough for the documentation's examples, not a shell parser.
 */
export function splitCommands(text: string): (Command | { comment: string; line: number })[] {
  const out: (Command | { comment: string; line: number })[] = [];
  const lines = text.split('\n');
  let current: { parts: string[]; line: number; comment: string } | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!current && !line.trim()) continue;
    if (!current && /^\s*#/.test(line)) {
      out.push({ comment: line.trim(), line: i });
      continue;
    }
    current ??= { parts: [], line: i, comment: '' };
    let code = line;
    for (let c = 0; c < line.length; c++) {
      const ch = line[c]!;
      if (quote) {
        if (ch === '\\' && quote === '"') c++;
        else if (ch === quote) quote = undefined;
      } else if (ch === '\\') c++;
      else if (ch === "'" || ch === '"') quote = ch;
      else if (ch === '#' && (c === 0 || /\s/.test(line[c - 1]!))) {
        code = line.slice(0, c);
        current.comment = line.slice(c).trim();
        break;
      }
    }
    const continued = !quote && /\\\s*$/.test(code);
    // Kept as written: bash reads the backslash-newline and the quoted newline as the author meant.
    current.parts.push(quote ? code : code.trimEnd());
    if (quote || continued) continue;
    out.push({ text: current.parts.join('\n').trim(), line: current.line, comment: current.comment });
    current = undefined;
  }
  if (current) throw new Error(`an unterminated quote in: ${current.parts.join('\n')}`);
  return out;
}

/** The statuses a command's comment claims: `# 201`, `# 201, then 409` (the command run again). */
export function statusClaim(comment: string): number[] | undefined {
  const m = /^#\s*(\d{3})\b(?:,\s*then\s+(\d{3})\b)?/.exec(comment);
  if (!m) return undefined;
  return m[2] ? [Number(m[1]), Number(m[2])] : [Number(m[1])];
}

/** A transcript (`$ command` lines, each followed by what it prints): the commands and their output. */
export function transcript(text: string): { command: string; output: string }[] | undefined {
  const lines = text.split('\n');
  if (!lines.some((l) => l.startsWith('$ '))) return undefined;
  const steps: { command: string; output: string[] }[] = [];
  for (const line of lines) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: [] });
    else if (steps.length) steps.at(-1)!.output.push(line);
    else if (line.trim()) throw new Error(`a transcript starts with a command ($ ...), not with: ${line}`);
  }
  return steps.map((s) => ({ command: s.command, output: s.output.join('\n') }));
}
