import type { compareOperations } from '@benchmarks/sdk/contract/compare';
import type { Handlers } from '../http/handler.ts';
import { chosenFormat, textReply } from '../http/formats.ts';
import { setWarnings } from '../http/warnings.ts';
import { compareResults } from '../services/compare/compare.ts';
import { compareCsv } from '../services/compare/compare-csv.ts';
import { renderCompareSvg } from '@benchmarks/sdk/chart';

export const compareHandlers: Handlers<typeof compareOperations> = {
  compareResults: async ({ em, services, query, koa }) => {
    const format = chosenFormat(koa, query.format);
    // It reads every matching result of a benchmark: admitted with the expensive lists, unless
    // remembered (the answer; or what it read, at another confidence, direction or ranking).
    const { answer, benchmarkName } = await services.compare.cache.answer(query, () =>
      services.runtime.expensiveLists.run(() =>
        compareResults(em, query, { schemaPaths: services.results.schemaPaths, cache: services.compare.cache }),
      ),
    );
    setWarnings(koa, answer.warnings);
    return textReply(format, (f) => (f === 'csv' ? compareCsv(answer) : renderCompareSvg(answer, benchmarkName))) ?? answer;
  },
};
