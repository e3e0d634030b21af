import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Status, Timestamp, UploadBounds, Uuid } from './common.ts';
import { UploaderRef } from './catalogue-schemas.ts';
import { UserAdmin } from './admin.ts';

const ClaimFields = {
  id: Uuid,
  message: Type.String({ description: "The claimant's explanation of the issue." }),
  resource_type: Type.Literal('result', { description: 'Kind of the claimed resource.' }),
  resource_id: Uuid,
  status: Status,
  upload_datetime: Timestamp,
};

/** A claim as its claimant and the result's uploader see it: the claimant without personal data. */
export const Claim = Type.Object({ ...ClaimFields, uploader: UploaderRef }, { $id: 'Claim' });

/** A claim as administrators see it (GET /reports/claims...): the claimant as a user, email included. */
export const ClaimAdmin = Type.Object({ ...ClaimFields, uploader: UserAdmin }, { $id: 'ClaimAdmin' });

export const ClaimInput = Type.Object(
  {
    message: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '\\S',
      description: 'What is wrong with the result (1 to 2000 characters).',
    }),
  },
  { $id: 'ClaimInput', additionalProperties: false },
);

export const ClaimSort = { fields: ['upload_datetime', 'id', 'status'] as const, default: '+upload_datetime' };

const ClaimAdminPage = Page(ClaimAdmin, 'ClaimAdminPage');

/** The list of a result's claims and of the caller's own. */
const ClaimList = {
  query: ListQuery(
    { status: Type.Optional(Type.Union(Status.anyOf, { description: 'Only claims with this status (default: all).' })), ...UploadBounds },
    ClaimSort,
  ),
  response: { status: 200, schema: Page(Claim, 'ClaimPage') },
} as const;
const Review = { tag: 'reports', auth: 'admin' } as const;
const OneClaim = { ...Review, params: IdParams } as const;
const Decided = { ...OneClaim, method: 'POST', response: { status: 204, schema: null }, errors: [409] } as const;

export const claimResult = defineOperation({
  operationId: 'claimResult',
  method: 'POST',
  path: '/results/{id}:claim',
  tag: 'results',
  summary: 'File a claim against a result, which is hidden until the claim is reviewed',
  description:
    'Any registered user may claim any result, also one already claimed (each claim is reviewed on its own). ' +
    'A result deleted by an administrator: 409 RESULT_DELETED. A user with `MAX_OPEN_CLAIMS` claims on review ' +
    '(default 50): 422 TOO_MANY_OPEN_CLAIMS until administrators review some.',
  auth: 'user',
  params: IdParams,
  headers: IdempotencyHeaders,
  body: ClaimInput,
  response: { status: 201, schema: Claim },
  errors: [409, 422],
});

export const listResultClaims = defineOperation({
  operationId: 'listResultClaims',
  method: 'GET',
  path: '/results/{id}/claims',
  tag: 'results',
  summary: 'Claims filed against a result (its uploader or an administrator)',
  description: 'Every status unless `status` says otherwise. Others: 403 NOT_UPLOADER.',
  auth: 'user',
  params: IdParams,
  ...ClaimList,
});

export const listClaims = defineOperation({
  ...Review,
  operationId: 'listClaims',
  method: 'GET',
  path: '/reports/claims',
  summary: 'Claims to review (administrators)',
  description:
    'Claims on review unless `status=approved` asks for the upheld ones. `uploader_iss` and `uploader_sub` narrow ' +
    'the list to one claimant (exact values), e.g. to review or reject in bulk what one user filed. Each claim ' +
    'shows its claimant with email.',
  query: ListQuery(
    {
      status: Type.Optional(
        Type.Union([Type.Literal('on_review'), Type.Literal('approved')], {
          default: 'on_review',
          description: 'Only claims with this status (default on_review: the ones waiting for a review).',
        }),
      ),
      resource_type: Type.Optional(Type.Literal('result', { description: 'Kind of the claimed resource.' })),
      resource_id: Type.Optional(Uuid),
      uploader_iss: Type.Optional(
        Type.String({ minLength: 1, maxLength: 1000, description: 'Only claims filed by users of this issuer (exact).' }),
      ),
      uploader_sub: Type.Optional(
        Type.String({ minLength: 1, maxLength: 1000, description: 'Only claims filed by users with this subject (exact).' }),
      ),
      ...UploadBounds,
    },
    ClaimSort,
  ),
  response: { status: 200, schema: ClaimAdminPage },
});

export const ClaimIds = Type.Object(
  {
    ids: Type.Array(Uuid, { minItems: 1, maxItems: 500, description: 'The claims to reject (1 to 500 ids).' }),
  },
  { $id: 'ClaimIds', additionalProperties: false },
);

export const ClaimRejections = Type.Object(
  {
    rejected: Type.Array(Uuid, {
      description: 'Claims that were on review: removed; their results are restored once nothing else hides them.',
    }),
    not_found: Type.Array(Uuid, { description: 'Ids of no claim (never filed, or already rejected or deleted).' }),
    already_approved: Type.Array(Uuid, { description: 'Upheld claims, left as they are (DELETE /reports/claims/{id} removes one).' }),
  },
  { $id: 'ClaimRejections' },
);

export const rejectClaims = defineOperation({
  ...Review,
  operationId: 'rejectClaims',
  method: 'POST',
  path: '/reports/claims:reject',
  summary: 'Reject many claims on review at once',
  description:
    'Rejects, in one transaction, every listed claim that is on review, as POST /reports/claims/{id}:reject does ' +
    'for one. The others do not fail the request: the answer says which ids named no claim and which claims are ' +
    'upheld (left as they are). Each list keeps the order of the request, duplicates collapsed.',
  body: ClaimIds,
  response: { status: 200, schema: ClaimRejections },
});

export const getClaim = defineOperation({
  ...OneClaim,
  operationId: 'getClaim',
  method: 'GET',
  path: '/reports/claims/{id}',
  summary: 'One claim (administrators): the claimant with email',
  response: { status: 200, schema: ClaimAdmin },
});

export const approveClaim = defineOperation({
  ...Decided,
  operationId: 'approveClaim',
  path: '/reports/claims/{id}:approve',
  summary: 'Uphold a claim: the result stays hidden',
  description: 'An approved claim: 409 ALREADY_APPROVED.',
});

export const rejectClaim = defineOperation({
  ...Decided,
  operationId: 'rejectClaim',
  path: '/reports/claims/{id}:reject',
  summary: 'Reject a claim on review: it is removed, and the result restored once no claim is left',
  description: 'An approved claim: 409 ALREADY_APPROVED (DELETE removes it). A deleted result stays hidden.',
});

export const deleteClaim = defineOperation({
  ...OneClaim,
  operationId: 'deleteClaim',
  method: 'DELETE',
  path: '/reports/claims/{id}',
  summary: 'Delete a claim of any status; the result is restored once no claim is left',
  description: 'A deleted result stays hidden.',
  response: { status: 204, schema: null },
});

export const listSelfClaims = defineOperation({
  operationId: 'listSelfClaims',
  method: 'GET',
  path: '/users/self/claims',
  tag: 'users',
  summary: 'The claims the caller filed',
  description: 'Every status unless `status` says otherwise.',
  auth: 'user',
  ...ClaimList,
});

export const claimOperations = {
  claimResult,
  listResultClaims,
  listClaims,
  getClaim,
  approveClaim,
  rejectClaim,
  rejectClaims,
  deleteClaim,
  listSelfClaims,
};
