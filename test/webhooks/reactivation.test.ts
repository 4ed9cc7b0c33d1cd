// auto_disabled -> active (D9): one signed webhook.ping to the endpoint; only a 2xx activates and resets
// consecutive_failures, anything else is 400 with the probe's outcome. Real HTTPS receiver on 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import {
  answer,
  type HttpsReceiver,
  startHttpsReceiver,
  testCertificate,
} from '../helpers/https-receiver.ts';
import {
  type Client,
  client,
  createSubscription,
  SUBSCRIPTIONS,
  type SubscriptionJson,
  setSubscriptionState,
} from './fixtures.ts';

describe('re-activating an auto_disabled subscription (D9 probe)', () => {
  let t: TestApp;
  let receiver: HttpsReceiver;
  let api: Client;
  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_CA_FILE: testCertificate().certPath } });
    receiver = await startHttpsReceiver();
    api = client(t, await t.tenant());
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const disabledSubscription = async () => {
    const created = await createSubscription(api, {
      endpoint_url: `${receiver.origin}/hook/${Math.random()}`,
    });
    await setSubscriptionState(t, created.id, 'auto_disabled', 50);
    return created;
  };

  it('activates on a 2xx answer to a signed webhook.ping and resets consecutive_failures', async () => {
    receiver.setHandler(answer(204));
    const created = await disabledSubscription();
    const before = receiver.requests.length;
    const response = await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as SubscriptionJson;
    assert.equal(body.status, 'active');
    assert.equal(body.consecutive_failures, 0);

    assert.equal(receiver.requests.length, before + 1);
    const ping = receiver.requests.at(-1)!;
    assert.equal(ping.method, 'POST');
    const verified = new Webhook(created.signing_secret!).verify(ping.body, {
      'webhook-id': String(ping.headers['webhook-id']),
      'webhook-timestamp': String(ping.headers['webhook-timestamp']),
      'webhook-signature': String(ping.headers['webhook-signature']),
    }) as { type: string; data: { subscription_id: string } };
    assert.equal(verified.type, 'webhook.ping');
    assert.equal(verified.data.subscription_id, created.id);
  });

  it('stays auto_disabled with 400 naming the outcome on a non-2xx answer', async () => {
    receiver.setHandler(answer(500, 'down'));
    const created = await disabledSubscription();
    const response = await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' });
    assert.equal(response.statusCode, 400);
    const body = errorBody(response.body);
    assert.equal(body.code, 'BAD_REQUEST');
    assert.match(body.error, /HTTP 500/);
    const read = (await api.get(`${SUBSCRIPTIONS}/${created.id}`)).json() as SubscriptionJson;
    assert.equal(read.status, 'auto_disabled');
    assert.equal(read.consecutive_failures, 50);
  });

  it('treats a redirect as unhealthy', async () => {
    receiver.setHandler(answer(302, '', { location: 'https://elsewhere.example.com/' }));
    const created = await disabledSubscription();
    const response = await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' });
    assert.equal(response.statusCode, 400);
    assert.match(errorBody(response.body).error, /HTTP 302/);
  });

  it('stays auto_disabled with 400 when the endpoint cannot be reached', async () => {
    const created = await createSubscription(api, { endpoint_url: 'https://127.0.0.1:9/closed' });
    await setSubscriptionState(t, created.id, 'auto_disabled', 50);
    const response = await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' });
    assert.equal(response.statusCode, 400);
    assert.match(errorBody(response.body).error, /could not be reached/);
  });

  it('probes the new endpoint_url when the same PATCH changes it', async () => {
    receiver.setHandler(answer(200));
    const created = await createSubscription(api, { endpoint_url: 'https://127.0.0.1:9/old' });
    await setSubscriptionState(t, created.id, 'auto_disabled', 50);
    const endpoint = `${receiver.origin}/moved`;
    const response = await api.patch(`${SUBSCRIPTIONS}/${created.id}`, {
      status: 'active',
      endpoint_url: endpoint,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(receiver.requests.at(-1)!.path, '/moved');
    assert.equal((response.json() as SubscriptionJson).endpoint_url, endpoint);
  });

  it('sends no probe for other transitions', async () => {
    const created = await createSubscription(api, { endpoint_url: `${receiver.origin}/none` });
    const before = receiver.requests.length;
    assert.equal((await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' })).statusCode, 200);
    assert.equal((await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'paused' })).statusCode, 200);
    assert.equal((await api.patch(`${SUBSCRIPTIONS}/${created.id}`, { status: 'active' })).statusCode, 200);
    assert.equal(receiver.requests.length, before);
  });
});
