import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A registered user, keyed by the (iss, sub) of their tokens. */
export const User = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    iss: p.text().primary(),
    sub: p.text().primary(),
    email: p.text().nullable(),
    registration_datetime: p.datetime(),
    terms_version: p.text(),
    /** Set when an administrator removed the user: personal data is erased, uploads are kept. */
    removed_datetime: p.datetime().nullable(),
  },
});
export type UserRow = InferEntity<typeof User>;
