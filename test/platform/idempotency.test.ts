// Idempotency keys (D14) on real PostgreSQL through the real app: replay, reuse, in-flight conflicts
// (within one API process and across two), what is not stored, expiry and purge, and the fencing that
// keeps an operation from running twice even when a request outlives its lease.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from '../../src/admin/service.ts';
import { withTransaction } from '../../src/db/pool.ts';
import type { App } from '../../src/platform/deps.ts';
import { purgeExpiredKeys } from '../../src/platform/idempotency.ts';
import { bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { errorBody, requestToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';

const PROBE = '/api/v1/test/idempotent-probe';
const TOP_UP = '/api/v1/sandbox/balances/top-up';

/** Notes whose request waits for release(note) before its transaction commits. */
const gates = new Map<
  string,
  { opened: Promise<void>; open: () => void; entered: () => void; reached: Promise<void> }
>();
function gate(note: string) {
  let open!: () => void;
  let entered!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const entry = { opened, open, entered, reached };
  gates.set(note, entry);
  return entry;
}

/** A payment-style POST: inserts a row in one transaction; `fail` makes it throw an unexpected error. */
function probeRoutes(db: TestDatabase) {
  return (app: App) => {
    app.post(
      PROBE,
      {
        config: { scope: 'payments:write', idempotent: true },
        schema: {
          body: {
            type: 'object',
            properties: { note: { type: 'string', minLength: 1 }, fail: { type: 'boolean' } },
            required: ['note'],
            additionalProperties: false,
          },
        },
      },
      async (request, reply) => {
        const body = request.body as { note: string; fail?: boolean };
        if (body.fail) throw new Error('probe failure');
        const row = await withTransaction(db.pool, async (tx) => {
          const inserted = await tx.query<{ id: number }>(
            'INSERT INTO idem_probe (note) VALUES ($1) RETURNING id',
            [body.note],
          );
          const waiting = gates.get(body.note);
          if (waiting) {
            waiting.entered();
            await waiting.opened;
          }
          return inserted.rows[0]!;
        });
        return reply.code(201).send({ id: row.id, note: body.note });
      },
    );
  };
}

describe('idempotency keys (D14)', () => {
  let db: TestDatabase;
  let t: TestApp;
  let second: TestApp;
  let tenant: Tenant;
  let api: ApiClient;
  before(async () => {
    db = await createTestDatabase();
    await db.pool.query('CREATE TABLE idem_probe (id serial PRIMARY KEY, note text NOT NULL)');
    t = await startTestApp({ db, routes: probeRoutes(db) });
    second = await startTestApp({ db, routes: probeRoutes(db) });
    tenant = await t.tenant();
    api = apiClient(t, tenant);
  });
  after(async () => {
    await second.close();
    await t.close();
    await db.drop();
  });

  const runs = async (note: string) =>
    (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM idem_probe WHERE note = $1', [note]))
      .rows[0]!.n;
  const key = (label: string) => `${label}-${Math.random().toString(36).slice(2)}`;

  it('replays the first status and body with Idempotent-Replayed: true and runs the operation once', async () => {
    const k = key('replay');
    const first = await api.post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // An equal JSON body with its keys in another order is the same request.
    const again = await t.app.inject({
      method: 'POST',
      url: PROBE,
      headers: { ...tenant.auth, 'content-type': 'application/json', 'idempotency-key': k },
      payload: `{ "note" : ${JSON.stringify(k)} }`,
    });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    assert.equal(await runs(k), 1);
  });

  it('runs every request without the header', async () => {
    const note = key('plain');
    assert.equal((await api.post(PROBE, { note })).statusCode, 201);
    assert.equal((await api.post(PROBE, { note })).statusCode, 201);
    assert.equal(await runs(note), 2);
  });

  it('refuses the same key with another body or another path: 422 IDEMPOTENCY_KEY_REUSED naming the header', async () => {
    const k = key('reuse');
    assert.equal((await api.post(PROBE, { note: k }, { 'idempotency-key': k })).statusCode, 201);
    const otherBody = await api.post(PROBE, { note: `${k}-other` }, { 'idempotency-key': k });
    assert.equal(otherBody.statusCode, 422);
    const body = errorBody(otherBody.body);
    assert.equal(body.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(body.field, 'Idempotency-Key');
    const otherPath = await api.post(TOP_UP, { currency: 'USD', amount: '1.00' }, { 'idempotency-key': k });
    assert.equal(otherPath.statusCode, 422);
    assert.equal(errorBody(otherPath.body).code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await runs(`${k}-other`), 0);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_USE to a repeat while the first runs, in this process and another', async () => {
    const k = key('inflight');
    const held = gate(k);
    const firstResponse = api.post(PROBE, { note: k }, { 'idempotency-key': k });
    await held.reached;
    const here = await api.post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(here.statusCode, 409);
    assert.equal(errorBody(here.body).code, 'IDEMPOTENCY_KEY_IN_USE');
    const elsewhere = await apiClient(second, tenant).post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(elsewhere.statusCode, 409);
    held.open();
    assert.equal((await firstResponse).statusCode, 201);
    gates.delete(k);
    const replay = await apiClient(second, tenant).post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(await runs(k), 1);
  });

  it('runs exactly one of many concurrent requests with one key, across two API processes', async () => {
    const k = key('race');
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        apiClient(index % 2 === 0 ? t : second, tenant).post(PROBE, { note: k }, { 'idempotency-key': k }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(await runs(k), 1);
    assert.equal(statuses.filter((status) => status === 201).length >= 1, true);
    assert.deepEqual(
      statuses.filter((status) => status !== 201 && status !== 409),
      [],
    );
    const fresh = responses.filter(
      (response) => response.statusCode === 201 && !response.headers['idempotent-replayed'],
    );
    assert.equal(fresh.length, 1, 'one response ran the operation; the others were replays or 409');
  });

  it('stores nothing for a body that fails validation: the key may then be used', async () => {
    const k = key('invalid');
    const invalid = await api.post(PROBE, { note: '' }, { 'idempotency-key': k });
    assert.equal(invalid.statusCode, 422);
    const valid = await api.post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(valid.statusCode, 201);
    assert.equal(valid.headers['idempotent-replayed'], undefined);
  });

  it('stores nothing for an id in the body that the organisation does not know (404 naming it): the client corrects it under the same key', async () => {
    const quoteKey = key('corridor');
    const unknownCorridor = await api.post(
      '/api/v1/transfers/quotes',
      { corridor_id: 'cor_00000000000000000000000000', source_amount: '10.00' },
      { 'idempotency-key': quoteKey },
    );
    assert.equal(unknownCorridor.statusCode, 404, unknownCorridor.body);
    assert.equal(errorBody(unknownCorridor.body).field, 'corridor_id');
    const quote = await api.post(
      '/api/v1/transfers/quotes',
      { corridor_id: 'cor_0000SANDBX0000000000000001', source_amount: '10.00' },
      { 'idempotency-key': quoteKey },
    );
    assert.equal(quote.statusCode, 201, quote.body);
    const beneficiary = await createBeneficiary(api, bodyOf('DE'));
    const confirmKey = key('beneficiary');
    const confirm = (beneficiaryId: string) =>
      api.post(
        `/api/v1/transfers/quotes/${(quote.json() as { id: string }).id}/confirm`,
        { beneficiary_id: beneficiaryId, funding_method: 'balance' },
        { 'idempotency-key': confirmKey },
      );
    const unknownBeneficiary = await confirm('ben_00000000000000000000000000');
    assert.equal(unknownBeneficiary.statusCode, 404, unknownBeneficiary.body);
    assert.equal(errorBody(unknownBeneficiary.body).field, 'beneficiary_id');
    const confirmed = await confirm(beneficiary.id);
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    assert.equal(confirmed.headers['idempotent-replayed'], undefined);
    // The path's own id unknown is an answer like any other: kept and replayed.
    const cancelKey = key('path');
    const cancel = () =>
      api.post('/api/v1/transfers/trf_00000000000000000000000000/cancel', undefined, {
        'idempotency-key': cancelKey,
      });
    assert.equal((await cancel()).statusCode, 404);
    const replayed = await cancel();
    assert.deepEqual([replayed.statusCode, replayed.headers['idempotent-replayed']], [404, 'true']);
  });

  it('stores nothing for a 5xx: the same key may be retried', async () => {
    const k = key('fivexx');
    const failed = await api.post(PROBE, { note: k, fail: true }, { 'idempotency-key': k });
    assert.equal(failed.statusCode, 500);
    const keys = await db.pool.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [k]);
    assert.equal(keys.rowCount, 0);
    // The retry must send the same request; a body that differs would be a new request.
    const retried = await api.post(PROBE, { note: k, fail: true }, { 'idempotency-key': k });
    assert.equal(retried.statusCode, 500);
  });

  it('stores nothing when the permission check fails', async () => {
    const k = key('scope');
    const readOnly = await createClient(t.deps, {
      organisation_id: tenant.organisationId,
      scopes: ['payments:read'],
    });
    const token = await requestToken(t.app, readOnly.client_id, readOnly.client_secret!);
    const refused = await t.app.inject({
      method: 'POST',
      url: PROBE,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': k },
      payload: JSON.stringify({ note: `${k}-x` }),
    });
    assert.equal(refused.statusCode, 403);
    const allowed = await api.post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(allowed.statusCode, 201);
    assert.equal(allowed.headers['idempotent-replayed'], undefined);
  });

  it('validates the header: 1 to 255 printable ASCII characters', async () => {
    for (const bad of ['x'.repeat(256), 'caf\u00e9']) {
      const response = await api.post(PROBE, { note: 'header' }, { 'idempotency-key': bad });
      assert.equal(response.statusCode, 422);
      const body = errorBody(response.body);
      assert.equal(body.code, 'VALIDATION_FAILED');
      assert.equal(body.field, 'Idempotency-Key');
    }
    const longest = 'k'.repeat(255);
    assert.equal((await api.post(PROBE, { note: longest }, { 'idempotency-key': longest })).statusCode, 201);
  });

  it('scopes keys to the organisation', async () => {
    const k = key('scoped');
    const other = apiClient(t, await t.tenant());
    assert.equal((await api.post(PROBE, { note: k }, { 'idempotency-key': k })).statusCode, 201);
    const theirs = await other.post(PROBE, { note: `${k}-theirs` }, { 'idempotency-key': k });
    assert.equal(theirs.statusCode, 201);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
  });

  it('forgets a key after 24 hours, and the purge deletes expired keys', async () => {
    const k = key('expiry');
    assert.equal((await api.post(PROBE, { note: k }, { 'idempotency-key': k })).statusCode, 201);
    const kept = await db.pool.query<{ hours: number }>(
      'SELECT round(EXTRACT(EPOCH FROM expires_at - created_at) / 3600)::int AS hours FROM idempotency_keys WHERE key = $1',
      [k],
    );
    assert.equal(kept.rows[0]!.hours, 24);
    await db.pool.query(
      "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1",
      [k],
    );
    const reused = await api.post(PROBE, { note: `${k}-new` }, { 'idempotency-key': k });
    assert.equal(reused.statusCode, 201, 'an expired key starts over');
    assert.equal(await runs(`${k}-new`), 1);

    await db.pool.query(
      "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1",
      [k],
    );
    assert.equal(await purgeExpiredKeys(db.pool), 1);
    assert.equal((await db.pool.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [k])).rowCount, 0);
  });

  it('lets a retry take over a key whose request died before its operation committed', async () => {
    const k = key('takeover');
    const held = gate(k);
    const first = api.post(PROBE, { note: k }, { 'idempotency-key': k });
    await held.reached;
    // The first request's lease runs out while it still waits (its process stalled).
    await db.pool.query(
      "UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = $1",
      [k],
    );
    gates.delete(k);
    const retry = await apiClient(second, tenant).post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(retry.statusCode, 201, retry.body);
    held.open();
    // The stalled request can no longer commit: its fenced commit fails and its insert rolls back.
    const late = await first;
    assert.equal(late.statusCode, 409);
    assert.equal(errorBody(late.body).code, 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(await runs(k), 1);
    const replay = await api.post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(replay.body, retry.body);
  });

  it('never runs again an operation that committed when its response was lost', async () => {
    const k = key('lost');
    assert.equal((await api.post(PROBE, { note: k }, { 'idempotency-key': k })).statusCode, 201);
    // As if the process died between the operation's commit and storing its response.
    await db.pool.query(
      `UPDATE idempotency_keys SET state = 'running', response_status = NULL, response_body = NULL,
         owner = gen_random_uuid(), locked_until = now() - interval '1 second' WHERE key = $1`,
      [k],
    );
    const retry = await api.post(PROBE, { note: k }, { 'idempotency-key': k });
    assert.equal(retry.statusCode, 409);
    assert.match(errorBody(retry.body).error, /took effect/);
    assert.equal(await runs(k), 1);
  });

  it('replays a sandbox top-up: the balance moves once', async () => {
    const k = key('topup');
    const first = await api.post(TOP_UP, { currency: 'GBP', amount: '10.50' }, { 'idempotency-key': k });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().available, '1000010.50');
    const replay = await api.post(TOP_UP, { currency: 'GBP', amount: '10.50' }, { 'idempotency-key': k });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    const balances = (await api.get('/api/v1/balances')).json() as { currency: string; available: string }[];
    assert.equal(balances.find((balance) => balance.currency === 'GBP')!.available, '1000010.50');
  });
});
