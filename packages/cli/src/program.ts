/** The `benchmarks` command tree: global options, then every resource's verbs. */
import { Command } from 'commander';
import { addGlobalOptions } from './global-options.ts';
import type { Io } from './io.ts';
import { CLI_VERSION } from './version.ts';
import { attachIo } from './commands/common.ts';

import * as login from './commands/auth/login.ts';
import * as logout from './commands/auth/logout.ts';
import * as whoami from './commands/auth/whoami.ts';
import * as registerUser from './commands/auth/register.ts';
import * as token from './commands/auth/token.ts';
import * as catalogue from './commands/catalogue.ts';
import * as resultsList from './commands/results/list.ts';
import * as resultsSearch from './commands/results/search.ts';
import * as resultsGet from './commands/results/get.ts';
import * as resultsUpload from './commands/results/upload.ts';
import * as resultsTags from './commands/results/tags.ts';
import * as resultsClaim from './commands/results/claim.ts';
import * as resultsExport from './commands/results/export.ts';
import * as compare from './commands/compare.ts';
import * as changes from './commands/changes.ts';
import * as reviewList from './commands/review/list.ts';
import * as reviewDecide from './commands/review/decide.ts';
import * as claimsList from './commands/claims/list.ts';
import * as claimsDecide from './commands/claims/decide.ts';
import * as usersList from './commands/users/list.ts';
import * as usersSearch from './commands/users/search.ts';
import * as usersRemove from './commands/users/remove.ts';
import * as configList from './commands/config/list.ts';
import * as configGet from './commands/config/get.ts';
import * as configSet from './commands/config/set.ts';
import * as configUnset from './commands/config/unset.ts';
import * as configUse from './commands/config/use.ts';
import * as completion from './commands/completion/script.ts';
import * as webhooksCreate from './commands/webhooks/create.ts';
import * as webhooksList from './commands/webhooks/list.ts';
import * as webhooksDeliveries from './commands/webhooks/deliveries.ts';
import * as webhooksRedeliver from './commands/webhooks/redeliver.ts';
import * as changesFeed from './commands/changes/feed.ts';
import * as changesDecide from './commands/changes/decide.ts';
import * as watchCreate from './commands/watch/create.ts';
import * as watchList from './commands/watch/list.ts';
import * as watchDelete from './commands/watch/delete.ts';

const COMMANDS: { register(program: Command): void }[] = [
  login,
  logout,
  whoami,
  registerUser,
  token,
  catalogue,
  resultsList,
  resultsSearch,
  resultsGet,
  resultsUpload,
  resultsTags,
  resultsClaim,
  resultsExport,
  compare,
  changes,
  changesFeed,
  changesDecide,
  watchCreate,
  watchList,
  watchDelete,
  reviewList,
  reviewDecide,
  claimsList,
  claimsDecide,
  usersList,
  usersSearch,
  usersRemove,
  webhooksCreate,
  webhooksList,
  webhooksDeliveries,
  webhooksRedeliver,
  configList,
  configGet,
  configSet,
  configUnset,
  configUse,
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
