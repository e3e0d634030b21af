/**
 * The `benchmarks` executable: builds the program, runs it on the process's arguments, and turns
 * the outcome into an exit code (0 ok, 1 error, 2 usage, 4 not authenticated or not allowed).
 */
import { CommanderError } from 'commander';
import { EXIT, reportError, type ExitCode } from './errors.ts';
import { processIo, type Io } from './io.ts';
import { createProgram } from './program.ts';

/** Runs one invocation; never throws. */
export async function runCli(argv: readonly string[], io: Io): Promise<ExitCode> {
  const program = createProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with an "error" too; a group without its verb shows help and is a usage error.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.OK;
      return EXIT.USAGE;
    }
    return reportError(err, io.stderr, io.env);
  }
}

// A closed pipe (`benchmarks results list | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.OK);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), processIo());
