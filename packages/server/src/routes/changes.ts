import type { changesOperations } from '@benchmarks/sdk/contract/changes';
import type { Handlers } from '../http/handler.ts';
import { chosenFormat, textReply } from '../http/formats.ts';
import { setWarnings } from '../http/warnings.ts';
import { findChanges } from '../services/changes/changes.ts';
import { changesCsv } from '../services/changes/changes-csv.ts';
import { watchesOf } from '../services/alerts/watches.ts';
import { refreshWatch } from '../services/alerts/records.ts';
import { markChanges } from '../services/alerts/marks.ts';
import { renderChangesSvg } from '@benchmarks/sdk/changes-chart';

export const changesHandlers: Handlers<typeof changesOperations> = {
  findChanges: async ({ em, services, query, koa, caller }) => {
    const format = chosenFormat(koa, query.format);
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
    const text = textReply(format, (f) => (f === 'csv' ? changesCsv(answer) : renderChangesSvg(answer, benchmarkName, sketch)));
    if (text) return text;
    // The marks depend on the caller: Vary says so to shared caches.
    koa.vary('Authorization');
    return markChanges(em, caller, watches, answer);
  },
};
