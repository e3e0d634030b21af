import type { compareOperations } from '@benchmarks/sdk/contract/compare';
import type { Handlers } from '../http/handler.ts';
import { reply } from '../core/reply.ts';
import { setWarnings } from '../http/warnings.ts';
import { compareResults } from '../services/compare/compare.ts';
import { compareCsv } from '../services/compare/compare-csv.ts';
import { renderCompareSvg } from '@benchmarks/sdk/chart';

type Format = 'json' | 'csv' | 'svg';

/** `format` when given, else what `Accept` prefers among JSON, CSV and SVG (JSON for `*\/*` or none). */
function chosenFormat(format: Format | undefined, accepts: (...types: string[]) => string | false): Format {
  if (format) return format;
  const type = accepts('application/json', 'text/csv', 'image/svg+xml');
  return type === 'text/csv' ? 'csv' : type === 'image/svg+xml' ? 'svg' : 'json';
}

export const compareHandlers: Handlers<typeof compareOperations> = {
  compareResults: async ({ em, services, query, koa }) => {
    const format = chosenFormat(query.format, (...types) => koa.accepts(...types));
    if (!query.format) koa.vary('Accept');
    // It reads every matching result of a benchmark: admitted with the expensive lists, unless
    // remembered (the answer; or what it read, at another confidence, direction or ranking).
    const { answer, benchmarkName } = await services.compare.cache.answer(query, () =>
      services.runtime.expensiveLists.run(() =>
        compareResults(em, query, { schemaPaths: services.results.schemaPaths, cache: services.compare.cache }),
      ),
    );
    setWarnings(koa, answer.warnings);
    if (format === 'csv') return reply(200, compareCsv(answer), { 'Content-Type': 'text/csv; charset=utf-8; header=present' });
    if (format === 'svg') {
      return reply(200, renderCompareSvg(answer, benchmarkName), {
        'Content-Type': 'image/svg+xml; charset=utf-8',
        'Cache-Control': 'public, max-age=60',
      });
    }
    return answer;
  },
};
