import type { resultOperations } from '@benchmarks/sdk/contract/results';
import type { Handlers } from '../http/handler.ts';
import { deleteResult, getResult, listResults, replaceResultTags, resultUploader } from '../services/results.ts';
import { createResult, createResults } from '../services/uploads.ts';

export const resultHandlers: Handlers<typeof resultOperations> = {
  listResults: ({ em, query, services }) => listResults(em, services, query, { visible: true }),
  searchResults: ({ em, query, services }) => listResults(em, services, query, { visible: true }),
  listSelfResults: ({ em, query, caller, services }) =>
    listResults(em, services, query, { uploader: { iss: caller.identity.iss, sub: caller.identity.sub } }),
  getResult: ({ em, params, services }) => getResult(em, services, params.id),
  createResult: ({ query, body, caller, services, idempotent }) =>
    idempotent((em) => createResult(em, services.uploads, caller, query, body)),
  createResults: ({ body, caller, services, idempotent }) => idempotent((em) => createResults(em, services.uploads, caller, body.items)),
  async deleteResult({ em, params }) {
    await deleteResult(em, params.id);
  },
  async updateResultTags({ em, params, body, caller }) {
    await replaceResultTags(em, caller, params.id, body.tags_ids);
  },
  getResultUploader: ({ em, params }) => resultUploader(em, params.id),
};
