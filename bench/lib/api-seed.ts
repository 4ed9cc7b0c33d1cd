// The api scenario's history, written with set-based SQL (INSERT ... SELECT ... FROM generate_series):
// `events` webhook events over the last 30 days, 80 % of them of one organisation and 5 % of each of four
// others, interleaved by id; every event has exactly 3 attempts, so attempts = 3 × events:
//   - 93 % delivered:    3 deliveries (subscriptions 1-3), 1 success attempt each
//   -  5 % dead_letter:  1 delivery (subscription 4, max_retries 2) exhausted after 3 failed attempts
//   -  2 % failed:       1 delivery (subscription 4) pending: 2 failed attempts and 1 pending_retry
// Rows look like the engine's (sealed payload envelope, signed request headers, failure reasons). Then VACUUM
// ANALYZE, so that the planner and index-only scans see what a long-running database would show.
import type { Pool } from '../../src/db/pool.ts';
import { createOrganisation, createSubscription, secretBoxFor } from './seed.ts';

export interface ApiSeed {
  organisationId: string;
  otherOrganisationIds: string[];
  /** Subscription 1 of the main organisation (the GET benchmark). */
  subscriptionId: string;
  /** Ids of some events of the main organisation (attempt search filters). */
  sampleEventIds: number[];
  counts: { events: number; deliveries: number; attempts: number; deadLetterMain: number };
  sizes: Record<string, string>;
}

const CODES = ['transfer.completed', 'transfer.created', 'payout.completed', 'deposit.received'];
const SUBSCRIPTIONS_PER_ORG = 4;
const CHUNK = 50_000;

/**
 * The events of ids $1..$2 ($3: milliseconds between two events), one row per generate_series value `g`:
 * public id, organisation slot, status draw `h`, event type and time.
 */
const GENERATED_EVENTS_SQL = `
  SELECT g,
         'evt_' || lpad(upper(to_hex(g)), 26, '0') AS public_id,
         CASE WHEN g % 20 < 16 THEN 0 ELSE g % 20 - 15 END AS org_index,
         mod(abs(hashint4(g::int)::bigint), 100) AS h,
         (ARRAY[${CODES.map((code) => `'${code}'`).join(',')}])[1 + g % ${CODES.length}] AS code,
         now() - interval '30 days' + (g * $3::float8) * interval '1 millisecond' AS ts
  FROM generate_series($1::bigint, $2::bigint) AS g`;

/** The envelope of a generated event `s`, as publishEvent builds it (D10). */
const ENVELOPE_SQL = `
  '{"id":"' || s.public_id || '","type":"' || s.code || '","created_at":"' ||
    to_char(s.ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') ||
    '","data":{"object":{"id":"tr_' || s.g || '","status":"completed","source_amount":"1250.00",' ||
    '"source_currency":"EUR","destination_amount":"1361.87","destination_currency":"USD",' ||
    '"rate":"1.089496","fee":"3.50","beneficiary_id":"ben_01JBENCHMARKBENEFICIARY0001",' ||
    '"reference":"Invoice ' || s.g || '"},"previous_status":"processing"}}'`;

/** An event id (= generate_series value) belongs to the main organisation when id % 20 < 16. */
const isMain = (id: number) => id % 20 < 16;

