// Identifiers (D3).
import { randomFillSync } from 'node:crypto';
import { monotonicFactory, ulid as ulidOf } from 'ulid';
import { v7 as uuidv7 } from 'uuid';

/**
 * The randomness of ULIDs: cryptographic bytes drawn from a pool refilled 4 KiB at a time. The library's
 * own default asks the system for one byte per character (16 calls per id), which showed as 6 % of a busy
 * delivery worker's CPU. A byte / 256 gives each of the 32 base32 characters exactly 8 values: no bias.
 */
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;
function pooledRandom(): number {
  if (randomAt === randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  return randomPool[randomAt++]! / 256;
}

const ulid = (): string => ulidOf(undefined, pooledRandom);

/**
 * Resource ids increase within a process even inside one millisecond, so that sorting by id follows the
 * order things were made in (the entries of one ledger transaction, say).
 */
const monotonicUlid = monotonicFactory(pooledRandom);

/** Subscription ids and other resource UUIDs: version 7, time-ordered. */
export const newUuid = (): string => uuidv7();

/** `evt_` + ULID: the public id of a webhook event. */
export const newEventPublicId = (): string => `evt_${ulid()}`;

/** `dlv_` + ULID: X-Webhook-Delivery-Id, new for every attempt. */
export const newDeliveryHeaderId = (): string => `dlv_${ulid()}`;

/**
 * `<prefix>_<ULID>`: ids of the payment areas' resources (D14), e.g. `cor_`, `bnk_`, `scr_`, `btx_`.
 * Time-ordered, so sorting by id sorts by creation.
 */
export const newPublicId = (prefix: string): string => `${prefix}_${monotonicUlid()}`;

/** A `<prefix>_<ULID>` id as a path parameter: anything else cannot name a resource (404). */
export const isPublicId = (prefix: string, value: string): boolean =>
  value.length === prefix.length + 27 &&
  value.startsWith(`${prefix}_`) &&
  /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value.slice(prefix.length + 1));

/** `err_` + ULID: identifies one failed request in the logs (D5). */
export const newErrorId = (): string => `err_${ulid()}`;

/**
 * A UUID as PostgreSQL's uuid type reads it: ajv-formats' `uuid` also admits a `urn:uuid:` prefix, which
 * PostgreSQL refuses, so request schemas take this pattern (JSON Schema patterns carry no flags) instead.
 */
export const UUID_SCHEMA_PATTERN =
  '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID_PATTERN = new RegExp(UUID_SCHEMA_PATTERN);
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

/** Integer ids in paths (events, attempts): positive, and within PostgreSQL bigint. */
export function parseIntegerId(value: string): bigint | undefined {
  if (!/^[1-9]\d{0,18}$/.test(value)) return undefined;
  const id = BigInt(value);
  return id <= 9_223_372_036_854_775_807n ? id : undefined;
}
