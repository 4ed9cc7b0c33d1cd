// Hostile input against the API's endpoints, shared by the hostile-input tests of the platform routes
// (test/reliability/hostile-input.test.ts) and the payment routes (test/reliability/payment-hostile-input.test.ts):
// the generators (JSON values, raw bytes, content types, path ids, payment values, Idempotency-Key headers),
// the check every answer must pass, a row counter that proves a rejected request wrote nothing, the
// properties themselves, and the app's route table that the endpoint lists must cover.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { Pool } from '../../src/db/pool.ts';
import type { App } from '../../src/platform/deps.ts';
import { errorBody } from './app.ts';
import type { Method } from './http.ts';

export interface Endpoint {
  method: Method;
  /** The route as the app registers it: every `:name` parameter takes a generated or a real id. */
  path: string;
  auth: 'bearer' | 'admin' | 'none';
  envelope: 'platform' | 'oauth';
  /** Path parameters that are not ids, with the value every request uses (the realm). */
  fixed?: Record<string, string>;
}

export const endpointName = (endpoint: Endpoint): string => `${endpoint.method} ${endpoint.path}`;

export function urlOf(endpoint: Endpoint, id: string): string {
  return endpoint.path.replace(/:(\w+)/g, (_match, name: string) =>
    encodeURIComponent((endpoint.fixed?.[name] ?? id).toWellFormed()),
  );
}

/** What the properties need of the test: the app, the credentials of each kind of endpoint, the rows. */
export interface HostileContext {
  app: App;
  headersFor(endpoint: Endpoint): Record<string, string>;
  /** A snapshot of the tables a request could write: equal before and after means nothing was written. */
  rowCounts(): Promise<string>;
}

/**
 * Every route of the app as `METHOD /path` (HEAD left out), read from Fastify's route tree: each line of
 * `printRoutes` is a path suffix under the line above it at one level less indentation.
 */
export function routeTable(app: App): string[] {
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const path = `${prefixes[depth - 1] ?? ''}${match[2]!}`;
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of match[3]?.split(', ') ?? []) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

/**
 * A snapshot of `tables`: the row count of each, and the latest `updated_at` where the table has one, so that
 * an UPDATE shows as well as an INSERT or a DELETE.
 */
