import type { Logger } from './logger.ts';

/** `logger` with `fields` on every line (a line's own win): a worker's id. */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  const at =
    (log: Logger['info']): Logger['info'] =>
    (msg, more) =>
      log(msg, { ...fields, ...more });
  return {
    debug: at(logger.debug),
    info: at(logger.info),
    warn: at(logger.warn),
    error: at(logger.error),
    flush: () => logger.flush(),
  };
}
