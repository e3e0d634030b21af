/** One invocation of the program, from arguments to exit code, for the executable and for tests. */
import { CommanderError } from 'commander';
import { EXIT, reportError, type ExitCode } from './errors.ts';
import type { Io } from './io.ts';
import { createProgram } from './program.ts';
import { colorEnabled } from './terminal.ts';

/** Runs `benchmarks <argv>` with `io`; never throws. */
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
    return reportError(err, io.stderr, io.env, colorEnabled(io, 'stderr'));
  }
}