export async function rowCounter(pool: Pool, tables: readonly string[]): Promise<() => Promise<string>> {
  const dated = new Set(
    (
      await pool.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.columns
          WHERE column_name = 'updated_at' AND table_schema = current_schema() AND table_name = ANY($1)`,
        [tables],
      )
    ).rows.map((row) => row.table_name),
  );
  const columns = tables.map(
    (table) =>
      `'${table}', (SELECT ${dated.has(table) ? 'json_build_array(count(*), max(updated_at))' : 'count(*)'} FROM ${table})`,
  );
  const sql = `SELECT json_build_object(${columns.join(', ')})::text AS state`;
  return async () => (await pool.query<{ state: string }>(sql)).rows[0]!.state;
}

/**
 * Every answer: never a 5xx; never 429 (a rate limit would hide what the request does: the tests raise the
 * limits); a 4xx in its envelope: the OAuth one on the token endpoint, `{"message":"Unauthorized"}` for a
 * 401 of a bearer endpoint, otherwise the platform envelope (D5): `error` first, a `code`, `error_id` last.
 */
export function checkAnswer(
  endpoint: Endpoint,
  response: Pick<LightMyRequestResponse, 'statusCode' | 'body'>,
  label: string,
): void {
  const { statusCode: status, body } = response;
  assert.ok(status < 500, `${label}: ${status} ${body.slice(0, 300)}`);
  assert.notEqual(status, 429, `${label}: rate limited, so the request was not tested`);
  if (status < 400) return;
  if (endpoint.envelope === 'oauth') {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    assert.equal(typeof parsed.error, 'string', `${label}: ${body}`);
    return;
  }
  if (status === 401 && endpoint.auth === 'bearer') {
    assert.deepEqual(JSON.parse(body), { message: 'Unauthorized' }, label);
    return;
  }
  const parsed = errorBody(body);
  assert.match(parsed.code, /^[A-Z][A-Z_]*$/, `${label}: ${body}`);
  assert.ok(parsed.error.length > 0, `${label}: ${body}`);
}

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
  // The payment areas (D15-D24).
  'amount',
  'source_amount',
  'destination_amount',
  'expected_amount',
  'currency',
  'source_currency',
  'destination_currency',
  'destination_country',
  'corridor_id',
  'beneficiary_id',
  'funding_method',
  'method',
  'network',
  'asset',
  'address',
  'account',
  'entity_type',
  'payout_method',
  'external_id',
  'reference',
  'purpose',
  'failure_reason',
  'decision',
  'note',
  'code_type',
  'code',
  'country',
  'bank_code',
  'date_of_birth',
  'label',
  'tx_hash',
  'confirmations',
  'base',
  'as_of',
  'provider',
  'rates',
  'format',
  'files',
  'banks',
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
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
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

/** An object `depth` levels deep: `{"a":{"a":...}}`. */
function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

/**
 * Values aimed at the payment areas' rules (D14): amounts as numbers, with an exponent, a sign, too many
 * decimals or too many digits; currency codes in the wrong case or unknown; ids with the wrong prefix or
 * shape; names with NUL, controls, unpaired surrogates and other scripts; huge arrays and deep nesting.
 */
export const paymentValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    100,
    1.5,
    0,
    -1,
    1e21,
    Number.MAX_SAFE_INTEGER,
    '1e3',
    '1E-2',
    '1e400',
    '-1',
    '-0.01',
    '+1',
    '0',
    '0.00',
    '0.001',
    '1.001',
    '100.123456789',
    '1.',
    '.5',
    ' 1',
    '1 ',
    '1,00',
    '1_000',
    'NaN',
    'Infinity',
    '0x10',
    '٣',
    '１００',
    '9'.repeat(39),
    '9'.repeat(41),
    '9'.repeat(5000),
    `1.${'0'.repeat(400)}1`,
    '00000000001.00',
  ),
  fc.constantFrom(
    'usd',
    'Usd',
    'eur',
    'XXX',
    'ZZZ',
    'US',
    'USDD',
    'EUR ',
    'usdc',
    'XAU',
    'BTC',
    'de',
    'D',
    'ZZ',
  ),
  fc.constantFrom(
    'trf_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
    'ben_01jd3v6m2q8w1x4y5z6a7b8c9d',
    'ben_',
    'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9DX',
    'BEN_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
    'cor_0000SANDBX000000000000000I',
    'cor_0000SANDBX0000000000000001\u0000',
    'pyt_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
    'dep_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
    '01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
    '00000000-0000-0000-0000-000000000000',
  ),
  fc.constantFrom(
    'Sanctioned Person',
    'Lookalike Holdings',
    'a\u0000b',
    '\u202Eevil',
    '\u0007\u001b[31m',
    'Ünïcödé 名前 🙂',
    'x'.repeat(10_000),
    '\uD800',
    ' ',
    '',
    'Z\u0351\u0352\u0353\u0354\u0355\u0356',
  ),
  fc.constantFrom(
    Array.from({ length: 50_000 }, (_, index) => `USD${index}`),
    Array.from({ length: 101 }, () => 'USD'),
    [],
    [null],
    nested(1_000),
    nested(60),
    { '': '' },
    Object.fromEntries(Array.from({ length: 2_000 }, (_, index) => [`k${index}`, index])),
  ),
);

export const hostileBody = fc.oneof(
  fc.dictionary(fc.constantFrom(...KNOWN_KEYS), fc.oneof(hostileValue, paymentValue), { maxKeys: 6 }),
  hostileValue,
);
export const rawBody = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom(
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0xfe, 0x7d]), // invalid UTF-8 inside JSON
    Buffer.from('{"a":1,"a":2}'),
    Buffer.from(`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
    Buffer.from('\u0000\u0000'),
    Buffer.from('null'),
    Buffer.from('{"amount":100.00}'),
    Buffer.from('{"amount":1e999}'),
    Buffer.from('{"amount":"1\\u0000"}'),
    Buffer.from('country,bank_name\nDE,"unterminated\n'),
  ),
);
export const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'text/csv',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  '',
);
export const pathId = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.constantFrom(
    '0',
    '-1',
    '1.5',
    '99999999999999999999999',
    '9223372036854775808',
    'null',
    '%00',
    '\u0000',
    '..',
    'evt_x',
    'x'.repeat(65),
  ),
  fc.uuid(),
  fc.integer({ min: 1, max: 1_000_000 }).map(String),
);

