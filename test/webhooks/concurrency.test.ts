// Concurrent requests on real PostgreSQL (D9): never more than 10 subscriptions per organisation, never
// two on one URL, whatever the interleaving.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { client, SUBSCRIPTIONS, uniqueUrl } from './fixtures.ts';

describe('concurrent subscription changes', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const count = async (organisationId: string) =>
    (
      await t.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organisation_id = $1 AND status <> 'deleted'",
        [organisationId],
      )
    ).rows[0]!.n;

  it('30 parallel creates in one organisation give exactly 10 subscriptions; the rest are 400', async () => {
    const api = client(t, await t.tenant());
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        api.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: ['transfer.completed'] }),
      ),
    );
    const created = responses.filter((response) => response.statusCode === 201);
    const refused = responses.filter((response) => response.statusCode !== 201);
    assert.equal(created.length, 10);
    assert.equal(refused.length, 20);
    for (const response of refused) {
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorBody(response.body).code, 'BAD_REQUEST');
    }
    assert.equal(await count(api.tenant.organisationId), 10);
  });

  it('parallel creates on one URL (in several spellings) give exactly one subscription; the rest are 409', async () => {
    const api = client(t, await t.tenant());
    const path = `/same/${Date.now()}`;
    const spellings = [
      `https://hooks.example.com${path}`,
      `HTTPS://HOOKS.EXAMPLE.COM${path}`,
      `https://hooks.example.com:443${path}`,
    ];
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        api.post(SUBSCRIPTIONS, { endpoint_url: spellings[index % 3], event_type_codes: [] }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 1);
    for (const response of responses.filter((r) => r.statusCode !== 201)) {
      assert.equal(response.statusCode, 409);
      const body = errorBody(response.body);
      assert.equal(body.code, 'CONFLICT');
      assert.equal(body.field, undefined);
    }
    assert.equal(await count(api.tenant.organisationId), 1);
  });

  it('parallel PATCHes moving two subscriptions onto one URL leave exactly one on it', async () => {
    const api = client(t, await t.tenant());
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await api.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: [] });
      ids.push((response.json() as { id: string }).id);
    }
    const target = uniqueUrl('target');
    const responses = await Promise.all(
      ids.map((id) => api.patch(`${SUBSCRIPTIONS}/${id}`, { endpoint_url: target })),
    );
    assert.deepEqual(responses.map((response) => response.statusCode).sort(), [200, 409, 409, 409]);
    const onTarget = await t.db.pool.query(
      "SELECT id FROM webhook_subscriptions WHERE endpoint_url = $1 AND status <> 'deleted'",
      [target],
    );
    assert.equal(onTarget.rowCount, 1);
  });

  it('parallel deletes and creates never exceed 10', async () => {
    const api = client(t, await t.tenant());
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await api.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: [] });
      ids.push((response.json() as { id: string }).id);
    }
    const responses = await Promise.all([
      ...ids.slice(0, 3).map((id) => api.del(`${SUBSCRIPTIONS}/${id}`)),
      ...Array.from({ length: 10 }, () =>
        api.post(SUBSCRIPTIONS, { endpoint_url: uniqueUrl(), event_type_codes: [] }),
      ),
    ]);
    assert.ok(responses.slice(0, 3).every((response) => response.statusCode === 200));
    assert.ok((await count(api.tenant.organisationId)) <= 10);
    const createdNow = responses.slice(3).filter((response) => response.statusCode === 201).length;
    assert.equal(await count(api.tenant.organisationId), 7 + createdNow);
  });
});
