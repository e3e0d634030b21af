/**
 * `benchmarks completion bash|zsh`: a completion script generated from the command tree itself,
 * so it never lags behind the commands.
 */
import { Argument, type Command } from 'commander';
import { OUTPUT_FORMATS } from '../../config.ts';
import type { Io } from '../../io.ts';
import { runs } from '../shared.ts';

export type Options = { shell: 'bash' | 'zsh'; program: Command };

interface Node {
  path: string;
  words: string[];
}

/** Every command path with the words that may follow it: subcommands, then its options. */
export function commandTree(program: Command): Node[] {
  const globals = program.options.map((o) => o.long).filter((l): l is string => Boolean(l) && l !== '--version');
  const nodes: Node[] = [];
  const visit = (command: Command, path: string) => {
    const subcommands = command.commands.map((c) => c.name()).filter((n) => n !== 'help');
    const options = command === program ? [] : command.options.map((o) => o.long).filter((l): l is string => Boolean(l));
    nodes.push({ path, words: [...subcommands, ...options, ...globals, ...(command === program ? ['--version'] : []), '--help'] });
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashScript(program: Command): string {
  const nodes = commandTree(program);
  const paths = nodes
    .filter((n) => n.path)
    .map((n) => quote(n.path))
    .join('|');
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
  const paths = nodes
    .filter((n) => n.path)
    .map((n) => `${quote(n.path)}`)
    .join('|');
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

export function register(program: Command): void {
  program
    .command('completion')
    .description('Print a shell completion script')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .addHelpText(
      'after',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: `${fpath[1]}` is zsh syntax in an example shell command, not a template placeholder
      '\nExamples:\n  source <(benchmarks completion bash)       # in ~/.bashrc\n  benchmarks completion zsh > "${fpath[1]}/_benchmarks"',
    )
    .action(runs((options: { shell: 'bash' | 'zsh' }, io: Io) => run({ ...options, program }, io), ['shell']));
}

export async function run(options: Options, io: Io): Promise<void> {
  io.stdout.write(options.shell === 'bash' ? bashScript(options.program) : zshScript(options.program));
}
