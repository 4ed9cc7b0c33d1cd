// Hostile input against every endpoint (issue 7): generated bodies, raw bytes, content types, headers,
// query strings and path ids. Every answer is a non-5xx in the right envelope, nothing hangs, and a
// rejected request leaves no row behind.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { clientErrorHandler } from '../../src/platform/errors.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';

interface Endpoint {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** `:id` is replaced by a generated or a real id. */
  path: string;
  auth: 'bearer' | 'admin' | 'none';
  envelope: 'platform' | 'oauth';
}

const ENDPOINTS: Endpoint[] = [
  { method: 'POST', path: '/realms/sandbox/protocol/openid-connect/token', auth: 'none', envelope: 'oauth' },
  { method: 'GET', path: '/api/v1/webhooks/event-types', auth: 'bearer', envelope: 'platform' },
  { method: 'POST', path: '/api/v1/webhooks/subscriptions', auth: 'bearer', envelope: 'platform' },
  { method: 'POST', path: '/api/v1/webhooks/subscriptions/search', auth: 'bearer', envelope: 'platform' },
  { method: 'GET', path: '/api/v1/webhooks/subscriptions/:id', auth: 'bearer', envelope: 'platform' },
  { method: 'PATCH', path: '/api/v1/webhooks/subscriptions/:id', auth: 'bearer', envelope: 'platform' },
  { method: 'DELETE', path: '/api/v1/webhooks/subscriptions/:id', auth: 'bearer', envelope: 'platform' },
  {
    method: 'POST',
    path: '/api/v1/webhooks/subscriptions/:id/rotate-secret',
    auth: 'bearer',
    envelope: 'platform',
  },
  { method: 'POST', path: '/api/v1/webhooks/events/search', auth: 'bearer', envelope: 'platform' },
  { method: 'GET', path: '/api/v1/webhooks/events/:id', auth: 'bearer', envelope: 'platform' },
  { method: 'POST', path: '/api/v1/webhooks/events/:id/replay', auth: 'bearer', envelope: 'platform' },
  { method: 'POST', path: '/api/v1/webhooks/delivery-attempts/search', auth: 'bearer', envelope: 'platform' },
  { method: 'GET', path: '/api/v1/webhooks/delivery-attempts/:id', auth: 'bearer', envelope: 'platform' },
  { method: 'POST', path: '/api/v1/sandbox/webhooks/events', auth: 'bearer', envelope: 'platform' },
  { method: 'POST', path: '/admin/v1/organisations', auth: 'admin', envelope: 'platform' },
  { method: 'POST', path: '/admin/v1/clients', auth: 'admin', envelope: 'platform' },
  { method: 'DELETE', path: '/admin/v1/clients/:id', auth: 'admin', envelope: 'platform' },
];

const TABLES = [
  'organisations',
  'api_clients',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
];

