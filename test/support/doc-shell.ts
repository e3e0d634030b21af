/**
 * A document's shell examples, run in order in one working directory by `bash -euo pipefail`, the
 * shell variables of each block kept for the next (as a reader keeps one terminal open), with the
 * test's commands first on PATH (doc-tools.ts) and HOME in the working directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { type Block, type Marker, splitCommands, statusClaim } from './doc-blocks.ts';
import type { Tools } from './doc-tools.ts';
import { cleanEnv, run, type Outcome } from './run.ts';

export interface ShellSession {
  /** The document's working directory (the examples' files, and HOME/.config for the CLI). */
  dir: string;
  env: NodeJS.ProcessEnv;
  tools: Tools;
  /** Literal replacements in every command: the examples' hosts for the demo's, placeholders for values. */
  substitutions: [string, string][];
}

const LIB = String.raw`
__docex_failed() { echo "docex: command \${DOCEX_CMD:-?} exited $1" >&2; }
__docex_save() {
  local __v __d __f
  for __v in $(compgen -v); do
    case " $DOCEX_BASELINE " in *" $__v "*) continue ;; esac
    case $__v in DOCEX_*|__*|BASH_*|PIPESTATUS|FUNCNAME|_|COLUMNS|LINES) continue ;; esac
    __d=$(declare -p "$__v" 2>/dev/null) || continue
    __f=\${__d#declare }; __f=\${__f%% *}
    case $__f in *r*) continue ;; esac
    printf '%s\n' "$__d"
  done > "$DOCEX_STATE.new"
  mv "$DOCEX_STATE.new" "$DOCEX_STATE"
}
`.replaceAll('\\$', '$');

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * A session: `vars` are shell variables the examples expect to be set (TOKEN, BENCH, ...), `exported`
 * environment variables (BENCHMARKS_SERVER, ...).
 */
export async function createShellSession(options: {
  dir: string;
  tools: Tools;
  vars: Record<string, string>;
  exported: Record<string, string>;
  substitutions: [string, string][];
}): Promise<ShellSession> {
  const { dir, tools } = options;
  const internal = join(dir, '.docex');
  await mkdir(join(dir, '.home'), { recursive: true });
  await mkdir(internal, { recursive: true });
  const base = cleanEnv({ HOME: join(dir, '.home'), ...options.exported });
  const env: NodeJS.ProcessEnv = {
    ...base,
    PATH: [tools.bin, base.PATH].join(delimiter),
    DOCEX_DIR: dir,
    DOCEX_STATE: join(internal, 'state.sh'),
    DOCEX_CURL_LOG: tools.curlLog,
  };
  env.DOCEX_BASELINE = execFileSync('bash', ['-c', 'compgen -v'], { env, encoding: 'utf8' }).split('\n').join(' ');
  await writeFile(join(internal, 'lib.sh'), LIB);
  const state = Object.entries(options.vars).map(([k, v]) => `declare -- ${k}=${quote(v)}\n`);
  await writeFile(env.DOCEX_STATE!, state.join(''));
  return { dir, env, tools, substitutions: options.substitutions };
}

/** Sets shell variables for the blocks to come (values the setup learned after the session began). */
export async function setVars(session: ShellSession, vars: Record<string, string>): Promise<void> {
  const state = await readFile(session.env.DOCEX_STATE!, 'utf8');
  await writeFile(
    session.env.DOCEX_STATE!,
    state +
      Object.entries(vars)
        .map(([k, v]) => `declare -- ${k}=${quote(v)}\n`)
        .join(''),
  );
}

export function substitute(session: ShellSession, text: string): string {
  return session.substitutions.reduce((t, [from, to]) => t.replaceAll(from, to), text);
}

/** A block (`save`: its variables are kept for the next, and the command that failed is named) or a check. */
function script(session: ShellSession, body: string, save: boolean): string {
  return [
    'set -euo pipefail',
    `source ${quote(join(session.dir, '.docex', 'lib.sh'))}`,
    'if [ -f "$DOCEX_STATE" ]; then source "$DOCEX_STATE"; fi',
    'cd "$DOCEX_DIR"',
    save ? "trap '__docex_failed $?' ERR" : '',
    body,
    save ? '__docex_save' : '',
  ].join('\n');
}

async function bash(session: ShellSession, text: string, name: string): Promise<Outcome> {
  const file = join(session.dir, '.docex', `${name}.sh`);
  await writeFile(file, text);
  await writeFile(session.tools.curlLog, '');
  return run('bash', [file], { cwd: session.dir, env: session.env, timeoutMs: 120_000 });
}

