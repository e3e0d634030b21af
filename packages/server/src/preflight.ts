/**
 * What `start` checks before it starts anything, so that a start that cannot serve fails at once with
 * one clear line and leaves nothing behind: the data directory can be used and no live server runs
 * its cluster (db/leftover.ts), and the HTTP port and `--database-port` are free (one taken meanwhile
 * is reported with the same line later). `signal` ends the checks at once, rejecting with its reason.
 */
import type { ServerConfig } from './config.ts';
import type { Logger } from './core/logger.ts';
import { ensureDataDir } from './db/data-dir.ts';
import { ConfigurationError } from './core/errors.ts';
import { claimDataDir } from './db/embedded.ts';
import { checkDatabasePort, portUnavailable } from './db/ports.ts';
import { logEmbeddedEvent } from './db/embedded-events.ts';
import { listenFailure } from './server.ts';

export async function preflight(config: ServerConfig, logger: Logger, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  if (!config.databaseUrl) await claimDataDir(config.dataDir, (event) => logEmbeddedEvent(logger, event), signal);
  else if (config.demo) await ensureDataDir(config.dataDir);
  signal?.throwIfAborted();
  if (config.port) {
    const code = await portUnavailable(config.host, config.port);
    if (code)
      throw (
        listenFailure(code, config.host, config.port) ?? new ConfigurationError(`Cannot listen on ${config.host}:${config.port}: ${code}.`)
      );
  }
  if (!config.databaseUrl && config.databasePort) await checkDatabasePort(config.databasePort);
  signal?.throwIfAborted();
}
