import type Koa from 'koa';
import type { resultOperations } from '@benchmarks/sdk/contract/results';
import type { Handlers } from '../http/handler.ts';
import { setWarnings } from '../http/warnings.ts';
import type { JsonText } from '../core/reply.ts';
import type { PathWarning } from '../services/results/path-warnings.ts';
import { deleteResult, getResult, listResults, replaceResultTags, resultUploader } from '../services/results/results.ts';
import { createResult, createResults } from '../services/results/uploads.ts';

/** The page, its warnings (if any) also in the Warning header. */
async function warned(koa: Koa.Context, list: Promise<{ body: JsonText; warnings: PathWarning[] }>): Promise<JsonText> {
  const { body, warnings } = await list;
  setWarnings(koa, warnings);
  return body;
}

export const resultHandlers: Handlers<typeof resultOperations> = {
  listResults: ({ em, query, services, koa }) => warned(koa, listResults(em, services, query, { visible: true })),
  searchResults: ({ em, query, services, koa }) => warned(koa, listResults(em, services, query, { visible: true })),
  listSelfResults: ({ em, query, caller, services, koa }) =>
    warned(koa, listResults(em, services, query, { uploader: { iss: caller.identity.iss, sub: caller.identity.sub } })),
  getResult: ({ em, params, services }) => getResult(em, services, params.id),
  createResult: ({ query, body, caller, services, idempotent }) =>
    idempotent((em) => createResult(em, services.results.uploads, caller, query, body)),
  createResults: ({ body, caller, services, idempotent }) =>
    idempotent((em) => createResults(em, services.results.uploads, caller, body.items)),
  async deleteResult({ em, params }) {
    await deleteResult(em, params.id);
  },
  async updateResultTags({ em, params, body, caller }) {
    await replaceResultTags(em, caller, params.id, body.tags_ids);
  },
  getResultUploader: ({ em, params }) => resultUploader(em, params.id),
};
