import type { Logger } from '../core/logger.ts';
import type { EmbeddedEvent } from './embedded.ts';
import { describeExit } from './postmaster.ts';

/** The log line of each event of the embedded cluster's life: a left-over cluster stopped, an unexpected end, a restart. */
export function logEmbeddedEvent(logger: Logger, event: EmbeddedEvent): void {
  switch (event.type) {
    case 'leftover stopped':
      logger.warn('stopped the embedded PostgreSQL left running by a server that ended', { pid: event.pid });
      break;
    case 'ended':
      logger.error('the embedded PostgreSQL ended unexpectedly: starting it again', {
        ended: describeExit(event.exit),
        lastLines: event.lines,
      });
      break;
    case 'retrying':
      logger.warn('the embedded PostgreSQL did not start again: trying once more', { error: event.error, retryInMs: event.inMs });
      break;
    case 'restarted':
      logger.info('the embedded PostgreSQL runs again', { ms: event.ms });
      break;
    case 'failed':
      logger.error('the embedded PostgreSQL is given up', { error: event.error.message });
      break;
  }
}