/** Authorization header values that are not a valid token. */
export const malformedAuthorization = fc.oneof(
  fc.string({ maxLength: 60 }).filter((value) => !/[\r\n]/.test(value)),
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'bearer x.y.z',
    'Basic abc',
    `Bearer ${'a'.repeat(9000)}`,
    'Bearer a.b.c',
  ),
);

/**
 * Idempotency-Key headers: `valid` ones (1..255 printable ASCII, D14) get a unique suffix when sent, so that no
 * two runs share a key; the others must be refused.
 */
export interface KeyCase {
  valid: boolean;
  value: string;
}
export const idempotencyKeys: fc.Arbitrary<KeyCase> = fc.oneof(
  fc
    .oneof(
      fc.constantFrom(
        '',
        '\t',
        'k'.repeat(256),
        'k'.repeat(10_000),
        'clé',
        'ключ',
        '🔑',
        'a\u0000b',
        'a\u007fb',
      ),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).filter((key) => !/^[\x20-\x7e]+$/.test(key)),
    )
    .map((value) => ({ valid: false, value })),
  fc
    .constantFrom('k', ' ', '~', 'key with spaces', '"quoted"', 'k'.repeat(240))
    .map((value) => ({ valid: true, value })),
);

let keyCounter = 0;
/** The header value of a generated key: a valid one made unique (the count fits in the 255 characters). */
export function keyHeader(key: KeyCase): string {
  return key.valid ? `${key.value}${process.pid}-${++keyCounter}`.slice(-255) : key.value;
}

export async function send(
  context: HostileContext,
  endpoint: Endpoint,
  id: string,
  payload: string | Buffer | undefined,
  type: string,
  extra: Record<string, string> = {},
  query = '',
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...context.headersFor(endpoint), ...extra };
  if (type) headers['content-type'] = type;
  return context.app.inject({
    method: endpoint.method,
    url: `${urlOf(endpoint, id)}${query}`,
    headers,
    ...(payload === undefined ? {} : { payload }),
  });
}

/** The JSON text a generated value is sent as; the form encoding on the token endpoint. */
export function encodeBody(endpoint: Endpoint, body: unknown): { payload: string; type: string } {
  if (endpoint.envelope === 'oauth') {
    const fields = typeof body === 'object' && body !== null ? body : { body };
    return {
      payload: new URLSearchParams(
        Object.entries(fields).map(([key, value]): [string, string] => [
          key,
          typeof value === 'string' ? value : (JSON.stringify(value) ?? ''),
        ]),
      ).toString(),
      type: 'application/x-www-form-urlencoded',
    };
  }
  return { payload: JSON.stringify(body) ?? 'null', type: 'application/json' };
}

export interface PropertyOptions {
  runs: number;
  /** Path ids to try; default: generated ones. */
  ids?: fc.Arbitrary<string>;
  /** A valid request that is slow (a whole-package import): never sent. */
  expensive?: (body: unknown) => boolean;
}

/** Generated JSON bodies: never a 5xx, and a rejected request writes nothing. */
export async function generatedBodies(
  context: () => HostileContext,
  endpoint: Endpoint,
  options: PropertyOptions & {
    bodies?: fc.Arbitrary<unknown>;
    /** How a body is sent; default JSON (form fields on the token endpoint). */
    encode?: (body: unknown) => { payload: string; type: string };
  },
): Promise<void> {
  const name = endpointName(endpoint);
  await fc.assert(
    fc.asyncProperty(options.bodies ?? hostileBody, options.ids ?? pathId, async (body, id) => {
      fc.pre(!options.expensive?.(body));
      const ctx = context();
      const before = await ctx.rowCounts();
      const { payload, type } = options.encode?.(body) ?? encodeBody(endpoint, body);
      const response =
        endpoint.method === 'GET'
          ? await send(ctx, endpoint, id, undefined, '')
          : await send(ctx, endpoint, id, payload, type);
      checkAnswer(endpoint, response, `${name} ${id} ${payload.slice(0, 200)}`);
      if (response.statusCode >= 400)
        assert.equal(await ctx.rowCounts(), before, `${name}: a rejected request wrote rows`);
    }),
    { numRuns: options.runs },
  );
}

