/**
 * `@benchmarks/cli`: the `benchmarks` command as a library, to embed or test it in-process.
 * @example
 * import { runCli, processIo } from '@benchmarks/cli';
 * process.exitCode = await runCli(['results', 'list', '--output', 'json'], processIo());
 */
export { runCli } from './run.ts';
export { createProgram } from './program.ts';
export { processIo, type Io } from './io.ts';
export { EXIT, CliError, UsageError, AuthError } from './errors.ts';
