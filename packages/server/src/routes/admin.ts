import type { adminOperations } from '@benchmarks/sdk/contract/admin';
import type { Handlers } from '../http/handler.ts';
import { listSubmits, listUsers, removeUsers, restoreUsers, searchUsers } from '../services/catalogue/admin.ts';

export const adminHandlers: Handlers<typeof adminOperations> = {
  listSubmits: ({ em, query }) => listSubmits(em, query),
  listUsers: ({ em, query }) => listUsers(em, query),
  searchUsers: ({ em, query }) => searchUsers(em, query),
  removeUsers: async ({ em, query }) => {
    await removeUsers(em, query);
  },
  restoreUsers: async ({ em, query }) => {
    await restoreUsers(em, query);
  },
};
