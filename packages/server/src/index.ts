/**
 * `@benchmarks/server`: the benchmark results service. Most operators run the `benchmarks-server`
 * command; this module is for embedding the server in another process (tests, a demo, tools).
 * @example
 * import { buildConfig, startServer } from '@benchmarks/server';
 * const server = await startServer(buildConfig({ port: '0', dataDir: '.benchmarks' }));
 * console.log(server.url);
 * await server.close();
 */
export { main, program, type DemoModule, type RunningDemo, type ProgramOptions } from './program.ts';
export { startServer, VERSION, type RunningServer, type StartOptions } from './server.ts';
export { openDatabase, connectDatabase, type DatabaseHandle } from './db/bootstrap.ts';
export { buildConfig, DEFAULTS, type ServerConfig, type RawConfig } from './config.ts';
export { createLogger, LOG_LEVELS, type Logger, type LogLevel } from './core/logger.ts';
export { ConfigurationError } from './core/errors.ts';
export { freePort } from './db/embedded.ts';
export { migrate } from './db/orm.ts';
export { register as registerUser } from './services/catalogue/users.ts';
export * from './entities/index.ts';
export type { AppContext } from './services/app-context.ts';
