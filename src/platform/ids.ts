// Identifiers (D3).
import { ulid } from 'ulid';
import { v7 as uuidv7 } from 'uuid';

/** Subscription ids and other resource UUIDs: version 7, time-ordered. */
export const newUuid = (): string => uuidv7();

/** `evt_` + ULID: the public id of a webhook event. */
export const newEventPublicId = (): string => `evt_${ulid()}`;

/** `dlv_` + ULID: X-Webhook-Delivery-Id, new for every attempt. */
export const newDeliveryHeaderId = (): string => `dlv_${ulid()}`;

/** `err_` + ULID: identifies one failed request in the logs (D5). */
export const newErrorId = (): string => `err_${ulid()}`;

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

/** Integer ids in paths (events, attempts): positive, and within PostgreSQL bigint. */
export function parseIntegerId(value: string): bigint | undefined {
  if (!/^[1-9]\d{0,18}$/.test(value)) return undefined;
  const id = BigInt(value);
  return id <= 9_223_372_036_854_775_807n ? id : undefined;
}