/** The body Fastify hands the route for raw bytes, as far as the expensive check needs it. */
function parsedForCheck(payload: Buffer, type: string): unknown {
  if (payload.length === 0) return undefined;
  if (!type.startsWith('application/json')) return payload;
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return payload;
  }
}

/** Raw bytes under any content type: never a 5xx, and a rejected request writes nothing. */
export async function rawBytes(
  context: () => HostileContext,
  endpoint: Endpoint,
  options: PropertyOptions,
): Promise<void> {
  const name = endpointName(endpoint);
  await fc.assert(
    fc.asyncProperty(rawBody, contentType, options.ids ?? pathId, async (payload, type, id) => {
      fc.pre(!options.expensive?.(parsedForCheck(payload, type)));
      const ctx = context();
      const before = await ctx.rowCounts();
      const response = await send(ctx, endpoint, id, payload, type);
      checkAnswer(endpoint, response, `${name} ${type}`);
      if (response.statusCode >= 400) assert.equal(await ctx.rowCounts(), before);
    }),
    { numRuns: options.runs },
  );
}

/** Any malformed Authorization header on a bearer endpoint: 401 {"message":"Unauthorized"}, before the body. */
export async function malformedAuthorizationHeaders(
  context: () => HostileContext,
  endpoint: Endpoint,
  runs: number,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(malformedAuthorization, async (header) => {
      const response = await context().app.inject({
        method: endpoint.method,
        url: urlOf(endpoint, '1'),
        headers: { authorization: header, 'content-type': 'application/json' },
        payload: '{"not": "validated"',
      });
      assert.equal(response.statusCode, 401, `${header}: ${response.body}`);
      assert.deepEqual(response.json(), { message: 'Unauthorized' });
    }),
    { numRuns: runs },
  );
}

/** Arbitrary query strings: never a 5xx. `body` is sent along where a request without one is expensive. */
export async function queryStrings(
  context: () => HostileContext,
  endpoint: Endpoint,
  options: PropertyOptions & { body?: unknown },
): Promise<void> {
  const name = endpointName(endpoint);
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
      options.ids ?? fc.constant('1'),
      async (query, id) => {
        const ctx = context();
        const before = await ctx.rowCounts();
        const response = await send(
          ctx,
          endpoint,
          id,
          options.body === undefined ? undefined : JSON.stringify(options.body),
          options.body === undefined ? '' : 'application/json',
          {},
          `?${new URLSearchParams(query).toString()}`,
        );
        checkAnswer(endpoint, response, `${name} ?${JSON.stringify(query)}`);
        if (response.statusCode >= 400) assert.equal(await ctx.rowCounts(), before);
      },
    ),
    { numRuns: options.runs },
  );
}

/** Every path to a value inside `value` (objects and arrays), the root included. */
function valuePaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const paths = [prefix];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) paths.push(...valuePaths(item, [...prefix, index]));
  } else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) paths.push(...valuePaths(item, [...prefix, key]));
  return paths;
}

type Mutation =
  | { kind: 'set'; path: Array<string | number>; value: unknown }
  | { kind: 'delete'; path: Array<string | number> }
  | { kind: 'add'; path: Array<string | number>; key: string; value: unknown };

function applyMutation(body: unknown, mutation: Mutation): unknown {
  if (mutation.path.length === 0) {
    if (mutation.kind === 'set') return mutation.value;
    if (mutation.kind === 'delete') return undefined;
  }
  if (typeof body !== 'object' || body === null) return body;
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  const last = mutation.path.at(-1);
  const through = mutation.kind === 'add' ? mutation.path : mutation.path.slice(0, -1);
  for (const step of through) {
    const next = parent[step];
    if (typeof next !== 'object' || next === null) return copy;
    parent = next as Record<string | number, unknown>;
  }
  if (mutation.kind === 'add') parent[mutation.key] = mutation.value;
  else if (mutation.kind === 'set') parent[last!] = mutation.value;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last!];
  return copy;
}

/**
 * A valid body with one or two of its values replaced by a hostile one, removed, or given a sibling: each
 * request passes every check but the one it aims at, so the rules deep inside the operation are reached.
 */
