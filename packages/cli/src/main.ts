/**
 * The `benchmarks` executable (bundled into dist/benchmarks.js, and into the standalone executable;
 * bin/benchmarks.js runs it from a clone): runs the program on the process's arguments and sets the
 * exit code (0 ok, 1 error, 2 usage, 4 not authenticated or not allowed). No top-level await, so the
 * same entry bundles as CommonJS for Node's single executable applications.
 */
import { EXIT } from './errors.ts';
import { processIo } from './io.ts';
import { eraseProgress } from './progress.ts';
import { runCli } from './run.ts';

// A closed pipe (`benchmarks results list | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') {
    eraseProgress();
    process.exit(EXIT.OK);
  }
  throw err;
});

void runCli(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
