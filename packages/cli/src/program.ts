/** The `benchmarks` command tree: global options, then every resource's verbs. */
import { Command } from 'commander';
import { addGlobalOptions } from './global-options.ts';
import type { Io } from './io.ts';
import { CLI_VERSION } from './version.ts';
import { attachIo } from './commands/common.ts';

import * as catalogue from './commands/catalogue.ts';
import * as changes from './commands/changes.ts';
import * as claims from './commands/claims.ts';
import * as compare from './commands/compare.ts';
import * as completion from './commands/completion.ts';
import * as config from './commands/config.ts';
import * as identity from './commands/identity.ts';
import * as results from './commands/results.ts';
import * as review from './commands/review.ts';
import * as users from './commands/users.ts';
import * as watch from './commands/watch.ts';
import * as webhooks from './commands/webhooks.ts';

/** In the order of the help. */
const COMMANDS: { register(program: Command): void }[] = [
  identity,
  catalogue,
  results,
  compare,
  changes,
  watch,
  review,
  claims,
  users,
  webhooks,
  config,
  completion,
];

const EPILOG = `
Start here:
  benchmarks login --server https://performance.example.org
  benchmarks register
  benchmarks results upload out.json --benchmark ghcr.io/org/bench:1.0 --flavor SITE/FLAVOR --executed-at now
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric json.result.score

Exit codes: 0 ok, 1 error, 2 usage, 4 not logged in or not allowed. DEBUG=1 shows stack traces.`;

export function createProgram(io: Io): Command {
  const program = new Command('benchmarks')
    .description('Benchmark results service: log in, upload results, query them, review submissions')
    .version(CLI_VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(s),
    })
    // Every command's help lists the global options too (--server, --token, --output, ...):
    // they work before or after the command, and a user reading `results upload --help` needs them.
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError(true)
    .addHelpText('after', EPILOG);
  addGlobalOptions(program);
  attachIo(program, io);
  for (const command of COMMANDS) command.register(program);
  return program;
}
