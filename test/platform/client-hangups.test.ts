// Requests whose client hangs up before its answer has gone out, over real sockets: the work is done, so
// everything recorded about a request is recorded all the same: its access line, its count in /metrics,
// its idempotency record (D14).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.ts';
import { waitUntil } from '../helpers/wait.ts';

const TOP_UP = '/api/v1/sandbox/balances/top-up';

/** Writes one HTTP/1.1 request on a socket of its own and returns the socket. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body: string) {
  const socket = net.connect(port, '127.0.0.1');
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  return socket;
}

describe('a client that hangs up before its answer', () => {
  let t: TestApp;
  let tenant: Tenant;
  let port: number;
  before(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(() => t.close());

  const accessLines = (requestId: string) =>
    t.logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.request_id === requestId && line.status !== undefined && 'ms' in line);
  const topUps = async () =>
    (await t.deps.metrics.httpRequests.get()).values.find(
      (value) => value.labels.route === TOP_UP && value.labels.status === '200',
    )?.value ?? 0;

  it('still logs the request, counts it and stores its idempotent response', async () => {
    const requestId = `hangup-${Date.now()}`;
    const key = `hangup-key-${Date.now()}`;
    const body = JSON.stringify({ currency: 'USD', amount: '7.00' });
    const countedBefore = await topUps();
    // The top-up waits for this lock, so the client is certainly gone before the answer is ready.
    const locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE');
      const socket = send(
        port,
        'POST',
        TOP_UP,
        {
          ...tenant.auth,
          'content-type': 'application/json',
          'idempotency-key': key,
          'x-request-id': requestId,
        },
        body,
      );
      await waitUntil(
        async () =>
          (
            await t.db.pool.query(
              "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rowCount === 1,
        'the top-up waits for the lock',
      );
      socket.destroy();
      await waitUntil(
        () =>
          new Promise<boolean>((resolve) =>
            t.app.server.getConnections((_error, count) => resolve(count === 0)),
          ),
        'the server has seen the connection close',
      );
      await locker.query('COMMIT');
    } finally {
      await locker.end();
    }

    const [line] = await waitUntil(() => {
      const lines = accessLines(requestId);
      return lines.length > 0 && lines;
    }, 'the access line of the request');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(accessLines(requestId).length, 1, 'one access line');
    assert.equal(line!.method, 'POST');
    assert.equal(line!.url, TOP_UP);
    assert.equal(line!.status, 200);
    assert.equal(line!.client_closed, true);
    assert.equal(await topUps(), countedBefore + 1);

    const stored = await t.db.pool.query<{ state: string; response_status: number }>(
      'SELECT state, response_status FROM idempotency_keys WHERE organisation_id = $1 AND key = $2',
      [tenant.organisationId, key],
    );
    assert.deepEqual(stored.rows, [{ state: 'completed', response_status: 200 }]);
    const retried = await t.app.inject({
      method: 'POST',
      url: TOP_UP,
      headers: { ...tenant.auth, 'content-type': 'application/json', 'idempotency-key': key },
      payload: body,
    });
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], 'true');
    assert.equal(
      (JSON.parse(retried.body) as { available: string }).available,
      '1000007.00',
      'topped up once',
    );
  });

  it('logs a completed request once, without client_closed', async () => {
    const requestId = `complete-${Date.now()}`;
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
      headers: { 'x-request-id': requestId },
    });
    assert.equal(response.status, 200);
    await response.text();
    await waitUntil(() => accessLines(requestId).length > 0, 'the access line');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = accessLines(requestId);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'request completed');
    assert.equal(lines[0]!.client_closed, undefined);
  });
});
