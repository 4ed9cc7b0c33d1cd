// Hostile input against every endpoint (issue 7): generated bodies, raw bytes, content types, headers,
// query strings and path ids. Every answer is a non-5xx in the right envelope, nothing hangs, and a
// rejected request leaves no row behind. The machinery is shared with the payment routes' test
// (test/helpers/hostile.ts, test/reliability/payment-hostile-input.test.ts).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { clientErrorHandler } from '../../src/platform/errors.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';
import {
  type Endpoint,
  endpointName,
  generatedBodies,
  type HostileContext,
  malformedAuthorizationHeaders,
  queryStrings,
  rawBytes,
  rowCounter,
} from '../helpers/hostile.ts';
import { HOSTILE_LIMITS, PLATFORM_ENDPOINTS } from './endpoints.ts';

const TABLES = [
  'organisations',
  'api_clients',
  'signing_keys',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
];

describe('hostile input (issue 7)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let context: HostileContext;
  before(async () => {
    t = await startTestApp({ env: HOSTILE_LIMITS });
    tenant = await t.tenant();
    context = {
      app: t.app,
      headersFor: (endpoint: Endpoint) =>
        endpoint.auth === 'bearer'
          ? tenant.auth
          : endpoint.auth === 'admin'
            ? { authorization: `Bearer ${TEST_ADMIN_KEY}` }
            : {},
      rowCounts: await rowCounter(t.db.pool, TABLES),
    };
  });
  after(() => t.close());

  for (const endpoint of PLATFORM_ENDPOINTS) {
    const name = endpointName(endpoint);

    it(`${name}: generated JSON bodies never cause a 5xx, and rejections write nothing`, () =>
      generatedBodies(() => context, endpoint, { runs: 60 }));

    it(`${name}: raw bytes under any content type never cause a 5xx`, () =>
      rawBytes(() => context, endpoint, { runs: 40 }));

    if (endpoint.auth === 'bearer') {
      it(`${name}: any malformed Authorization header is 401 {"message":"Unauthorized"}`, () =>
        malformedAuthorizationHeaders(() => context, endpoint, 25));
    }

    it(`${name}: arbitrary query strings never cause a 5xx`, () =>
      queryStrings(() => context, endpoint, { runs: 20 }));
  }
});

/** Sends raw bytes on one connection and reads until the server closes it (or `settle` ms of quiet). */
async function rawExchange(
  port: number,
  steps: Array<Buffer | string | (() => Promise<void>)>,
  settle = 2_000,
): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // The server may close while a long request is still being written: what it answered is kept.
  socket.on('error', () => {});
  await once(socket, 'connect');
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  for (const step of steps) {
    if (typeof step === 'function') await step();
    else if (!socket.destroyed) socket.write(step);
  }
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, settle))]);
  socket.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

/** The responses in a raw HTTP/1.1 exchange (Content-Length bodies only). */
function responses(text: string): Array<{ status: number; headers: string; body: string }> {
  const found: Array<{ status: number; headers: string; body: string }> = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headerEnd = rest.indexOf('\r\n\r\n');
    const headers = rest.slice(0, headerEnd);
    const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
    const bodyStart = headerEnd + 4;
    found.push({
      status: Number(headers.slice(9, 12)),
      headers,
      body: Buffer.from(rest.slice(bodyStart)).subarray(0, length).toString('utf8'),
    });
    rest = Buffer.from(rest.slice(bodyStart)).subarray(length).toString('utf8');
  }
  return found;
}

