// Hostile input against every endpoint (issue 7): generated bodies, raw bytes, content types, headers,
// query strings and path ids. Every answer is a non-5xx in the right envelope, nothing hangs, and a
// rejected request leaves no row behind.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startTestApp, TEST_ADMIN_KEY, type Tenant, type TestApp } from '../helpers/app.ts';

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
