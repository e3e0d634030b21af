import type { changesOperations } from '@benchmarks/sdk/contract/changes';
import type { Handlers } from '../http/handler.ts';
import { reply } from '../core/reply.ts';
import { setWarnings } from '../http/warnings.ts';
import { findChanges } from '../services/changes/changes.ts';
import { changesCsv } from '../services/changes/changes-csv.ts';
import { watchesOf } from '../services/alerts/watches.ts';
import { refreshWatch } from '../services/alerts/records.ts';
import { markChanges } from '../services/alerts/marks.ts';
import { renderChangesSvg } from '@benchmarks/sdk/changes-chart';

type Format = 'json' | 'csv' | 'svg';

/** `format` when given, else what `Accept` prefers among JSON, CSV and SVG (JSON for `*\/*` or none). */
function chosenFormat(format: Format | undefined, accepts: (...types: string[]) => string | false): Format {
  if (format) return format;
  const type = accepts('application/json', 'text/csv', 'image/svg+xml');
  return type === 'text/csv' ? 'csv' : type === 'image/svg+xml' ? 'svg' : 'json';
}

export const changesHandlers: Handlers<typeof changesOperations> = {
  findChanges: async ({ em, services, query, koa, caller }) => {
    const format = chosenFormat(query.format, (...types) => koa.accepts(...types));
    if (!query.format) koa.vary('Accept');
    // Watches of this very series bring their records up to date first (docs/alerts.md).
    const watches = await watchesOf(em, query);
    for (const watch of watches) await refreshWatch(em, watch, services.changes.segmenter);
    // It reads every matching result of a benchmark, as compare does: admitted with the expensive lists, unless remembered.
    const { answer, benchmarkName, sketch } = await services.changes.cache.answer(query, () =>
      services.runtime.expensiveLists.run(() =>
        findChanges(em, query, { schemaPaths: services.results.schemaPaths, segmenter: services.changes.segmenter }),
      ),
    );
    setWarnings(koa, answer.warnings);
    if (format === 'csv') return reply(200, changesCsv(answer), { 'Content-Type': 'text/csv; charset=utf-8; header=present' });
    if (format === 'svg') {
      return reply(200, renderChangesSvg(answer, benchmarkName, sketch), {
        'Content-Type': 'image/svg+xml; charset=utf-8',
        'Cache-Control': 'public, max-age=60',
      });
    }
    // The marks depend on the caller: Vary says so to shared caches.
    koa.vary('Authorization');
    return markChanges(em, caller, watches, answer);
  },
};
