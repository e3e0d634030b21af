/**
 * The `benchmarks` executable (bin/benchmarks.js imports it): runs the program on the process's
 * arguments and sets the exit code (0 ok, 1 error, 2 usage, 4 not authenticated or not allowed).
 */
import { EXIT } from './errors.ts';
import { processIo } from './io.ts';
import { runCli } from './run.ts';

// A closed pipe (`benchmarks results list | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.OK);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), processIo());