describe('findings of a hostile-input pass', () => {
  let t: TestApp;
  let tenant: Tenant;
  let port: number;
  before(async () => {
    // The D10 address rule applies as in production.
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(() => t.close());

  const json = () => ({ ...tenant.auth, 'content-type': 'application/json' });
  const subscriptionCount = async (): Promise<number> =>
    Number((await t.db.pool.query('SELECT count(*) AS n FROM webhook_subscriptions')).rows[0].n);

  describe('errors Node or Fastify would write in their own format use the platform envelope (D5)', () => {
    for (const [label, path] of [
      ['an API path', '/api/v1/webhooks/event-types'],
      ['the token path', '/realms/sandbox/protocol/openid-connect/token'],
    ] as const) {
      it(`answers a URL longer than the header limit with 431 REQUEST_HEADER_FIELDS_TOO_LARGE (${label})`, async () => {
        const response = await fetch(`http://127.0.0.1:${port}${path}?q=${'a'.repeat(20_000)}`, {
          headers: tenant.auth,
        });
        assert.equal(response.status, 431);
        assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
        const body = errorBody(await response.text());
        assert.deepEqual(Object.keys(body), ['error', 'code', 'error_id']);
        assert.equal(body.code, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
        assert.equal(
          body.error,
          'The request line and headers are larger than 16 KiB: shorten the URL or the headers',
        );
      });
    }

    it('answers headers larger than the limit with 431 REQUEST_HEADER_FIELDS_TOO_LARGE, and logs the error_id', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/webhooks/event-types`, {
        headers: { ...tenant.auth, 'x-padding': 'p'.repeat(20_000) },
      });
      assert.equal(response.status, 431);
      const body = errorBody(await response.text());
      assert.equal(body.code, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
      assert.ok(
        t.logs.lines.some((line) => line.includes(body.error_id) && line.includes('HPE_HEADER_OVERFLOW')),
        'the log line carries the error_id and the parser error',
      );
    });

    it('answers bytes that are not HTTP with 400 BAD_REQUEST and closes the connection', async () => {
      const [answer, ...more] = responses(await rawExchange(port, ['NOT HTTP AT ALL\r\n\r\n']));
      assert.equal(answer?.status, 400);
      assert.match(answer!.headers, /connection: close/i);
      const body = errorBody(answer!.body);
      assert.equal(body.code, 'BAD_REQUEST');
      assert.equal(body.error, 'The request is not valid HTTP/1.1');
      assert.equal(more.length, 0);
    });

    it('answers a request that is not received in time with 408 REQUEST_TIMEOUT, and nothing on a reset connection', () => {
      // Node raises these only after its header timeout (a minute); the handler is driven directly.
      const written = (code: string): string => {
        const socket = new PassThrough();
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        socket.on('error', () => {});
        clientErrorHandler.call(t.app, Object.assign(new Error(code), { code }), socket);
        return text;
      };
      const [timeout] = responses(written('ERR_HTTP_REQUEST_TIMEOUT'));
      assert.equal(timeout?.status, 408);
      assert.equal(errorBody(timeout!.body).code, 'REQUEST_TIMEOUT');
      assert.equal(written('ECONNRESET'), '');
    });

    it('answers a malformed percent-encoding in the path with 400 BAD_REQUEST', async () => {
      for (const url of ['/api/v1/webhooks/subscriptions/%zz', '/api/v1/%E0%A4%A/x']) {
        const response = await t.app.inject({ method: 'GET', url, headers: tenant.auth });
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        const body = errorBody(response.body);
        assert.equal(body.code, 'BAD_REQUEST');
        assert.equal(body.error, 'The URL is malformed: its path holds an invalid percent-encoding');
      }
    });

    it('routes an over-long path id like any unknown id: 401 without a token, then 404 from the route', async () => {
      const url = `/api/v1/webhooks/subscriptions/${'a'.repeat(500)}`;
      const anonymous = await t.app.inject({ method: 'GET', url });
      assert.equal(anonymous.statusCode, 401, anonymous.body);
      assert.deepEqual(anonymous.json(), { message: 'Unauthorized' });
      const known = await t.app.inject({ method: 'GET', url, headers: tenant.auth });
      assert.equal(known.statusCode, 404, known.body);
      assert.equal(errorBody(known.body).error, 'No subscription matches the id');
      const realm = await t.app.inject({
        method: 'POST',
        url: `/realms/${'r'.repeat(500)}/protocol/openid-connect/token`,
      });
      assert.equal(realm.statusCode, 404, realm.body);
      assert.deepEqual(realm.json(), { error: 'Realm does not exist' });
    });

    it("serves a request that arrives on an open connection while the server drains, not Fastify's own 503 body", async () => {
      let entered!: () => void;
      const slowEntered = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const draining = await startTestApp({
        db: t.db,
        routes: (app) => {
          app.get('/test-slow', async () => {
            entered();
            await new Promise((resolve) => setTimeout(resolve, 300));
            return { slow: true };
          });
        },
      });
      await draining.app.listen({ port: 0, host: '127.0.0.1' });
      const drainingPort = (draining.app.server.address() as { port: number }).port;
      let closed: Promise<void> | undefined;
      const text = await rawExchange(drainingPort, [
        'GET /test-slow HTTP/1.1\r\nHost: localhost\r\n\r\n',
        async () => {
          await slowEntered;
          closed = draining.close();
        },
        'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n',
      ]);
      await closed;
      const answers = responses(text);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200],
        text,
      );
      assert.deepEqual(JSON.parse(answers[1]!.body), { status: 'ok' });
      assert.match(answers[1]!.headers, /connection: close/i);
    });
  });

  describe('NUL in the names and ids of the operator API and the token endpoint', () => {
    const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' };
    const counts = async () =>
      (
        await t.db.pool.query(
          'SELECT (SELECT count(*) FROM organisations), (SELECT count(*) FROM api_clients)',
        )
      ).rows[0];

    it('refuses a NUL in an organisation or client name with 422 naming name, and stores nothing', async () => {
      const before = await counts();
      for (const [url, payload] of [
        ['/admin/v1/organisations', { name: 'Acme\u0000Ltd' }],
        ['/admin/v1/clients', { organisation_id: tenant.organisationId, name: 'ci\u0000' }],
      ] as const) {
        const response = await t.app.inject({ method: 'POST', url, headers: admin, payload });
        assert.equal(response.statusCode, 422, `${url}: ${response.body}`);
        const body = errorBody(response.body);
        assert.equal(body.code, 'VALIDATION_FAILED');
        assert.equal(body.field, 'name');
      }
      assert.deepEqual(await counts(), before);
    });

    it('answers a client id holding NUL as an unknown client: 404 on delete, 401 invalid_client for a token', async () => {
      const deleted = await t.app.inject({
        method: 'DELETE',
        url: '/admin/v1/clients/a%00b',
        headers: admin,
      });
      assert.equal(deleted.statusCode, 404, deleted.body);
      assert.equal(errorBody(deleted.body).error, 'No client matches the id');
      const token = await t.app.inject({
        method: 'POST',
        url: '/realms/sandbox/protocol/openid-connect/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials&client_id=a%00b&client_secret=x',
      });
      assert.equal(token.statusCode, 401, token.body);
      assert.deepEqual(token.json(), {
        error: 'invalid_client',
        error_description: 'Invalid client: the client id is not recognised',
      });
    });
  });

  describe('JSON bodies', () => {
    it('names the __proto__ key it refuses instead of calling the body invalid JSON', async () => {
      const before = await subscriptionCount();
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks/subscriptions',
        headers: json(),
        payload:
          '{"__proto__":{"isAdmin":true},"endpoint_url":"https://hooks.example.com/p","event_type_codes":[]}',
      });
      assert.equal(response.statusCode, 400, response.body);
      const body = errorBody(response.body);
      assert.equal(body.code, 'BAD_REQUEST');
      assert.equal(body.field, '__proto__');
      assert.equal(
        body.error,
        'The request body holds the key "__proto__" (at __proto__), which is refused: it can change object prototypes',
      );
      const nested = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks/subscriptions/search',
        headers: json(),
        payload: '{"filters":{"__proto__":{"status":["active"]}}}',
      });
      assert.equal(nested.statusCode, 400, nested.body);
      assert.equal(errorBody(nested.body).field, 'filters.__proto__');
      assert.equal(await subscriptionCount(), before);
    });

    it('refuses a body that is not valid UTF-8 with 400 BAD_REQUEST and stores nothing', async () => {
      const before = await subscriptionCount();
      const payload = Buffer.concat([
        Buffer.from('{"endpoint_url":"https://hooks.example.com/'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('","event_type_codes":[]}'),
      ]);
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks/subscriptions',
        headers: json(),
        payload,
      });
      assert.equal(response.statusCode, 400, response.body);
      const body = errorBody(response.body);
      assert.equal(body.code, 'BAD_REQUEST');
      assert.equal(body.error, 'The request body is not valid UTF-8');
      assert.equal(await subscriptionCount(), before);
      const stored = await t.db.pool.query(
        "SELECT count(*) AS n FROM webhook_subscriptions WHERE endpoint_url LIKE '%' || chr(65533) || '%'",
      );
      assert.equal(Number(stored.rows[0].n), 0, 'no U+FFFD stored');
    });
  });

  describe('endpoint_url IP literals in ranges D10 never sends to', () => {
    const REFUSED: Array<[string, string]> = [
      ['https://127.0.0.1/hook', '127.0.0.1 is a loopback address'],
      ['https://[::1]/hook', '::1 is a loopback address'],
      ['https://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1 is an IPv4-mapped address'],
      ['https://0.0.0.0/hook', '0.0.0.0 is an unspecified address'],
      ['https://10.0.0.1/hook', '10.0.0.1 is a private address'],
      ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local address'],
      ['https://[fd00::1]/hook', 'fd00::1 is a unique local address'],
      // Other spellings of 127.0.0.1 that the URL parser normalises.
      ['https://0x7f.1/hook', '127.0.0.1 is a loopback address'],
      ['https://2130706433:8443/hook', '127.0.0.1 is a loopback address'],
      ['https://100.64.0.1/hook', '100.64.0.1 is a carrier-grade NAT (CGNAT) address'],
    ];
    const message = (reason: string) =>
      `endpoint_url is refused: ${reason}, and webhooks are only sent to public addresses`;

    for (const [url, reason] of REFUSED) {
      it(`refuses ${url} at create with 422 naming endpoint_url`, async () => {
        const before = await subscriptionCount();
        const response = await t.app.inject({
          method: 'POST',
          url: '/api/v1/webhooks/subscriptions',
          headers: json(),
          payload: { endpoint_url: url, event_type_codes: ['transfer.completed'] },
        });
        assert.equal(response.statusCode, 422, response.body);
        const body = errorBody(response.body);
        assert.equal(body.code, 'VALIDATION_FAILED');
        assert.equal(body.field, 'endpoint_url');
        assert.equal(body.error, message(reason));
        assert.equal(await subscriptionCount(), before);
      });
    }

    it('refuses such a literal on update and keeps the stored URL', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks/subscriptions',
        headers: json(),
        payload: { endpoint_url: 'https://hooks.example.com/update', event_type_codes: [] },
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      for (const [url, reason] of REFUSED.slice(0, 7)) {
        const response = await t.app.inject({
          method: 'PATCH',
          url: `/api/v1/webhooks/subscriptions/${id}`,
          headers: json(),
          payload: { endpoint_url: url },
        });
        assert.equal(response.statusCode, 422, `${url}: ${response.body}`);
        const body = errorBody(response.body);
        assert.equal(body.field, 'endpoint_url');
        assert.equal(body.error, message(reason));
      }
      const read = await t.app.inject({
        method: 'GET',
        url: `/api/v1/webhooks/subscriptions/${id}`,
        headers: tenant.auth,
      });
      assert.equal(read.json().endpoint_url, 'https://hooks.example.com/update');
    });

    it('accepts a public IP literal, and a host name, whose addresses are checked at each attempt', async () => {
      for (const url of [
        'https://93.184.216.34/hook',
        'https://[2606:4700:4700::1111]/hook',
        'https://localhost/hook',
      ]) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/api/v1/webhooks/subscriptions',
          headers: json(),
          payload: { endpoint_url: url, event_type_codes: [] },
        });
        assert.equal(response.statusCode, 201, `${url}: ${response.body}`);
      }
    });

    it('accepts a private literal when WEBHOOK_ALLOW_PRIVATE_TARGETS=true', async () => {
      const open = await startTestApp({ db: t.db });
      try {
        const owner = await open.tenant();
        const response = await open.app.inject({
          method: 'POST',
          url: '/api/v1/webhooks/subscriptions',
          headers: { ...owner.auth, 'content-type': 'application/json' },
          payload: { endpoint_url: 'https://127.0.0.1:8443/hook', event_type_codes: [] },
        });
        assert.equal(response.statusCode, 201, response.body);
      } finally {
        await open.close();
      }
    });
  });
});
