// Hostile input on every payment route (issue 18): generated JSON, valid bodies mutated field by field with
// payment-specific values (amounts as numbers, with exponents, signs, too many decimals or digits; currency
// codes in the wrong case or unknown; ids of the wrong prefix; NUL and other scripts in names; huge arrays,
// deep nesting), raw bytes, malformed tokens, query strings and Idempotency-Key headers. Every answer is a
// non-5xx in the contract's envelope, and a rejected request writes no transfer, payout, deposit, ledger
// entry, event or any other row. The route lists must cover the app's route table.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { bodyOf } from '../beneficiaries/fixtures.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import {
  type Endpoint,
  endpointName,
  generatedBodies,
  type HostileContext,
  idempotencyKeyHeaders,
  malformedAuthorizationHeaders,
  mutatedBody,
  mutatedQueries,
  pathId,
  queryStrings,
  rawBytes,
  routeTable,
  rowCounter,
} from '../helpers/hostile.ts';
import {
  COVERED_PREFIXES,
  HOSTILE_LIMITS,
  PAYMENT_ENDPOINTS,
  type PaymentEndpoint,
  PLATFORM_ENDPOINTS,
  type Targets,
} from './endpoints.ts';
import { paymentWorld } from './payment-world.ts';

/**
 * Every table a payment route writes. Not idempotency_keys: D14 stores the answer of a refused request
 * (a 404, a 400 INVALID_STATE) so that its repeat replays it.
 */
const TABLES = [
  'organisations',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
  'jobs',
  'ledger_accounts',
  'ledger_transactions',
  'ledger_entries',
  'fx_rate_sets',
  'fx_rates',
  'corridors',
  'banks',
  'bank_branches',
  'sanctions_lists',
  'sanctions_entries',
  'sanctions_screenings',
  'beneficiaries',
  'deposits',
  'payouts',
  'payout_hand_offs',
  'crypto_account_keys',
  'crypto_deposit_addresses',
  'quotes',
  'transfers',
];

/** A JSON schema of the OpenAPI document, possibly a `$ref` to a named component. */
interface DocumentSchema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  items?: DocumentSchema;
  properties?: Record<string, DocumentSchema>;
}

interface SearchOperation {
  requestBody: { content: { 'application/json': { schema: DocumentSchema } } };
}

const PREFIXES = ['cor_', 'bnk_', 'brn_', 'scr_', 'ben_', 'qte_', 'trf_', 'dep_', 'pyt_', 'dad_', 'btx_'];

/** Real ids made wrong: another resource's prefix, lower case, one character more or less. */
function wrongIds(ids: string[]): string[] {
  return ids.flatMap((id) => [
    ...PREFIXES.filter((prefix) => !id.startsWith(prefix)).map((prefix) => `${prefix}${id.slice(4)}`),
    id.toLowerCase(),
    `${id}0`,
    id.slice(0, -1),
    `${id} `,
    `${id}/../x`,
  ]);
}