export async function seedApiHistory(
  pool: Pool,
  encryptionKey: string,
  events: number,
  log: (message: string) => void,
  signal?: AbortSignal,
): Promise<ApiSeed> {
  const orgIds = [await createOrganisation(pool, 'Bench API main')];
  for (let index = 1; index <= 4; index++)
    orgIds.push(await createOrganisation(pool, `Bench API other ${index}`));
  const slots: Array<{ orgIndex: number; organisationId: string; slot: number; subscriptionId: string }> = [];
  for (const [orgIndex, organisationId] of orgIds.entries()) {
    for (let slot = 1; slot <= SUBSCRIPTIONS_PER_ORG; slot++) {
      const subscription = await createSubscription(pool, encryptionKey, {
        organisationId,
        endpointUrl: `https://hooks-${orgIndex}.example.com/webhooks/${slot}`,
        eventTypeCodes: CODES,
        maxRetries: slot === SUBSCRIPTIONS_PER_ORG ? 2 : 8,
      });
      slots.push({ orgIndex, organisationId, slot, subscriptionId: subscription.id });
    }
  }

  const client = await pool.connect();
  try {
    await client.query('SET synchronous_commit = off');
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query("SET work_mem = '64MB'");
    await client.query(
      'CREATE TEMP TABLE bench_slots (org_index int, organisation_id uuid, slot int, subscription_id uuid)',
    );
    for (const slot of slots) {
      await client.query('INSERT INTO bench_slots VALUES ($1, $2, $3, $4)', [
        slot.orgIndex,
        slot.organisationId,
        slot.slot,
        slot.subscriptionId,
      ]);
    }
    // created_at: evenly over the 30 days before now, in id order.
    const spanMs = 30 * 24 * 3600 * 1000;
    const stepMs = spanMs / events;
    for (let low = 1; low <= events; low += CHUNK) {
      signal?.throwIfAborted();
      const high = Math.min(events, low + CHUNK - 1);
      await client.query('BEGIN');
      // The envelopes are made by SQL and sealed here, as publishEvent stores them (D13); both statements
      // run in one transaction, so now() and the generated rows are the same in each.
      const envelopes = await client.query<{ g: string; envelope: string }>(
        `SELECT s.g, ${ENVELOPE_SQL} AS envelope FROM (${GENERATED_EVENTS_SQL}) s ORDER BY s.g`,
        [low, high, stepMs],
      );
      const box = secretBoxFor(encryptionKey);
      await client.query(
        `INSERT INTO webhook_events
           (id, public_id, organisation_id, event_type_code, status, payload, source_object_type, source_object_id,
            idempotency_key, current_round, created_at, updated_at)
         OVERRIDING SYSTEM VALUE
         SELECT s.g, s.public_id, o.organisation_id, s.code,
                CASE WHEN s.h < 93 THEN 'delivered' WHEN s.h < 98 THEN 'dead_letter' ELSE 'failed' END,
                p.sealed, 'transfer', 'tr_' || s.g, 'tr_' || s.g || ':' || s.code, 1, s.ts, s.ts + interval '2 seconds'
         FROM (${GENERATED_EVENTS_SQL}) s
         JOIN unnest($4::bigint[], $5::text[]) AS p(g, sealed) ON p.g = s.g
         JOIN bench_slots o ON o.org_index = s.org_index AND o.slot = 1`,
        [
          low,
          high,
          stepMs,
          envelopes.rows.map((row) => row.g),
          envelopes.rows.map((row) => box.encrypt(row.envelope)),
        ],
      );
      await client.query(
        `INSERT INTO webhook_deliveries
           (event_id, subscription_id, organisation_id, round, state, attempts_in_round, next_attempt_at,
            created_at, updated_at)
         SELECT e.id, s.subscription_id, e.organisation_id, 1,
                CASE e.status WHEN 'delivered' THEN 'succeeded' WHEN 'dead_letter' THEN 'exhausted' ELSE 'pending' END,
                CASE WHEN e.status = 'delivered' THEN 1 ELSE 3 END,
                CASE WHEN e.status = 'failed' THEN now() + interval '2 hours' ELSE e.created_at END,
                e.created_at, e.updated_at
         FROM webhook_events e
         JOIN bench_slots s ON s.organisation_id = e.organisation_id
           AND ((e.status = 'delivered' AND s.slot <= 3) OR (e.status <> 'delivered' AND s.slot = 4))
         WHERE e.id BETWEEN $1 AND $2`,
        [low, high],
      );
      await client.query(
        `INSERT INTO webhook_delivery_attempts
           (delivery_id, event_id, subscription_id, organisation_id, attempt_number, status, http_status_code,
            latency_ms, request_headers, response_body_snippet, failure_reason, next_retry_at, created_at, updated_at)
         SELECT d.id, d.event_id, d.subscription_id, d.organisation_id, n,
                CASE WHEN d.state = 'succeeded' THEN 'success'
                     WHEN d.state = 'pending' AND n = d.attempts_in_round THEN 'pending_retry'
                     ELSE 'failed' END,
                CASE WHEN d.state = 'succeeded' THEN 200 ELSE 500 END,
                20 + (d.id * 7 + n) % 180,
                jsonb_build_object(
                  'Content-Type', 'application/json',
                  'User-Agent', 'payment-service-webhooks/1.0',
                  'webhook-id', e.public_id,
                  'webhook-timestamp', floor(extract(epoch FROM e.created_at))::bigint::text,
                  'webhook-signature', 'v1,' || encode(decode(md5(e.public_id || n), 'hex') || decode(md5(n || e.public_id), 'hex'), 'base64'),
                  'X-Webhook-Delivery-Id', 'dlv_' || lpad(upper(to_hex(d.id * 16 + n)), 26, '0')),
                CASE WHEN d.state = 'succeeded' THEN 'ok' ELSE '{"error":"internal server error"}' END,
                CASE WHEN d.state = 'succeeded' THEN NULL ELSE 'endpoint answered HTTP 500' END,
                CASE WHEN d.state = 'pending' AND n = d.attempts_in_round THEN d.next_attempt_at END,
                e.created_at + (n - 1) * interval '5 minutes',
                e.created_at + (n - 1) * interval '5 minutes'
         FROM webhook_deliveries d
         JOIN webhook_events e ON e.id = d.event_id
         CROSS JOIN LATERAL generate_series(1, d.attempts_in_round) AS n
         WHERE d.event_id BETWEEN $1 AND $2`,
        [low, high],
      );
      await client.query('COMMIT');
      // Fresh statistics, so that the next chunk's joins use the indexes rather than plans for empty tables.
      await client.query('ANALYZE webhook_events, webhook_deliveries');
      log(`    ${high.toLocaleString('en-US')} of ${events.toLocaleString('en-US')} events seeded`);
    }
    await client.query(
      "SELECT setval(pg_get_serial_sequence('webhook_events', 'id'), (SELECT max(id) FROM webhook_events))",
    );
    log('    VACUUM ANALYZE');
    for (const table of [
      'webhook_events',
      'webhook_deliveries',
      'webhook_delivery_attempts',
      'webhook_subscriptions',
    ])
      await client.query(`VACUUM (ANALYZE) ${table}`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }

  const counts = await pool.query<{ events: number; deliveries: number; attempts: number; dead: number }>(
    `SELECT (SELECT count(*) FROM webhook_events)::int AS events,
            (SELECT count(*) FROM webhook_deliveries)::int AS deliveries,
            (SELECT count(*) FROM webhook_delivery_attempts)::int AS attempts,
            (SELECT count(*) FROM webhook_events WHERE organisation_id = $1 AND status = 'dead_letter')::int AS dead`,
    [orgIds[0]],
  );
  const sizes = await pool.query<{ name: string; size: string }>(
    `SELECT relname AS name, pg_size_pretty(pg_total_relation_size(oid)) AS size FROM pg_class
     WHERE relname IN ('webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts')`,
  );
  const sampleEventIds: number[] = [];
  while (sampleEventIds.length < Math.min(1_000, Math.floor(events * 0.8))) {
    const id = 1 + Math.floor(Math.random() * events);
    if (isMain(id)) sampleEventIds.push(id);
  }
  const row = counts.rows[0]!;
  return {
    organisationId: orgIds[0]!,
    otherOrganisationIds: orgIds.slice(1),
    subscriptionId: slots.find((slot) => slot.orgIndex === 0 && slot.slot === 1)!.subscriptionId,
    sampleEventIds,
    counts: {
      events: row.events,
      deliveries: row.deliveries,
      attempts: row.attempts,
      deadLetterMain: row.dead,
    },
    sizes: Object.fromEntries(sizes.rows.map((size) => [size.name, size.size])),
  };
}
