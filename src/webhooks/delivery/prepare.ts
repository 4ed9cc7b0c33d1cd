// The last step before a claimed delivery's request leaves (D10, D9): the subscription is read again, and
// the request is signed with the secret and addressed to the URL as they are now. The claim may have
// happened a moment (or, on a loaded worker, a while) earlier; a rotate-secret, pause, delete or URL change
// committed since then must apply to this request. The event's payload is opened here too (it is sealed at
// rest, D13). What cannot be sent at all (a secret or a payload this process cannot unseal, an unusable URL)
// becomes a failed attempt, so that retries, exhaustion and dead_letter apply instead of the delivery being
// re-claimed forever.
import type { KeyObject } from 'node:crypto';
import type { Queryable } from '../../db/pool.ts';
import { newDeliveryHeaderId } from '../../platform/ids.ts';
import type { SecretBox } from '../../platform/secrets.ts';
import { openPayload } from '../sealed-payload.ts';
import type { ClaimedDelivery } from './repository.ts';
import * as repo from './repository.ts';
import type { SendResult } from './send.ts';
import { signingKey, webhookHeaders } from './sign.ts';

/** failure_reason of an attempt whose request could not be signed. Names no secret material. */
export const UNSIGNABLE_REASON =
  'could not sign the request: the signing secret is unreadable (check SECRETS_ENCRYPTION_KEY)';
/** failure_reason of an attempt whose event payload could not be opened. Names nothing of the payload. */
export const UNREADABLE_PAYLOAD_REASON =
  'could not send the request: the event payload is unreadable (check SECRETS_ENCRYPTION_KEY)';
/** failure_reason of an attempt whose stored endpoint_url cannot be requested. */
export const UNUSABLE_URL_REASON = 'could not send the request: endpoint_url is not a valid https URL';

export type PreparedDelivery =
  /** The subscription is no longer active (or no longer exists): give the delivery up, send nothing. */
  | { kind: 'inactive'; delivery: ClaimedDelivery }
  /** Ready to send: the payload opened, signed with the current secret, for the current URL. */
  | { kind: 'send'; delivery: ClaimedDelivery; headers: Record<string, string> }
  /** Nothing can be sent: record `result` as a failed attempt, with no request headers (no request made). */
  | { kind: 'unsendable'; delivery: ClaimedDelivery; result: Extract<SendResult, { kind: 'error' }> };

/**
 * Re-reads the claimed deliveries' subscriptions (one SELECT for them all) and prepares each request, in
 * input order. Each returned `delivery` is the claimed one with its subscription's current status,
 * endpoint_url, sealed secret and max_retries, so the outcome is also decided with the current
 * max_retries; a `send` one carries its event's payload opened, the body to send. A secret is unsealed,
 * and its signing key derived, once per subscription; a payload is opened once per event. Throws only on
 * a storage error (the leases then expire, or are released, and the deliveries are claimed again:
 * at-least-once).
 */
export async function prepareDeliveries(
  db: Queryable,
  secretBox: Pick<SecretBox, 'decrypt'>,
  claimed: readonly ClaimedDelivery[],
  nowMs: number = Date.now(),
): Promise<PreparedDelivery[]> {
  if (claimed.length === 0) return [];
  const current = new Map(
    (await repo.readSubscriptionsForSend(db, [...new Set(claimed.map((row) => row.subscription_id))])).map(
      (row) => [row.id, row],
    ),
  );
  const keys = new Map<string, KeyObject | undefined>();
  const unseal = (sealed: string): KeyObject | undefined => {
    if (!keys.has(sealed)) {
      try {
        keys.set(sealed, signingKey(secretBox.decrypt(sealed)));
      } catch {
        // Another SECRETS_ENCRYPTION_KEY or a damaged row. The error itself is dropped: nothing derived
        // from the sealed value reaches the attempt or the logs (D13).
        keys.set(sealed, undefined);
      }
    }
    return keys.get(sealed);
  };
  const payloads = new Map<number, string | undefined>();
  const open = (row: ClaimedDelivery): string | undefined => {
    if (!payloads.has(row.event_id)) {
      try {
        payloads.set(row.event_id, openPayload(secretBox, row.payload));
      } catch {
        // As for a secret: nothing of the stored value reaches the attempt or the logs.
        payloads.set(row.event_id, undefined);
      }
    }
    return payloads.get(row.event_id);
  };
  const timestamp = Math.floor(nowMs / 1000);

  return claimed.map((row): PreparedDelivery => {
    const subscription = current.get(row.subscription_id);
    const delivery: ClaimedDelivery = subscription
      ? {
          ...row,
          subscription_status: subscription.status,
          endpoint_url: subscription.endpoint_url,
          signing_secret_sealed: subscription.signing_secret_sealed,
          max_retries: subscription.max_retries,
        }
      : { ...row, subscription_status: 'deleted' };
    if (delivery.subscription_status !== 'active') return { kind: 'inactive', delivery };
    const unsendable = (reason: string): PreparedDelivery => ({
      kind: 'unsendable',
      delivery,
      result: { kind: 'error', latencyMs: 0, reason },
    });
    if (!isHttpsUrl(delivery.endpoint_url)) return unsendable(UNUSABLE_URL_REASON);
    const key = unseal(delivery.signing_secret_sealed);
    if (key === undefined) return unsendable(UNSIGNABLE_REASON);
    const payload = open(delivery);
    if (payload === undefined) return unsendable(UNREADABLE_PAYLOAD_REASON);
    const headers = webhookHeaders({
      key,
      eventPublicId: delivery.event_public_id,
      body: payload,
      timestamp,
      deliveryId: newDeliveryHeaderId(),
    });
    return { kind: 'send', delivery: { ...delivery, payload }, headers };
  });
}

function isHttpsUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return parsed.protocol === 'https:' && parsed.hostname !== '';
}