export function mutatedBody(valid: unknown): fc.Arbitrary<unknown> {
  const paths = valuePaths(valid);
  const value = fc.oneof({ weight: 3, arbitrary: paymentValue }, { weight: 1, arbitrary: hostileValue });
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant('set' as const), path: fc.constantFrom(...paths), value }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom(...paths) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('add' as const),
        path: fc.constantFrom(...paths),
        key: fc.oneof(fc.constantFrom(...KNOWN_KEYS), fc.string({ maxLength: 10 })),
        value,
      }),
    },
  );
  return fc
    .array(mutation, { minLength: 1, maxLength: 2 })
    .map((mutations) => mutations.reduce<unknown>((body, step) => applyMutation(body, step), valid));
}

/** A valid query string with values replaced by hostile text, removed, or repeated. */
export function mutatedQuery(valid: Record<string, string>): fc.Arbitrary<string> {
  const text = paymentValue.filter((value): value is string => typeof value === 'string');
  const keys = Object.keys(valid);
  return fc
    .record({
      replace: fc.dictionary(fc.constantFrom(...keys), fc.oneof(text, fc.string({ maxLength: 20 })), {
        maxKeys: 2,
      }),
      remove: fc.subarray(keys, { maxLength: 1 }),
      repeat: fc.subarray(keys, { maxLength: 1 }),
    })
    .map(({ replace, remove, repeat }) => {
      const params = new URLSearchParams();
      for (const key of keys) {
        if (remove.includes(key)) continue;
        params.append(key, replace[key] ?? valid[key]!);
        if (repeat.includes(key)) params.append(key, valid[key]!);
      }
      return `?${params.toString()}`;
    });
}

/**
 * A valid body under a hostile Idempotency-Key (D14): a key that is not 1..255 printable ASCII is 422 naming
 * `Idempotency-Key` and writes nothing; with a valid key, a repeat replays the first answer
 * (`Idempotent-Replayed: true`) and writes nothing.
 */
export async function idempotencyKeyHeaders(
  context: () => HostileContext,
  endpoint: Endpoint,
  options: { runs: number; id: string; body: unknown },
): Promise<void> {
  const name = endpointName(endpoint);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const type = options.body === undefined ? '' : 'application/json';
  await fc.assert(
    fc.asyncProperty(idempotencyKeys, async (key) => {
      const ctx = context();
      const header = { 'idempotency-key': keyHeader(key) };
      const label = `${name} Idempotency-Key ${JSON.stringify(header['idempotency-key'].slice(0, 40))}`;
      const before = await ctx.rowCounts();
      const first = await send(ctx, endpoint, options.id, payload, type, header);
      checkAnswer(endpoint, first, label);
      if (!key.valid) {
        assert.equal(first.statusCode, 422, `${label}: ${first.body}`);
        const error = errorBody(first.body);
        assert.equal(error.code, 'VALIDATION_FAILED', label);
        assert.equal(error.field, 'Idempotency-Key', label);
        assert.equal(await ctx.rowCounts(), before, `${label}: a refused key wrote rows`);
        return;
      }
      // A 422 (or a 5xx) stores nothing: the key may be used again, and the request runs again.
      if (first.statusCode === 422) return;
      const afterFirst = await ctx.rowCounts();
      const repeat = await send(ctx, endpoint, options.id, payload, type, header);
      assert.equal(repeat.statusCode, first.statusCode, `${label}: ${repeat.body}`);
      assert.equal(repeat.body, first.body, label);
      assert.equal(repeat.headers['idempotent-replayed'], 'true', label);
      assert.equal(await ctx.rowCounts(), afterFirst, `${label}: a replay wrote rows`);
    }),
    { numRuns: options.runs },
  );
}

/** A valid query string, mutated: never a 5xx, and a rejected request writes nothing. */
export async function mutatedQueries(
  context: () => HostileContext,
  endpoint: Endpoint,
  options: { runs: number; valid: Record<string, string> },
): Promise<void> {
  const name = endpointName(endpoint);
  await fc.assert(
    fc.asyncProperty(mutatedQuery(options.valid), async (query) => {
      const ctx = context();
      const before = await ctx.rowCounts();
      const response = await send(ctx, endpoint, '1', undefined, '', {}, query);
      checkAnswer(endpoint, response, `${name}${query.slice(0, 200)}`);
      if (response.statusCode >= 400) assert.equal(await ctx.rowCounts(), before);
    }),
    { numRuns: options.runs },
  );
}