/** The statuses `curl` got, per command id, in order. */
async function curlStatuses(session: ShellSession): Promise<Map<string, number[]>> {
  const statuses = new Map<string, number[]>();
  for (const line of (await readFile(session.tools.curlLog, 'utf8')).split('\n')) {
    const [id, status] = line.split(' ');
    if (id && status) statuses.set(id, [...(statuses.get(id) ?? []), Number(status)]);
  }
  return statuses;
}

export interface ShellRun {
  outcome: Outcome;
  /** What went wrong: a failed command, an answer's status other than the one claimed (or a 2xx). */
  problems: string[];
}

/**
 * Runs a shell block: each command in order, stopping at the first failure; commands a
 * `not run \`PREFIX\`` marker names are left out, `VAR=...` keeps the value the session gives VAR,
 * and a command whose comment claims statuses (`# 201, then 409`) is checked for them (run twice for
 * a `then`); every other answer curl gets must be a 2xx.
 */
export async function runShellBlock(session: ShellSession, block: Block): Promise<ShellRun> {
  const skipped = block.markers.filter((m): m is Marker & { prefix: string } => m.type === 'not run lines');
  const used = new Set<string>();
  const lines: string[] = [];
  const claims = new Map<string, number>();
  const texts = new Map<string, string>();
  const items = splitCommands(block.text);
  items.forEach((item, i) => {
    if (!('text' in item)) return;
    const id = String(i);
    texts.set(id, item.text);
    const skip = skipped.find((m) => item.text.startsWith(m.prefix));
    if (skip) {
      used.add(skip.prefix);
      lines.push(`: not run: ${quote(item.text.split('\n')[0]!)}`);
      return;
    }
    const fill = /^([A-Za-z_]\w*)=\.\.\.$/.exec(item.text);
    if (fill) {
      lines.push(`: "\${${fill[1]}:?${fill[1]}=... is a value the test gives: none is set}"`);
      return;
    }
    const next = items[i + 1];
    const claim = statusClaim(item.comment) ?? (next && !('text' in next) ? statusClaim(next.comment) : undefined);
    const text = substitute(session, item.text);
    lines.push(`export DOCEX_CMD=${id}`, text);
    if (claim) claims.set(id, claim[0]!);
    if (claim?.[1]) {
      lines.push(`export DOCEX_CMD=${id}+`, text);
      claims.set(`${id}+`, claim[1]);
      texts.set(`${id}+`, `${item.text}   (again)`);
    }
  });
  const problems = skipped.filter((m) => !used.has(m.prefix)).map((m) => `the marker \`${m.prefix}\` names no command of the block`);
  const outcome = await bash(session, script(session, lines.join('\n'), true), `block-${block.line}`);
  if (outcome.code !== 0) {
    const failed = /docex: command (\S+) exited/.exec(outcome.stderr)?.[1];
    problems.push(`exit ${outcome.code ?? outcome.signal}${failed ? ` at: ${texts.get(failed) ?? failed}` : ''}`);
  }
  for (const [id, statuses] of await curlStatuses(session)) {
    const claimed = claims.get(id);
    const wrong = statuses.filter((s) => (claimed ? s !== claimed : s < 200 || s > 299));
    if (wrong.length)
      problems.push(`${texts.get(id) ?? id}: answered ${statuses.join(', ')}, ${claimed ? `the example says ${claimed}` : 'not a 2xx'}`);
  }
  for (const [id, claimed] of claims) {
    if (outcome.code === 0 && !(await curlStatuses(session)).has(id))
      problems.push(`${texts.get(id)}: claims ${claimed}, but no curl answered`);
  }
  return { outcome, problems };
}

/**
 * Runs one command in the session's state without changing it: for `output of:` (stdout, or stdout
 * and stderr together for text) and `checked by:` (with `$BLOCK`, the block written to a file).
 */
export async function runCommand(
  session: ShellSession,
  command: string,
  options: { name: string; bothStreams: boolean; env?: Record<string, string> },
): Promise<{ outcome: Outcome; statuses: number[] }> {
  const exports = Object.entries(options.env ?? {}).map(([k, v]) => `export ${k}=${quote(v)}`);
  const body = [
    ...exports,
    'export DOCEX_CMD=check',
    options.bothStreams ? `{ ${substitute(session, command)}\n} 2>&1` : substitute(session, command),
  ];
  const outcome = await bash(session, script(session, body.join('\n'), false), options.name);
  return { outcome, statuses: (await curlStatuses(session)).get('check') ?? [] };
}
