import type * as users from '@benchmarks/sdk/contract/users';
import type { Handlers } from '../http/handler.ts';
import { AppError } from '../core/errors.ts';
import { reply } from '../core/reply.ts';
import { register, refreshEmail, userView } from '../services/catalogue/users.ts';

type Ops = Pick<typeof users, 'registerSelf' | 'upsertSelf' | 'getSelf' | 'updateSelf' | 'tryAdmin'>;

export const userHandlers: Handlers<Ops> = {
  async registerSelf({ em, caller, services }) {
    const { user, created } = await register(em, caller.identity, services.config.termsVersion);
    if (!created) throw new AppError(409, 'ALREADY_REGISTERED', 'You are already registered.');
    return userView(user);
  },
  async upsertSelf({ em, caller, services }) {
    const { user, created } = await register(em, caller.identity, services.config.termsVersion);
    return created ? reply(201, userView(user)) : userView(user);
  },
  async getSelf({ caller }) {
    if (!caller.user) throw new AppError(404, 'NOT_REGISTERED', 'You are not registered: POST /api/v1/users:register first.');
    return userView(caller.user);
  },
  async updateSelf({ em, caller }) {
    await refreshEmail(em, caller.user!, caller.identity);
  },
  async tryAdmin() {},
};
