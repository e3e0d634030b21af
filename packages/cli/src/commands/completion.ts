/**
 * `benchmarks completion bash|zsh|fish`: a completion script generated from the command tree
 * itself, so it never lags behind the commands.
 */
import { Argument, type Command, type Option } from 'commander';
import { OUTPUT_FORMATS } from '../config.ts';
import { runs } from './common.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface Node {
  path: string;
  words: string[];
}

/** Every command path with the words that may follow it: subcommands, its first argument's choices, then its options. */
export function commandTree(program: Command): Node[] {
  const globals = program.options.map((o) => o.long).filter((l): l is string => Boolean(l) && l !== '--version');
  const nodes: Node[] = [];
  const visit = (command: Command, path: string) => {
    const subcommands = command.commands.map((c) => c.name()).filter((n) => n !== 'help');
    const options = command === program ? [] : command.options.map((o) => o.long).filter((l): l is string => Boolean(l));
    const choices = command.registeredArguments[0]?.argChoices ?? [];
    nodes.push({
      path,
      words: [...subcommands, ...choices, ...options, ...globals, ...(command === program ? ['--version'] : []), '--help'],
    });
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The command paths as the alternatives of a shell `case` pattern. */
const casePaths = (nodes: Node[]) =>
  nodes
    .filter((n) => n.path)
    .map((n) => quote(n.path))
    .join('|');

export function bashScript(program: Command): string {
  const nodes = commandTree(program);
  const paths = casePaths(nodes);
  const cases = nodes.map((n) => `    ${quote(n.path)}) words=${quote(n.words.join(' '))} ;;`).join('\n');
  return `# bash completion for benchmarks. Load it with:  source <(benchmarks completion bash)
_benchmarks_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmdpath="" word next i words=""
  case "$prev" in
    --output|-o) COMPREPLY=($(compgen -W ${quote(OUTPUT_FORMATS.join(' '))} -- "$cur")); return ;;
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    next="\${cmdpath:+$cmdpath }$word"
    case "$next" in
      ${paths}) cmdpath="$next" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _benchmarks_complete benchmarks
`;
}

export function zshScript(program: Command): string {
  const nodes = commandTree(program);
  const paths = casePaths(nodes);
  const cases = nodes.map((n) => `    (${quote(n.path)}) choices=(${n.words.map(quote).join(' ')}) ;;`).join('\n');
  return `#compdef benchmarks
# zsh completion for benchmarks. Load it with:  source <(benchmarks completion zsh)
_benchmarks() {
  local cmdpath="" next w
  local -a choices
  if [[ \${words[CURRENT-1]} == (--output|-o) ]]; then
    compadd -- ${OUTPUT_FORMATS.join(' ')}
    return
  fi
  for w in \${words[2,CURRENT-1]}; do
    [[ $w == -* ]] && continue
    next="\${cmdpath:+$cmdpath }$w"
    case "$next" in
      (${paths}) cmdpath="$next" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  compadd -- $choices
  _files
}
if (( $+functions[compdef] )); then
  compdef _benchmarks benchmarks
fi
`;
}

/** A fish string: single-quoted, with `\\` and `'` escaped. */
const fishQuote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/** A description on one line: what fish shows beside a completion. */
const summary = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Options whose value is a file (`--report <file>`, `--resume <report>`, `--out <file>`). */
const takesFile = (option: Option) => /<(file|report)>/.test(option.flags);

function fishOption(condition: string, option: Option): string {
  const parts = ['complete -c benchmarks'];
  if (condition) parts.push(`-n ${fishQuote(condition)}`);
  if (option.long) parts.push(`-l ${option.long.replace(/^--/, '')}`);
  if (option.short) parts.push(`-s ${option.short.replace(/^-/, '')}`);
  if (option.argChoices) parts.push(`-x -a ${fishQuote(option.argChoices.join(' '))}`);
  else if (option.required || option.optional) parts.push(takesFile(option) ? '-r -F' : '-x');
  if (option.description) parts.push(`-d ${fishQuote(summary(option.description))}`);
  return parts.join(' ');
}

/**
 * fish: `__benchmarks_path` finds the command path typed so far (the words that name commands,
 * options and their values skipped), and each completion applies at one path. Files are offered
 * only where a command takes them (`results upload` inputs, `--report`, `--out`, ...).
 */
export function fishScript(program: Command): string {
  const lines: string[] = [];
  const paths: string[] = [];
  const visit = (command: Command, path: string) => {
    const at = `__benchmarks_at "${path}"`;
    for (const sub of command.commands) {
      if (sub.name() === 'help') continue;
      lines.push(`complete -c benchmarks -n ${fishQuote(at)} -a ${fishQuote(sub.name())} -d ${fishQuote(summary(sub.description()))}`);
    }
    if (command !== program) for (const option of command.options) lines.push(fishOption(at, option));
    const first = command.registeredArguments[0];
    if (first?.argChoices) lines.push(`complete -c benchmarks -n ${fishQuote(at)} -a ${fishQuote(first.argChoices.join(' '))}`);
    if (command.registeredArguments.some((a) => a.name() === 'inputs')) lines.push(`complete -c benchmarks -n ${fishQuote(at)} -F`);
    for (const sub of command.commands) {
      if (sub.name() === 'help') continue;
      const next = path ? `${path} ${sub.name()}` : sub.name();
      paths.push(next);
      visit(sub, next);
    }
  };
  visit(program, '');
  const globals = program.options.filter((o) => o.long !== '--version').map((o) => fishOption('', o));
  return `# fish completion for benchmarks. Load it with:  benchmarks completion fish | source
# or save it:  benchmarks completion fish > ~/.config/fish/completions/benchmarks.fish
set -g __benchmarks_paths ${paths.map(fishQuote).join(' ')}

function __benchmarks_path --description 'The benchmarks command typed so far, e.g. "results upload"'
    set -l words (commandline -opc)
    set -e words[1]
    set -l path
    for word in $words
        string match -q -- '-*' $word; and continue
        set -l next (string join ' ' $path $word)
        contains -- $next $__benchmarks_paths; and set path $path $word
    end
    string join ' ' $path
end

function __benchmarks_at --description 'Whether the command typed so far is $argv[1]'
    set -l path (__benchmarks_path)
    test "$path" = "$argv[1]"
end

complete -c benchmarks -f
${globals.join('\n')}
complete -c benchmarks -l help -s h -d 'Show help'
${lines.join('\n')}
`;
}

const SCRIPTS: Record<Shell, (program: Command) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };

export function register(program: Command): void {
  program
    .command('completion')
    .description('Print a shell completion script')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: `${fpath[1]}` is zsh syntax in an example shell command, not a template placeholder
      '\nExamples:\n  source <(benchmarks completion bash)       # in ~/.bashrc\n  benchmarks completion zsh > "${fpath[1]}/_benchmarks"\n  benchmarks completion fish > ~/.config/fish/completions/benchmarks.fish',
    )
    .action(runs(async (options: { shell: Shell }, io) => io.stdout.write(SCRIPTS[options.shell](program))));
}
