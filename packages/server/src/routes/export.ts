import type { exportOperations } from '@benchmarks/sdk/contract/export';
import type { Handlers } from '../http/handler.ts';
import { enforceExportDeadlines } from '../http/export-deadlines.ts';
import { reply } from '../core/reply.ts';
import { currentScope } from '../db/request-scope.ts';
import { exportResults, type ExportFormat } from '../services/export/export.ts';
import { exportPaths, pathWarnings } from '../services/results/path-warnings.ts';
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

/**
 * PostgreSQL ends a cursor's transaction left idle this long after the longest an export may
 * stream: a backstop should the server itself fail to end it. Without a duration cap, no limit:
 * a slow but steady reader idles the cursor for as long as it takes to read a batch.
 */
const IDLE_BEYOND_MAX_DURATION_MS = 60_000;

export const exportHandlers: Handlers<typeof exportOperations> = {
  exportResults: async ({ em, services, query, koa }) => {
    const format = chosenFormat(query.format, (...types) => koa.accepts(...types));
    if (!query.format) koa.vary('Accept');
    const { statementTimeoutMs, exportStallTimeoutMs, exportMaxDurationMs } = services.config;
    // A request whose client goes away leaves the line (db/request-scope.ts aborts its signal).
    const leave = await services.runtime.exports.enter(currentScope()?.signal, currentScope()?.client);
    // From the moment it has a place: a client that stops reading, or reads for too long, is cut off.
    enforceExportDeadlines(koa, { stallMs: exportStallTimeoutMs, maxMs: exportMaxDurationMs });
    try {
      const warnings = await pathWarnings(em, services.results.schemaPaths, query.benchmark_id, exportPaths(query, format));
      const stream = await exportResults(
        em,
        {
          embeds: services.catalogue.embeds,
          statementTimeoutMs,
          idleTimeoutMs: exportMaxDurationMs > 0 ? exportMaxDurationMs + IDLE_BEYOND_MAX_DURATION_MS : 0,
        },
        query,
        format,
      );
      // The place is given back when the stream ends, fails (its connection lost) or its client
      // goes away, or is cut off.
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
