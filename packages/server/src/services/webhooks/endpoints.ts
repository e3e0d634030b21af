/** The caller's webhook endpoints (docs/webhooks.md): created, read, changed and deleted by their owner only. */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import { WEBHOOK_EVENTS, type WebhookInput, type WebhookUpdate } from '@benchmarks/sdk/contract/webhooks';
import type { Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { formatTimestamp } from '../../core/format.ts';
import { Where } from '../../db/sql.ts';
import { transaction } from '../../db/transaction.ts';
import { paginate } from '../catalogue/catalogue.ts';
import { columnKey } from '../query/keyset.ts';
import { urlRefusal } from './addresses.ts';
import { newSecret } from './signing.ts';

/** How long a rotated-out secret still signs: receivers have a day to take the new one. */
export const ROTATION_HOURS = 24;

export interface EndpointRow {
  id: string;
  url: string;
  events: (typeof WEBHOOK_EVENTS)[number][];
  format: 'standard' | 'slack';
  enabled: boolean;
  disabled_reason: string | null;
  created_datetime: Date;
}

export function webhookView(row: EndpointRow, secret?: string) {
  const { id, url, events, format, enabled, disabled_reason, created_datetime } = row;
  return {
    id,
    url,
    events,
    format,
    enabled,
    disabled_reason,
    created_datetime: formatTimestamp(created_datetime),
    ...(secret ? { secret } : {}),
  };
}

const COLUMNS = 'id, url, events, format, enabled, disabled_reason, created_datetime';

async function checkUrl(url: string, allowPrivate: boolean): Promise<void> {
  const why = await urlRefusal(url, allowPrivate);
  if (why) {
    throw new AppError(422, 'INVALID_WEBHOOK_URL', `The webhook URL ${url} is refused: ${why}.`, {
      errors: [{ in: 'body', path: '/url', message: why }],
    });
  }
}

/** The caller's endpoint `id`, locked when `lock`; 404 when it is someone else's or none. */
export async function findEndpoint(em: EntityManager, caller: Caller, id: string, lock = false): Promise<EndpointRow> {
  const [row] = await em.execute<EndpointRow[]>(
    `select ${COLUMNS} from webhook_endpoint where id = ? and user_iss = ? and user_sub = ?${lock ? ' for update' : ''}`,
    [id, caller.identity.iss, caller.identity.sub],
  );
  if (!row) throw errors.notFound('Webhook', id);
  return row;
}

export async function createEndpoint(
  em: EntityManager,
  caller: Caller,
  body: Static<typeof WebhookInput>,
  limits: { allowPrivate: boolean; maxPerUser: number },
) {
  await checkUrl(body.url, limits.allowPrivate);
  const { iss, sub } = caller.identity;
  const secret = newSecret();
  const row = await transaction(em, async (tx) => {
    // The user row locked first: concurrent creations of one user are counted one after the other.
    await tx.execute('select 1 from app_user where iss = ? and sub = ? for no key update', [iss, sub]);
    const [count] = await tx.execute<{ n: number }[]>(
      'select count(*)::int as n from webhook_endpoint where user_iss = ? and user_sub = ?',
      [iss, sub],
    );
    if (count!.n >= limits.maxPerUser) {
      throw new AppError(
        422,
        'TOO_MANY_WEBHOOKS',
        `You have ${count!.n} webhook endpoints, the most one user may have (${limits.maxPerUser}).`,
        {
          extensions: { limit: limits.maxPerUser },
        },
      );
    }
    const [created] = await tx.execute<EndpointRow[]>(
      `insert into webhook_endpoint (id, user_iss, user_sub, url, events, format, secret)
       values (?, ?, ?, ?, ?::text[], ?, ?)
       returning ${COLUMNS}`,
      [randomUUID(), iss, sub, body.url, body.events ?? [...WEBHOOK_EVENTS], body.format ?? 'standard', secret],
    );
    return created!;
  });
  return webhookView(row, secret);
}

export async function listEndpoints(em: EntityManager, caller: Caller, query: { page?: number; per_page?: number; cursor?: string }) {
  const where = new Where().add('user_iss = ? and user_sub = ?', caller.identity.iss, caller.identity.sub);
  const keys = [columnKey('created_datetime', false), columnKey('id', false, true)];
  return paginate(em, { from: 'webhook_endpoint', columns: COLUMNS }, where, keys, query, (row: EndpointRow) => webhookView(row));
}

export async function updateEndpoint(
  em: EntityManager,
  caller: Caller,
  id: string,
  body: Static<typeof WebhookUpdate>,
  allowPrivate: boolean,
) {
  await findEndpoint(em, caller, id);
  if (body.url !== undefined) await checkUrl(body.url, allowPrivate);
  const secret = body.rotate_secret ? newSecret() : undefined;
  const row = await transaction(em, async (tx) => {
    await findEndpoint(tx, caller, id, true);
    const [updated] = await tx.execute<EndpointRow[]>(
      `update webhook_endpoint set
         url = coalesce(?, url),
         events = coalesce(?::text[], events),
         enabled = coalesce(?, enabled),
         disabled_reason = case when ?::boolean then null else disabled_reason end,
         previous_secret = case when ?::text is null then previous_secret else secret end,
         previous_secret_until = case when ?::text is null then previous_secret_until else now() + interval '${ROTATION_HOURS} hours' end,
         secret = coalesce(?, secret)
       where id = ? returning ${COLUMNS}`,
      [
        body.url ?? null,
        body.events ?? null,
        body.enabled ?? null,
        body.enabled === true,
        secret ?? null,
        secret ?? null,
        secret ?? null,
        id,
      ],
    );
    return updated!;
  });
  return webhookView(row, secret);
}

export async function deleteEndpoint(em: EntityManager, caller: Caller, id: string): Promise<void> {
  await findEndpoint(em, caller, id);
  await em.execute('delete from webhook_endpoint where id = ?', [id]);
}
