/** The deliveries log of an endpoint, and deliveries made again on request. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../../core/caller.ts';
import { errors } from '../../core/errors.ts';
import { formatTimestamp } from '../../core/format.ts';
import { Where } from '../../db/sql.ts';
import { paginate } from '../catalogue/catalogue.ts';
import { columnKey } from '../query/keyset.ts';
import { findEndpoint } from './endpoints.ts';

interface AttemptRow {
  id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  attempted_datetime: Date;
  status: number | null;
  duration_ms: number;
  response: string;
  error: string | null;
  delivery_state: 'pending' | 'succeeded' | 'failed';
}

const ATTEMPTS = 'webhook_attempt a join webhook_delivery d on d.id = a.delivery_id join alert_event e on e.id = d.event_id';
const COLUMNS =
  'a.id, a.delivery_id, d.event_id, e.type as event_type, a.attempted_datetime, a.status, a.duration_ms, a.response, a.error, d.state as delivery_state';

/** Every attempt of the endpoint's deliveries, newest first. */
export async function listAttempts(
  em: EntityManager,
  caller: Caller,
  id: string,
  query: { page?: number; per_page?: number; cursor?: string },
) {
  await findEndpoint(em, caller, id);
  const where = new Where().add('a.endpoint_id = ?', id);
  const keys = [columnKey('a.attempted_datetime', true), columnKey('a.id', true, true)];
  return paginate(em, { from: ATTEMPTS, columns: COLUMNS, name: 'webhook_attempt' }, where, keys, query, (row: AttemptRow) => ({
    ...row,
    attempted_datetime: formatTimestamp(row.attempted_datetime),
  }));
}

/** Makes a finished delivery due now with a fresh schedule; the event, so its webhook-id, stays the same. */
export async function redeliver(em: EntityManager, caller: Caller, id: string, deliveryId: string): Promise<void> {
  const endpoint = await findEndpoint(em, caller, id);
  if (!endpoint.enabled) {
    throw errors.conflict('WEBHOOK_DISABLED', `Webhook ${id} is disabled: enable it (PATCH enabled: true) before delivering again.`);
  }
  const [row] = await em.execute<{ pending: boolean }[]>(
    `with old as (select id, state from webhook_delivery where id = ? and endpoint_id = ? for update)
     update webhook_delivery d set state = 'pending', attempts = 0, first_attempt_datetime = null, next_attempt_datetime = now()
     from old where d.id = old.id and old.state <> 'pending' returning false as pending`,
    [deliveryId, id],
  );
  if (row) return;
  // Pending: its attempt may be in flight, and making it due now could start a second one at once.
  const [pending] = await em.execute('select 1 from webhook_delivery where id = ? and endpoint_id = ?', [deliveryId, id]);
  if (!pending) throw errors.notFound('Delivery', deliveryId);
  throw errors.conflict('DELIVERY_PENDING', `Delivery ${deliveryId} is still pending: it is retried on its schedule.`);
}