/** Field names the endpoints know, so that generated objects often get past the first check. */
const KNOWN_KEYS = [
  'endpoint_url',
  'event_type_codes',
  'max_retries',
  'status',
  'filters',
  'search',
  'page',
  'page_size',
  'sort_by',
  'sort_direction',
  'webhook_event_ids',
  'event_type_code',
  'data',
  'idempotency_key',
  'name',
  'organisation_id',
  'scopes',
  'grant_type',
  'client_id',
  'client_secret',
];

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '\u0000',
    'https://',
    'https://example.com/\u0000',
    '../../etc/passwd',
    "' OR 1=1 --",
    '%00',
    '\uFFFF',
  ),
  fc.constantFrom('x'.repeat(5000), 'é'.repeat(3000)),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 1, 1e308, -0, Number.MAX_SAFE_INTEGER),
);
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KNOWN_KEYS), fc.string({ maxLength: 10 })), tie('value'), {
      maxKeys: 5,
    }),
  ),
})).value;
const hostileBody = fc.oneof(
  fc.dictionary(fc.constantFrom(...KNOWN_KEYS), hostileValue, { maxKeys: 6 }),
  hostileValue,
);
const rawBody = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom(
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0xfe, 0x7d]), // invalid UTF-8 inside JSON
    Buffer.from('{"a":1,"a":2}'),
    Buffer.from(`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
    Buffer.from('\u0000\u0000'),
    Buffer.from('null'),
  ),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  '',
);
const pathId = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.constantFrom(
    '0',
    '-1',
    '1.5',
    '99999999999999999999999',
    '9223372036854775808',
    'null',
    '%00',
    '..',
    'evt_x',
  ),
  fc.uuid(),
  fc.integer({ min: 1, max: 1_000_000 }).map(String),
);

describe('hostile input (issue 7)', () => {
  let t: TestApp;
  let tenant: Tenant;
  before(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
  });
  after(() => t.close());

  const rowCounts = async (): Promise<string> => {
    const result = await t.db.pool.query(
      TABLES.map((table) => `SELECT '${table}' AS t, count(*) AS n FROM ${table}`).join(' UNION ALL '),
    );
    return JSON.stringify(result.rows);
  };

  const headersFor = (endpoint: Endpoint): Record<string, string> =>
    endpoint.auth === 'bearer'
      ? tenant.auth
      : endpoint.auth === 'admin'
        ? { authorization: `Bearer ${TEST_ADMIN_KEY}` }
        : {};

  const checkAnswer = (endpoint: Endpoint, status: number, body: string, label: string) => {
    assert.ok(status < 500, `${label}: ${status} ${body.slice(0, 300)}`);
    if (status < 400) return;
    const parsed = JSON.parse(body) as Record<string, unknown>;
    if (status === 401 && endpoint.envelope === 'platform' && endpoint.auth === 'bearer') {
      assert.deepEqual(parsed, { message: 'Unauthorized' }, label);
    } else if (
      endpoint.envelope === 'oauth' ||
      (status === 404 && 'error' in parsed && Object.keys(parsed).length === 1)
    ) {
      assert.equal(typeof parsed.error, 'string', label);
    } else {
      const keys = Object.keys(parsed);
      assert.equal(keys[0], 'error', `${label}: ${body}`);
      assert.equal(keys.at(-1), 'error_id', `${label}: ${body}`);
      assert.equal(typeof parsed.code, 'string', label);
    }
  };

  const send = async (
    endpoint: Endpoint,
    id: string,
    payload: string | Buffer | undefined,
    type: string,
    extra = {},
  ) => {
    const url = endpoint.path.replace(':id', encodeURIComponent(id));
    const headers: Record<string, string> = { ...headersFor(endpoint), ...extra };
    if (type) headers['content-type'] = type;
    return t.app.inject({
      method: endpoint.method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
  };

  for (const endpoint of ENDPOINTS) {
    const name = `${endpoint.method} ${endpoint.path}`;

    it(`${name}: generated JSON bodies never cause a 5xx, and rejections write nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(hostileBody, pathId, async (body, id) => {
          const before = await rowCounts();
          const type =
            endpoint.envelope === 'oauth' ? 'application/x-www-form-urlencoded' : 'application/json';
          const payload =
            endpoint.envelope === 'oauth'
              ? new URLSearchParams(
                  Object.entries(typeof body === 'object' && body !== null ? body : { body }).map(
                    ([k, v]): [string, string] => [k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')],
                  ),
                ).toString()
              : JSON.stringify(body);
          const response = await send(
            endpoint,
            id,
            endpoint.method === 'GET' ? undefined : payload,
            endpoint.method === 'GET' ? '' : type,
          );
          checkAnswer(endpoint, response.statusCode, response.body, `${name} ${payload?.slice(0, 200)}`);
          if (response.statusCode >= 400)
            assert.equal(await rowCounts(), before, `${name}: a rejected request wrote rows`);
        }),
        { numRuns: 60 },
      );
    });

    it(`${name}: raw bytes under any content type never cause a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(rawBody, contentType, pathId, async (payload, type, id) => {
          const before = await rowCounts();
          const response = await send(endpoint, id, payload, type);
          checkAnswer(endpoint, response.statusCode, response.body, `${name} ${type}`);
          if (response.statusCode >= 400) assert.equal(await rowCounts(), before);
        }),
        { numRuns: 40 },
      );
    });

    if (endpoint.auth === 'bearer') {
      it(`${name}: any malformed Authorization header is 401 {"message":"Unauthorized"}`, async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              fc.string({ maxLength: 60 }).filter((value) => !/[\r\n]/.test(value)),
              fc.constantFrom(
                'Bearer',
                'Bearer ',
                'bearer x.y.z',
                'Basic abc',
                `Bearer ${'a'.repeat(9000)}`,
                'Bearer a.b.c',
              ),
            ),
            async (header) => {
              const response = await t.app.inject({
                method: endpoint.method,
                url: endpoint.path.replace(':id', '1'),
                headers: { authorization: header, 'content-type': 'application/json' },
                payload: '{"not": "validated"',
              });
              assert.equal(response.statusCode, 401, `${header}: ${response.body}`);
              assert.deepEqual(response.json(), { message: 'Unauthorized' });
            },
          ),
          { numRuns: 25 },
        );
      });
    }

    it(`${name}: arbitrary query strings never cause a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
          async (query) => {
            const url = `${endpoint.path.replace(':id', '1')}?${new URLSearchParams(query).toString()}`;
            const response = await t.app.inject({
              method: endpoint.method,
              url,
              headers: headersFor(endpoint),
            });
            checkAnswer(endpoint, response.statusCode, response.body, `${name} ?${JSON.stringify(query)}`);
          },
        ),
        { numRuns: 20 },
      );
    });
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
