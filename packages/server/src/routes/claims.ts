import type { claimOperations } from '@benchmarks/sdk/contract/claims';
import type { Handlers } from '../http/handler.ts';
import * as claims from '../services/catalogue/claims.ts';

export const claimHandlers: Handlers<typeof claimOperations> = {
  claimResult: ({ params, body, caller, services, idempotent }) =>
    idempotent((em) => claims.claimResult(em, caller, params.id, body.message, services.config.maxOpenClaims)),
  listResultClaims: ({ em, params, query, caller }) => claims.listResultClaims(em, caller, params.id, query),
  listClaims: ({ em, query }) => claims.listClaims(em, query, claims.claimAdminView),
  getClaim: ({ em, params }) => claims.getClaimAdmin(em, params.id),
  async approveClaim({ em, params }) {
    await claims.approveClaim(em, params.id);
  },
  async rejectClaim({ em, params }) {
    await claims.rejectClaim(em, params.id);
  },
  rejectClaims: ({ em, body }) => claims.rejectClaims(em, body.ids),
  async deleteClaim({ em, params }) {
    await claims.deleteClaim(em, params.id);
  },
  listSelfClaims: ({ em, query, caller }) =>
    claims.listClaims(em, query, claims.claimView, [
      { sql: 'c.uploader_iss = ? and c.uploader_sub = ?', params: [caller.identity.iss, caller.identity.sub] },
    ]),
};
