import type { Logger } from './logger.ts';

/**
 * `logger` with `fields` added to every line (a line's own fields win): the worker id on every
 * line of a worker of `--workers`.
 */
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