describe('hostile input on the payment routes (issue 18)', () => {
  let t: TestApp;
  let targets: Targets;
  let context: HostileContext;
  let ids: fc.Arbitrary<string>;

  before(async () => {
    t = await startTestApp({ env: { ...HOSTILE_LIMITS, SANDBOX_STEP_DELAY_MS: '0' } });
    const tenant = await t.tenant();
    const world = await paymentWorld(t, tenant);
    const adminAuth = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
    const corridor = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/corridors',
      headers: adminAuth,
      payload: {
        source_currency: 'GBP',
        destination_country: 'FR',
        destination_currency: 'EUR',
        payout_method: 'bank_account',
        min_amount: '1.00',
        max_amount: '10000.00',
        fee_fixed: '1.00',
        fee_percent: '0.50',
        fx_markup_percent: '0.35',
        estimated_delivery_seconds: 3600,
      },
    });
    assert.equal(corridor.statusCode, 201, corridor.body);
    const first = async (url: string, filters: Record<string, string[]>) => {
      const page = await world.api.post(url, { filters });
      assert.equal(page.statusCode, 200, page.body);
      return (page.json() as { items: { id: string }[] }).items[0]!.id;
    };
    targets = {
      ...world,
      corridor: (corridor.json() as { id: string }).id,
      bank: await first('/api/v1/banks/search', { country: ['DE'] }),
      branch: await first('/api/v1/bank-branches/search', { country: ['DE'] }),
      listCode: 'hostile-input',
    };
    context = {
      app: t.app,
      headersFor: (endpoint: Endpoint) =>
        endpoint.auth === 'bearer' ? tenant.auth : endpoint.auth === 'admin' ? adminAuth : {},
      rowCounts: await rowCounter(t.db.pool, TABLES),
    };
    const real = Object.values(targets).flatMap((value) =>
      typeof value === 'string' && /^[a-z]{3}_/.test(value)
        ? [value]
        : typeof value === 'object' && value !== null && 'id' in value
          ? [String(value.id)]
          : [],
    );
    ids = fc.oneof(pathId, fc.constantFrom(...wrongIds(real)), fc.constantFrom(...real));
  });
  after(() => t.close());

  it('covers every route of the route table: a new /api, /admin or /realms route fails here until listed', () => {
    const listed = [...PLATFORM_ENDPOINTS, ...PAYMENT_ENDPOINTS].map(endpointName);
    const routes = routeTable(t.app).filter((route) =>
      COVERED_PREFIXES.some((prefix) => route.split(' ')[1]!.startsWith(prefix)),
    );
    assert.deepEqual(
      routes.filter((route) => !listed.includes(route)),
      [],
      'routes without hostile-input tests: add them to test/reliability/endpoints.ts',
    );
    assert.deepEqual(
      listed.filter((endpoint) => !routes.includes(endpoint)),
      [],
      'listed endpoints the app does not register',
    );
    assert.equal(new Set(listed).size, listed.length, 'an endpoint is listed twice');
  });

  const options = (endpoint: PaymentEndpoint, runs: number) => ({
    runs,
    ids,
    ...(endpoint.expensive ? { expensive: endpoint.expensive } : {}),
  });

  for (const endpoint of PAYMENT_ENDPOINTS) {
    const name = endpointName(endpoint);
    const own = () => (endpoint.id ? endpoint.id(targets) : '');

    // A GET without a path parameter sends no body: only its ids and query strings vary.
    const takesInput = endpoint.method !== 'GET' || endpoint.path.includes(':');
    it(`${name}: generated JSON bodies never cause a 5xx, and rejections write nothing`, () =>
      generatedBodies(() => context, endpoint, options(endpoint, takesInput ? 20 : 3)));

    if (endpoint.body) {
      const valid = endpoint.body;
      it(`${name}: a valid body with hostile values never causes a 5xx, and rejections write nothing`, () =>
        generatedBodies(() => context, endpoint, {
          ...options(endpoint, 30),
          bodies: mutatedBody(valid(targets)),
          // Mostly the route's own resource, so that the body reaches the operation.
          ids: fc.oneof({ weight: 4, arbitrary: fc.constant(own()) }, { weight: 1, arbitrary: ids }),
          ...(endpoint.encode ? { encode: endpoint.encode } : {}),
        }));
    }

    it(`${name}: raw bytes under any content type never cause a 5xx`, () =>
      rawBytes(() => context, endpoint, options(endpoint, 8)));

    if (endpoint.auth === 'bearer') {
      it(`${name}: any malformed Authorization header is 401 {"message":"Unauthorized"}`, () =>
        malformedAuthorizationHeaders(() => context, endpoint, 5));
    }

    it(`${name}: arbitrary query strings never cause a 5xx`, () =>
      queryStrings(() => context, endpoint, {
        ...options(endpoint, 5),
        ...(endpoint.expensive?.(undefined) && endpoint.body ? { body: endpoint.body(targets) } : {}),
      }));

    if (endpoint.query) {
      const valid = endpoint.query;
      it(`${name}: a valid query string with hostile values never causes a 5xx`, () =>
        mutatedQueries(() => context, endpoint, { runs: 20, valid: valid(targets) }));
    }

    if (endpoint.idempotent) {
      it(`${name}: an Idempotency-Key that is empty, too long or not ASCII is 422; a valid one replays`, () =>
        idempotencyKeyHeaders(() => context, endpoint, {
          runs: 10,
          id: own(),
          body: endpoint.body?.(targets),
        }));
    }
  }

  it('answers an over-long id on every GET of one resource 404, as any unknown id (docs/reliability.md)', async () => {
    const reads = PAYMENT_ENDPOINTS.filter(
      (endpoint) => endpoint.method === 'GET' && /^[^:]*:[a-z_]+(\/[a-z]+)?$/.test(endpoint.path),
    );
    assert.ok(reads.length >= 10, `${reads.length} routes`);
    for (const endpoint of reads) {
      for (const length of [65, 300]) {
        const url = endpoint.path.replace(/:[a-z_]+/, 'a'.repeat(length));
        const response = await t.app.inject({ method: 'GET', url, headers: context.headersFor(endpoint) });
        assert.equal(response.statusCode, 404, `${url.slice(0, 60)}…: ${response.body}`);
        assert.equal(errorBody(response.body).code, 'NOT_FOUND');
      }
    }
  });

  describe('findings of the payment hostile-input pass', () => {
    const adminHeaders = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
    const refused = async (response: LightMyRequestResponse, before: string, field: string) => {
      assert.equal(response.statusCode, 422, response.body);
      const body = errorBody(response.body);
      assert.equal(body.code, 'VALIDATION_FAILED');
      assert.equal(body.field, field, response.body);
      assert.equal(await context.rowCounts(), before, 'nothing is written');
      return body.error;
    };

    it('answers a payout in a currency that does not exist with 422 naming currency', async () => {
      const before = await context.rowCounts();
      const response = await targets.api.post('/api/v1/payments/payouts', {
        beneficiary_id: targets.beneficiary,
        currency: 'ZZZ',
        amount: '10.00',
      });
      assert.equal(await refused(response, before, 'currency'), 'Unknown currency ZZZ');
    });

    it('refuses a beneficiary whose address holds an unpaired UTF-16 surrogate with 400 naming where', async () => {
      const before = await context.rowCounts();
      const response = await targets.api.post('/api/v1/beneficiaries', {
        ...bodyOf('DE'),
        address: { line1: 'Unter den Linden \ud800', city: 'Berlin', country: 'DE' },
      });
      assert.equal(response.statusCode, 400, response.body);
      const body = errorBody(response.body);
      assert.equal(body.code, 'BAD_REQUEST');
      assert.equal(body.field, 'address.line1');
      assert.equal(
        body.error,
        'The request body holds an unpaired UTF-16 surrogate (at address.line1): strings must be Unicode text',
      );
      assert.equal(await context.rowCounts(), before);
    });

    /** Every search route and its text filters, from the OpenAPI document the route schemas make. */
    const searchRoutes = () => {
      const document = t.app.swagger() as {
        paths: Record<string, { post?: SearchOperation }>;
        components: { schemas: Record<string, DocumentSchema> };
      };
      const resolve = (schema: DocumentSchema | undefined): DocumentSchema | undefined =>
        schema?.$ref ? resolve(document.components.schemas[schema.$ref.split('/').at(-1)!]) : schema;
      return Object.entries(document.paths).flatMap(([path, operations]) => {
        if (!path.endsWith('/search') || !operations.post) return [];
        const body = resolve(operations.post.requestBody.content['application/json'].schema);
        const filters = resolve(body?.properties?.filters);
        const text = Object.entries(filters?.properties ?? {})
          .filter(([, list]) => {
            const item = resolve(resolve(list)?.items);
            return item?.type === 'string' && item.enum === undefined;
          })
          .map(([key]) => key);
        return [{ path, text }];
      });
    };

    it('refuses a NUL in any text filter of any search with 422 naming the filter', async () => {
      const routes = searchRoutes();
      assert.ok(routes.length >= 13, `every search route is found (${routes.length})`);
      let filters = 0;
      for (const { path, text } of routes) {
        for (const key of text) {
          const response = await targets.api.post(path, { filters: { [key]: ['a\u0000b'] } });
          assert.equal(response.statusCode, 422, `${path} ${key}: ${response.body}`);
          assert.equal(errorBody(response.body).field, `filters.${key}[0]`, `${path} ${key}`);
          filters++;
        }
      }
      assert.ok(filters >= 25, `the text filters are found (${filters})`);
    });

    it('answers a search text holding NUL with an empty page on every search that matches text', async () => {
      for (const path of [
        '/api/v1/banks/search',
        '/api/v1/bank-branches/search',
        '/api/v1/crypto/deposit-addresses/search',
        '/api/v1/transfers/search',
        '/api/v1/beneficiaries/search',
        '/api/v1/sanctions/screenings/search',
        '/api/v1/corridors/search',
        '/api/v1/webhooks/subscriptions/search',
        '/api/v1/webhooks/events/search',
      ]) {
        const response = await targets.api.post(path, { search: 'a\u0000b' });
        assert.equal(response.statusCode, 200, `${path}: ${response.body}`);
        assert.deepEqual(response.json(), { items: [], total: 0, page: 1, page_size: 20 }, path);
      }
    });

    it('refuses a search text with 422 on the searches that name no free-text fields, and changes nothing', async () => {
      for (const [path, what] of [
        ['/api/v1/payments/deposits/search', 'Deposits'],
        ['/api/v1/payments/payouts/search', 'Payouts'],
        ['/api/v1/balances/transactions/search', 'Balance transactions'],
        ['/api/v1/webhooks/delivery-attempts/search', 'Delivery attempts'],
      ] as const) {
        const before = await context.rowCounts();
        const response = await targets.api.post(path, { search: 'pyt_' });
        assert.equal(response.statusCode, 422, `${path}: ${response.body}`);
        assert.equal(errorBody(response.body).code, 'VALIDATION_FAILED');
        assert.equal(errorBody(response.body).field, 'search');
        assert.equal(
          errorBody(response.body).error,
          `${what} have no free-text search; narrow them with filters`,
        );
        assert.deepEqual(await context.rowCounts(), before, path);
        assert.equal((await targets.api.post(path, {})).statusCode, 200, `${path} without search`);
      }
    });

    it('refuses a bank directory file that the CSV parser cannot read (a quote opening a field) with 422 on line 1', async () => {
      for (const file of ['{"a":{"a":1}}', 'country,bank "name"\nDE,Bank']) {
        const before = await context.rowCounts();
        const response = await t.app.inject({
          method: 'POST',
          url: '/admin/v1/banks/import',
          headers: { ...adminHeaders, 'content-type': 'text/csv' },
          payload: file,
        });
        const error = await refused(response, before, 'line[1]');
        assert.match(error, /^line 1: not valid CSV: Invalid Opening Quote/);
      }
    });

    it('refuses a bank directory file that is not UTF-8 with 422 naming the line, instead of storing U+FFFD', async () => {
      const before = await context.rowCounts();
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/banks/import',
        headers: { ...adminHeaders, 'content-type': 'text/csv' },
        payload: Buffer.concat([
          Buffer.from('country,bank_name,bank_code_type,bank_code\nDE,Hostile Bank,blz,10020030\nDE,M'),
          Buffer.from([0xfc]), // "ü" in Latin-1
          Buffer.from('nchener Bank,blz,70020270\n'),
        ]),
      });
      assert.equal(
        await refused(response, before, 'line[3]'),
        'line 3: the file is not valid UTF-8: save it as UTF-8',
      );
    });

    it('refuses a NUL in the address of a chain deposit, from the operator or the sandbox, with 422 naming address', async () => {
      const address = `${targets.address.address}\u0000`;
      const before = await context.rowCounts();
      const operator = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/crypto/deposits',
        headers: adminHeaders,
        payload: {
          network: 'ethereum',
          address,
          asset: 'USDC',
          amount: '5.000000',
          tx_hash: '0x01',
          confirmations: 1,
        },
      });
      await refused(operator, before, 'address');
      const sandbox = await targets.api.post('/api/v1/sandbox/crypto/deposits', {
        address,
        asset: 'USDC',
        amount: '5.000000',
      });
      await refused(sandbox, before, 'address');
    });
  });
});
