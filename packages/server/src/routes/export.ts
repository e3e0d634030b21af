import type { exportOperations } from '@benchmarks/sdk/contract/export';
import type { Handlers } from '../http/handler.ts';
import { reply } from '../core/reply.ts';
import { currentScope } from '../db/request-scope.ts';
import { exportResults, type ExportFormat } from '../services/export.ts';
import { exportPaths, pathWarnings } from '../services/path-warnings.ts';
import { warningHeader } from '../http/warnings.ts';

/** `format` when given, else CSV when `Accept` prefers it to NDJSON (NDJSON for `*\/*` or none). */
function chosenFormat(format: ExportFormat | undefined, accepts: (...types: string[]) => string | false): ExportFormat {
  if (format) return format;
  return accepts('application/x-ndjson', 'text/csv') === 'text/csv' ? 'csv' : 'ndjson';
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

export const exportHandlers: Handlers<typeof exportOperations> = {
  exportResults: async ({ em, services, query, koa }) => {
    const format = chosenFormat(query.format, (...types) => koa.accepts(...types));
    if (!query.format) koa.vary('Accept');
    // A request whose client goes away leaves the line (db/request-scope.ts aborts its signal).
    const leave = await services.exports.enter(currentScope()?.signal);
    try {
      const warnings = await pathWarnings(em, services.schemaPaths, query.benchmark_id, exportPaths(query, format));
      const stream = await exportResults(
        em,
        { embeds: services.embeds, statementTimeoutMs: services.config.statementTimeoutMs },
        query,
        format,
      );
      // The place is given back when the stream ends, fails or its client goes away.
      stream.once('close', leave);
      const warning = warningHeader(warnings);
      return reply(200, stream, {
        'Content-Type': CONTENT_TYPES[format],
        'Content-Disposition': `attachment; filename="results.${format}"`,
        'Cache-Control': 'no-store',
        ...(warning ? { Warning: warning } : {}),
      });
    } catch (err) {
      leave();
      throw err;
    }
  },
};
