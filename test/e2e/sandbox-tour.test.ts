// The integrator's tour of the sandbox, as a whole process and over HTTP only: `npm start` (the README's
// command, embedded PostgreSQL), a token for the credentials it prints, corridors and requirements,
// beneficiaries, quotes in both amount modes, transfers funded from the balance (topped up by a simulated
// bank deposit), by bank transfer and in crypto, a failing payout refunded, a sanctions hit reviewed by the
// operator (cleared once, confirmed once), every webhook verified with `standardwebhooks` and in sequence
// per resource, and the balances reconciled to the cent with the balance transactions (D19-D24).
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bodyOf, VALID } from '../beneficiaries/bodies.ts';
import {
  type HttpsReceiver,
  startHttpsReceiver,
  testCertificate,
  verifyDelivery,
} from '../helpers/https-receiver.ts';
import { type ServiceProcess, startNpmStart } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';

const ADMIN_KEY = 'tour-admin-key-0123456789abcdef';
const DE_CORRIDOR = 'cor_0000SANDBX0000000000000001'; // USD -> EUR, DE, bank_account
const USDC_MX_CORRIDOR = 'cor_0000SANDBX0000000000000012'; // USDC -> MXN, MX, bank_account
// The sandbox's magic values (docs/integrator/sandbox.md): this IBAN's payout fails `account_closed`,
// a name containing `Lookalike` hits the sandbox list.
const CLOSED_IBAN = 'DE70370400440532011111';
const LOOKALIKE = 'Lisa Lookalike';

// biome-ignore lint/suspicious/noExplicitAny: the tour reads answers as an integrator's untyped JSON, checking each field it uses
type Json = Record<string, any>;

interface Reply {
  status: number;
  headers: Headers;
  body: Json;
}

// ---- Money in minor units (BigInt), never floats ----

/** A decimal string as an integer and its number of decimals. */
function decimal(text: string): { units: bigint; scale: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  assert.ok(match, `${text} is a plain decimal string`);
  const fraction = match[3] ?? '';
  const units = BigInt(match[2]! + fraction);
  return { units: match[1] ? -units : units, scale: fraction.length };
}

/** An amount of a currency in minor units; the API always writes exactly the currency's decimals. */
function minor(amount: string, decimals: number): bigint {
  const { units, scale } = decimal(amount);
  assert.equal(scale, decimals, `${amount} has exactly ${decimals} decimals`);
  return units;
}

function formatMinor(units: bigint, decimals: number): string {
  const sign = units < 0n ? '-' : '';
  const digits = (units < 0n ? -units : units).toString().padStart(decimals + 1, '0');
  return decimals === 0
    ? `${sign}${digits}`
    : `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/**
 * A quote's fee and destination amount for a source amount, from the corridor's fees and the rate as shown
 * (docs/integrator/transfers.md): the fee rounded up, the destination amount rounded down.
 */
function priceOf(
  sourceMinor: bigint,
  corridor: Json,
  rate: string,
  sourceDecimals: number,
  destinationDecimals: number,
): { fee: bigint; destination: bigint } {
  const percent = decimal(corridor.fee_percent);
  const fee =
    minor(corridor.fee_fixed, sourceDecimals) +
    ceilDiv(sourceMinor * percent.units, 100n * 10n ** BigInt(percent.scale));
  const r = decimal(rate);
  const destination =
    ((sourceMinor - fee) * r.units * 10n ** BigInt(destinationDecimals)) /
    10n ** BigInt(sourceDecimals + r.scale);
  return { fee, destination };
}

// ---- The tour ----

describe('the sandbox tour through `npm start`, over HTTP only (D19-D24)', () => {
  let parent: string;
  let service: ServiceProcess;
  let receiver: HttpsReceiver;
  let base: string;
  let token: string;
  let secret: string;
  const decimalsOf = new Map<string, number>();
  const corridors = new Map<string, Json>();

  before(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'payment-service-tour-'));
    await chmod(parent, 0o755);
    receiver = await startHttpsReceiver();
    service = await startNpmStart({
      DATA_DIR: path.join(parent, 'data'),
      APP_ENV: 'sandbox',
      ADMIN_API_KEY: ADMIN_KEY,
      SANDBOX_STEP_DELAY_MS: '0',
      // The receiver listens on 127.0.0.1 with a certificate of the test's own CA.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CA_FILE: testCertificate().certPath,
    });
    base = service.baseUrl;
  });

  after(async () => {
    await service?.stop('SIGKILL');
    await receiver?.close();
    await rm(parent, { recursive: true, force: true });
  });

  async function call(
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const response = await fetch(`${base}${url}`, {
      method,
      headers: {
        ...(url.startsWith('/admin/') ? { authorization: `Bearer ${ADMIN_KEY}` } : {}),
        ...(url.startsWith('/api/') ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
  }

  /** A call that must answer `status`; its body. */
  async function send(
    status: number,
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Json> {
    const reply = await call(method, url, body, headers);
    assert.equal(reply.status, status, `${method} ${url}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  /** Every item of a search, page by page, oldest first. */
  async function searchAll(url: string, filters?: Json): Promise<Json[]> {
    const items: Json[] = [];
    for (let page = 1; ; page++) {
      const body = await send(200, 'POST', url, {
        ...(filters ? { filters } : {}),
        page,
        page_size: 100,
        sort_by: 'id',
        sort_direction: 'asc',
      });
      items.push(...body.items);
      if (items.length >= body.total || body.items.length === 0) return items;
    }
  }

  /** The received webhooks, verified, by `evt_` id (a repeat must carry the same body). */
  function receivedEvents(): Map<string, Json> {
    const events = new Map<string, Json>();
    for (const request of receiver.requests) {
      const payload = verifyDelivery(secret, request) as Json;
      const id = request.headers['webhook-id'] as string;
      assert.equal(payload.id, id, 'webhook-id is the event id of the body');
      const known = events.get(id);
      if (known) assert.deepEqual(payload, known, 'a repeated delivery carries the same event');
      events.set(id, payload);
    }
    return events;
  }

  /** Waits for the webhook `type` about `objectId`, as an integrator's endpoint would; its payload. */
  function webhook(type: string, objectId: string): Promise<Json> {
    return waitUntil(
      () =>
        [...receivedEvents().values()].find(
          (event) => event.type === type && event.data.object.id === objectId,
        ),
      `webhook ${type} for ${objectId}`,
    );
  }

  const amountOf = (currency: string, amount: string) => minor(amount, decimalsOf.get(currency)!);

  async function balances(): Promise<Map<string, { available: bigint; held: bigint }>> {
    const list = (await send(200, 'GET', '/api/v1/balances')) as unknown as Json[];
    return new Map(
      list.map((entry) => [
        entry.currency,
        {
          available: amountOf(entry.currency, entry.available),
          held: amountOf(entry.currency, entry.held),
        },
      ]),
    );
  }

  async function quote(corridorId: string, amount: Json): Promise<Json> {
    const created = await send(201, 'POST', '/api/v1/transfers/quotes', {
      corridor_id: corridorId,
      ...amount,
    });
    const corridor = corridors.get(corridorId)!;
    const sd = decimalsOf.get(corridor.source_currency)!;
    const dd = decimalsOf.get(corridor.destination_currency)!;
    const source = minor(created.source_amount, sd);
    const price = priceOf(source, corridor, created.rate, sd, dd);
    assert.equal(created.fee_amount, formatMinor(price.fee, sd), 'the fee follows from the corridor');
    if (created.amount_mode === 'source') {
      assert.equal(created.destination_amount, formatMinor(price.destination, dd));
    } else {
      // The smallest source amount that pays at least the destination amount asked for.
      const asked = minor(created.destination_amount, dd);
      assert.ok(price.destination >= asked, 'the source amount pays the destination amount');
      const less = priceOf(source - 1n, corridor, created.rate, sd, dd);
      assert.ok(less.destination < asked, 'one minor unit less would not');
    }
    return created;
  }

  async function confirm(quoteId: string, body: Json, key: string): Promise<Json> {
    return send(201, 'POST', `/api/v1/transfers/quotes/${quoteId}/confirm`, body, {
      'idempotency-key': key,
    });
  }

  // What the tour made, for the webhooks and the ledger at the end.
  const beneficiaries: Record<string, Json> = {};
  const transfers: Record<string, Json> = {};
  let topUp: Json;

  it('starts with npm start and prints the sandbox credentials; they get a token', async () => {
    const banner = service.stdout();
    assert.match(
      banner,
      /> node --max-semi-space-size=8 --heap-growing-percent=100 src\/main\.ts serve/,
      'npm ran the start script',
    );
    const field = (name: string) => {
      const match = new RegExp(`^\\s+${name}\\s+: (\\S+)$`, 'm').exec(banner);
      assert.ok(match, `the banner prints ${name}`);
      return match[1]!;
    };
    const tokenEndpoint = field('token endpoint');
    assert.equal(tokenEndpoint, `${base}/realms/sandbox/protocol/openid-connect/token`);
    const response = await fetch(tokenEndpoint, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: field('client_id'),
        client_secret: field('client_secret'),
      }),
    });
    assert.equal(response.status, 200);
    const issued = (await response.json()) as Json;
    assert.equal(issued.token_type, 'Bearer');
    assert.equal(issued.expires_in, 300);
    for (const scope of ['reference:read', 'beneficiaries:write', 'transfers:write', 'payments:write']) {
      assert.ok(issued.scope.split(' ').includes(scope), `the sandbox client holds ${scope}`);
    }
    token = issued.access_token;
  });

  it('subscribes an https endpoint to every event type', async () => {
    const types = (await send(200, 'GET', '/api/v1/webhooks/event-types')) as unknown as Json[];
    const codes = types.map((type) => type.code as string);
    for (const area of ['beneficiary', 'screening', 'deposit', 'payout', 'transfer']) {
      assert.ok(
        codes.some((code) => code.startsWith(`${area}.`)),
        `${area} events are published`,
      );
    }
    const created = await send(201, 'POST', '/api/v1/webhooks/subscriptions', {
      endpoint_url: `${receiver.origin}/webhooks`,
      event_type_codes: codes,
    });
    assert.equal(created.status, 'pending_verification');
    assert.match(created.signing_secret, /^whsec_[0-9a-f]{64}$/);
    secret = created.signing_secret;
    const active = await send(200, 'PATCH', `/api/v1/webhooks/subscriptions/${created.id}`, {
      status: 'active',
    });
    assert.equal(active.status, 'active');
  });

  it('lists the corridors, the currencies and what a destination requires', async () => {
    for (const currency of (await send(200, 'GET', '/api/v1/fx/currencies')) as unknown as Json[]) {
      decimalsOf.set(currency.code, currency.decimals);
    }
    assert.equal(decimalsOf.get('USD'), 2);
    assert.equal(decimalsOf.get('USDC'), 6);
    const listed = await searchAll('/api/v1/corridors/search', { status: ['active'] });
    assert.equal(listed.length, 13);
    for (const corridor of listed) corridors.set(corridor.id, corridor);
    assert.deepEqual(await send(200, 'GET', `/api/v1/corridors/${DE_CORRIDOR}`), corridors.get(DE_CORRIDOR));
    assert.deepEqual(
      [
        corridors.get(USDC_MX_CORRIDOR)!.source_currency,
        corridors.get(USDC_MX_CORRIDOR)!.destination_country,
      ],
      ['USDC', 'MX'],
    );

    for (const key of ['DE', 'MX'] as const) {
      const body = VALID[key];
      const requirements = await send(
        200,
        'GET',
        `/api/v1/beneficiaries/requirements?destination_country=${body.destination_country}` +
          `&destination_currency=${body.destination_currency}&payout_method=${body.payout_method}`,
      );
      const required = (requirements.fields as Json[]).filter((f) => f.required).map((f) => f.name);
      assert.ok(required.includes(key === 'DE' ? 'account.iban' : 'account.clabe'));
      // The bodies the tour sends carry every field the requirements call required.
      for (const name of required) {
        const value = name
          .split('.')
          .reduce((object: Json | undefined, part: string) => object?.[part], body as Json);
        assert.ok(value !== undefined, `${key} body has ${name}`);
      }
    }
  });

  it('creates beneficiaries: clean names are active, the magic name is held in review', async () => {
    const create = async (label: string, body: Json, status: string) => {
      const created = await send(201, 'POST', '/api/v1/beneficiaries', body, {
        'idempotency-key': `beneficiary-${label}`,
      });
      assert.equal(created.status, status, label);
      beneficiaries[label] = created;
    };
    await create('anna', bodyOf('DE'), 'active');
    await create('jose', bodyOf('MX'), 'active');
    await create('closed', bodyOf('DE', { name: 'Carl Closed', account: { iban: CLOSED_IBAN } }), 'active');
    await create('lookalike', bodyOf('DE', { name: LOOKALIKE }), 'in_review');
    assert.equal(beneficiaries.anna!.account.iban, 'DE89370400440532013000', 'the IBAN is normalised');
    assert.equal(beneficiaries.anna!.bank.name, 'Commerzbank');
  });

  it('quotes both amount modes, every amount recomputable from the rate shown', async () => {
    const bySource = await quote(DE_CORRIDOR, { source_amount: '100.00' });
    assert.deepEqual(
      [bySource.amount_mode, bySource.fee_amount, bySource.rate, bySource.destination_amount],
      ['source', '1.50', '0.91678', '90.30'],
      'the README example',
    );
    const byDestination = await quote(DE_CORRIDOR, { destination_amount: '500.00' });
    assert.equal(byDestination.amount_mode, 'destination');
    assert.equal(byDestination.destination_amount, '500.00');
    transfers.balance = { quote: bySource };
    transfers.bank = { quote: byDestination };
  });

  it('tops the balance up with a simulated bank deposit', async () => {
    const before = (await balances()).get('USD')!.available;
    const deposit = await send(
      201,
      'POST',
      '/api/v1/payments/deposits',
      { currency: 'USD', method: 'bank_transfer', expected_amount: '250.00' },
      { 'idempotency-key': 'top-up-deposit' },
    );
    assert.equal(deposit.status, 'pending');
    assert.equal(deposit.instructions.type, 'bank_transfer');
    assert.equal(deposit.instructions.amount, '250.00');
    const received = await send(200, 'POST', `/api/v1/sandbox/deposits/${deposit.id}/receive`, {});
    assert.deepEqual([received.status, received.received_amount], ['received', '250.00']);
    await webhook('deposit.received', deposit.id);
    assert.equal((await balances()).get('USD')!.available, before + 25_000n);
    topUp = received;
  });

  it('a balance-funded transfer completes by itself; a repeated confirm replays the first', async () => {
    const { quote: q } = transfers.balance!;
    const body = {
      beneficiary_id: beneficiaries.anna!.id,
      funding_method: 'balance',
      reference: 'Invoice 1',
    };
    const created = await confirm(q.id, body, 'transfer-balance');
    assert.deepEqual([created.status, created.deposit_instructions], ['processing', null]);
    const again = await call('POST', `/api/v1/transfers/quotes/${q.id}/confirm`, body, {
      'idempotency-key': 'transfer-balance',
    });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, created);

    await webhook('transfer.completed', created.id);
    const done = await send(200, 'GET', `/api/v1/transfers/${created.id}`);
    assert.equal(done.status, 'completed');
    assert.deepEqual(
      [done.payout.status, done.payout.currency, done.payout.amount],
      ['completed', 'EUR', q.destination_amount],
    );
    transfers.balance = { ...transfers.balance, transfer: done };
  });

  it('a bank-transfer-funded transfer waits for its deposit, then completes once the sandbox funds it', async () => {
    const { quote: q } = transfers.bank!;
    const created = await confirm(
      q.id,
      { beneficiary_id: beneficiaries.anna!.id, funding_method: 'bank_transfer' },
      'transfer-bank',
    );
    assert.equal(created.status, 'awaiting_deposit');
    assert.equal(created.deposit_instructions.type, 'bank_transfer');
    assert.equal(created.deposit_instructions.amount, q.source_amount);
    assert.equal(created.deposit_instructions.reference, created.deposit.instructions.reference);
    const funded = await send(200, 'POST', `/api/v1/sandbox/transfers/${created.id}/fund`, {});
    assert.deepEqual(
      [funded.status, funded.deposit.status, funded.deposit.received_amount],
      ['processing', 'received', q.source_amount],
    );
    await webhook('transfer.completed', created.id);
    const done = await send(200, 'GET', `/api/v1/transfers/${created.id}`);
    assert.deepEqual([done.status, done.payout.amount], ['completed', '500.00']);
    transfers.bank = { ...transfers.bank, transfer: done };
  });

  it('a crypto-funded transfer completes once its address receives the deposit', async () => {
    const q = await quote(USDC_MX_CORRIDOR, { source_amount: '300.000000' });
    const created = await confirm(
      q.id,
      { beneficiary_id: beneficiaries.jose!.id, funding_method: 'crypto', network: 'ethereum' },
      'transfer-crypto',
    );
    assert.equal(created.status, 'awaiting_deposit');
    const instructions = created.deposit_instructions;
    assert.deepEqual(
      [instructions.type, instructions.network, instructions.asset, instructions.amount],
      ['crypto', 'ethereum', 'USDC', '300.000000'],
    );
    assert.match(instructions.address, /^0x[0-9a-fA-F]{40}$/);
    // The address is the transfer's own, one of the organisation's deposit addresses.
    const addresses = await send(200, 'POST', '/api/v1/crypto/deposit-addresses/search', {
      search: instructions.address,
    });
    assert.deepEqual(
      addresses.items.map((item: Json) => [item.address, item.network, item.asset, item.status]),
      [[instructions.address, 'ethereum', 'USDC', 'active']],
    );
    const deposit = await send(201, 'POST', '/api/v1/sandbox/crypto/deposits', {
      address: instructions.address,
      asset: 'USDC',
      amount: '300.000000',
      network: 'ethereum',
    });
    assert.deepEqual([deposit.status, deposit.transfer_id], ['detected', created.id]);
    await webhook('transfer.completed', created.id);
    const done = await send(200, 'GET', `/api/v1/transfers/${created.id}`);
    assert.deepEqual(
      [done.status, done.deposit.status, done.payout.currency, done.payout.amount],
      ['completed', 'received', 'MXN', q.destination_amount],
    );
    transfers.crypto = { quote: q, transfer: done, address: addresses.items[0] };
  });

  it('a payout that fails refunds the transfer: the source amount is back on the balance', async () => {
    const before = (await balances()).get('USD')!.available;
    const q = await quote(DE_CORRIDOR, { source_amount: '150.00' });
    const created = await confirm(
      q.id,
      { beneficiary_id: beneficiaries.closed!.id, funding_method: 'balance' },
      'transfer-closed',
    );
    assert.equal(created.status, 'processing');
    await webhook('transfer.refunded', created.id);
    const done = await send(200, 'GET', `/api/v1/transfers/${created.id}`);
    assert.deepEqual(
      [done.status, done.status_reason, done.payout.status, done.payout.failure_reason],
      ['refunded', 'payout failed: account_closed', 'failed', 'account_closed'],
    );
    assert.equal((await balances()).get('USD')!.available, before);
    transfers.refunded = { quote: q, transfer: done };
  });

  it('a sanctions hit: the operator clears the beneficiary, then clears one transfer and rejects another', async () => {
    const held = beneficiaries.lookalike!;
    const review = (screeningId: string, decision: string) =>
      send(200, 'POST', `/admin/v1/screenings/${screeningId}/review`, {
        decision,
        note: `tour: ${decision}`,
      });
    const screening = await send(200, 'GET', `/api/v1/sanctions/screenings/${held.screening_id}`);
    assert.deepEqual(
      [screening.match_status, screening.source_object_type, screening.source_object_id],
      ['potential_match', 'beneficiary', held.id],
    );
    assert.equal(screening.hits[0].list, 'sandbox');

    const first = await quote(DE_CORRIDOR, { source_amount: '120.00' });
    const refused = await call(
      'POST',
      `/api/v1/transfers/quotes/${first.id}/confirm`,
      { beneficiary_id: held.id, funding_method: 'balance' },
      { 'idempotency-key': 'transfer-held-early' },
    );
    assert.deepEqual([refused.status, refused.body.code], [400, 'BENEFICIARY_NOT_ACTIVE']);

    await review(held.screening_id, 'cleared');
    await webhook('beneficiary.activated', held.id);
    assert.equal((await send(200, 'GET', `/api/v1/beneficiaries/${held.id}`)).status, 'active');

    // Confirm screens the beneficiary again: the same name hits again and holds the transfer.
    const cleared = await confirm(
      first.id,
      { beneficiary_id: held.id, funding_method: 'balance' },
      'transfer-held',
    );
    assert.deepEqual([cleared.status, cleared.payout], ['in_review', null]);
    const transferScreening = await send(200, 'GET', `/api/v1/sanctions/screenings/${cleared.screening_id}`);
    assert.deepEqual(
      [
        transferScreening.match_status,
        transferScreening.source_object_type,
        transferScreening.source_object_id,
      ],
      ['potential_match', 'transfer', cleared.id],
    );
    await review(cleared.screening_id, 'cleared');
    await webhook('transfer.completed', cleared.id);
    assert.equal((await send(200, 'GET', `/api/v1/transfers/${cleared.id}`)).status, 'completed');
    transfers.cleared = { quote: first, transfer: await send(200, 'GET', `/api/v1/transfers/${cleared.id}`) };

    const before = (await balances()).get('USD')!.available;
    const second = await quote(DE_CORRIDOR, { source_amount: '80.00' });
    const rejected = await confirm(
      second.id,
      { beneficiary_id: held.id, funding_method: 'balance' },
      'transfer-rejected',
    );
    assert.equal(rejected.status, 'in_review');
    assert.equal(
      (await balances()).get('USD')!.available,
      before - amountOf('USD', second.source_amount),
      'balance funding is taken while the transfer is held',
    );
    await review(rejected.screening_id, 'confirmed_match');
    await webhook('transfer.rejected', rejected.id);
    const done = await send(200, 'GET', `/api/v1/transfers/${rejected.id}`);
    assert.deepEqual(
      [done.status, done.status_reason, done.payout],
      ['rejected', 'the beneficiary matched a sanctions list', null],
    );
    assert.equal((await balances()).get('USD')!.available, before, 'the money is back');
    transfers.rejected = { quote: second, transfer: done };
  });

  it('every webhook verifies with standardwebhooks, and each resource has its sequence of events', async () => {
    // The API's record of every event (oldest first) is what the endpoint must have received.
    const events = await searchAll('/api/v1/webhooks/events/search');
    const received = await waitUntil(() => {
      const byId = receivedEvents();
      return events.every((event) => byId.has(event.public_id)) && byId;
    }, 'every event delivered');
    assert.equal(received.size, events.length, 'nothing was received that is not an event');
    for (const request of receiver.requests) {
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/webhooks');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers['user-agent'], 'payment-service-webhooks/1.0');
      assert.match(request.headers['x-webhook-delivery-id'] as string, /^dlv_/);
    }

    // Per resource: "type previous_status->status", in the order the events were made.
    const sequences = new Map<string, string[]>();
    for (const event of events) {
      const payload = received.get(event.public_id)!;
      assert.equal(payload.type, event.event_type_code);
      const object = payload.data.object;
      assert.equal(object.id, event.source_object_id);
      const step = `${payload.type} ${payload.data.previous_status}->${object.status ?? object.match_status}`;
      sequences.set(object.id, [...(sequences.get(object.id) ?? []), step]);
    }

    const expected = new Map<string, string[]>();
    const screeningCompleted = (id: string, result: string) =>
      expected.set(id, [`screening.completed null->${result}`]);
    const screeningResolved = (id: string, decision: string) =>
      expected.set(id, [
        'screening.completed null->potential_match',
        `screening.resolved potential_match->${decision}`,
      ]);
    for (const label of ['anna', 'jose', 'closed']) {
      const beneficiary = beneficiaries[label]!;
      expected.set(beneficiary.id, [
        'beneficiary.created null->active',
        'beneficiary.activated null->active',
      ]);
      screeningCompleted(beneficiary.screening_id, 'no_match');
    }
    // The transfer review that confirmed its name blocked it too (D18).
    expected.set(beneficiaries.lookalike!.id, [
      'beneficiary.created null->in_review',
      'beneficiary.in_review null->in_review',
      'beneficiary.activated in_review->active',
      'beneficiary.blocked active->blocked',
    ]);
    screeningResolved(beneficiaries.lookalike!.screening_id, 'cleared');
    expected.set(topUp.id, ['deposit.created null->pending', 'deposit.received pending->received']);
    const payout = (transfer: Json, end: 'completed' | 'failed') =>
      expected.set(transfer.payout.id, [
        'payout.created null->pending',
        'payout.processing pending->processing',
        `payout.${end} processing->${end}`,
      ]);
    // transfer.created, then the first status's own event when it has a code (D8: not awaiting_deposit).
    const confirmedAs = (first: string) =>
      first === 'awaiting_deposit'
        ? [`transfer.created null->${first}`]
        : [`transfer.created null->${first}`, `transfer.${first} null->${first}`];
    const completedAfter = (first: string) => [
      ...confirmedAs(first),
      `transfer.processing ${first}->processing`,
      'transfer.completed processing->completed',
    ];

    const balance = transfers.balance!.transfer;
    expected.set(balance.id, [...confirmedAs('processing'), 'transfer.completed processing->completed']);
    screeningCompleted(balance.screening_id, 'no_match');
    payout(balance, 'completed');

    const bank = transfers.bank!.transfer;
    expected.set(bank.id, completedAfter('awaiting_deposit'));
    expected.set(bank.deposit.id, ['deposit.created null->pending', 'deposit.received pending->received']);
    screeningCompleted(bank.screening_id, 'no_match');
    payout(bank, 'completed');

    const crypto = transfers.crypto!.transfer;
    expected.set(crypto.id, completedAfter('awaiting_deposit'));
    expected.set(crypto.deposit.id, [
      'deposit.created null->pending',
      'deposit.detected pending->detected',
      'deposit.received detected->received',
    ]);
    expected.set(transfers.crypto!.address.id, ['deposit_address.created null->active']);
    screeningCompleted(crypto.screening_id, 'no_match');
    payout(crypto, 'completed');

    const refunded = transfers.refunded!.transfer;
    expected.set(refunded.id, [
      ...confirmedAs('processing'),
      'transfer.refunding processing->refunding',
      'transfer.refunded refunding->refunded',
    ]);
    screeningCompleted(refunded.screening_id, 'no_match');
    payout(refunded, 'failed');

    const cleared = transfers.cleared!.transfer;
    expected.set(cleared.id, completedAfter('in_review'));
    screeningResolved(cleared.screening_id, 'cleared');
    payout(cleared, 'completed');

    const rejected = transfers.rejected!.transfer;
    expected.set(rejected.id, [...confirmedAs('in_review'), 'transfer.rejected in_review->rejected']);
    screeningResolved(rejected.screening_id, 'confirmed_match');

    assert.deepEqual(Object.fromEntries(sequences), Object.fromEntries(expected));
  });

  it('balances and balance transactions reconcile to the cent', async () => {
    const opening = ['USD', 'EUR', 'GBP', 'USDC'].map((currency) => ({
      key: 'organisation',
      type: 'top_up',
      currency,
      amount: 1_000_000n * 10n ** BigInt(decimalsOf.get(currency)!),
    }));
    // The ledger the tour should have written, in order: funding takes the source amount (the net to the
    // transfer, the fee apart); a refund gives both back; a deposit of a transfer is credited first.
    const entries = [...opening];
    const add = (key: string, type: string, currency: string, amount: bigint) =>
      entries.push({ key, type, currency, amount });
    const funding = (transfer: Json) => {
      const source = amountOf(transfer.source_currency, transfer.source_amount);
      const fee = amountOf(transfer.source_currency, transfer.fee_amount);
      add(transfer.id, 'transfer_funding', transfer.source_currency, -(source - fee));
      add(transfer.id, 'fee', transfer.source_currency, -fee);
    };
    const refund = (transfer: Json) => {
      const source = amountOf(transfer.source_currency, transfer.source_amount);
      const fee = amountOf(transfer.source_currency, transfer.fee_amount);
      add(transfer.id, 'transfer_refund', transfer.source_currency, source - fee);
      add(transfer.id, 'transfer_refund', transfer.source_currency, fee);
    };
    const deposited = (transfer: Json) =>
      add(
        transfer.deposit.id,
        'deposit',
        transfer.source_currency,
        amountOf(transfer.source_currency, transfer.deposit.received_amount),
      );
    add(topUp.id, 'deposit', 'USD', amountOf('USD', topUp.received_amount));
    funding(transfers.balance!.transfer);
    deposited(transfers.bank!.transfer);
    funding(transfers.bank!.transfer);
    deposited(transfers.crypto!.transfer);
    funding(transfers.crypto!.transfer);
    funding(transfers.refunded!.transfer);
    refund(transfers.refunded!.transfer);
    funding(transfers.cleared!.transfer);
    funding(transfers.rejected!.transfer);
    refund(transfers.rejected!.transfer);

    const rows = await searchAll('/api/v1/balances/transactions/search');
    const show = (entry: { key: string; type: string; currency: string; amount: bigint }) =>
      `${entry.key} ${entry.type} ${formatMinor(entry.amount, decimalsOf.get(entry.currency)!)} ${entry.currency}`;
    assert.deepEqual(
      rows.map((row) =>
        show({
          key: row.resource_type === 'organisation' ? 'organisation' : row.resource_id,
          type: row.type,
          currency: row.currency,
          amount: amountOf(row.currency, row.amount),
        }),
      ),
      entries.map(show),
    );

    const expectedBalance = new Map<string, bigint>();
    for (const entry of entries) {
      expectedBalance.set(entry.currency, (expectedBalance.get(entry.currency) ?? 0n) + entry.amount);
    }
    // The tour's net effect: the deposit in, the two transfers that stayed paid out; the rest came back.
    assert.equal(
      expectedBalance.get('USD'),
      1_000_000_00n +
        amountOf('USD', topUp.received_amount) -
        amountOf('USD', transfers.balance!.transfer.source_amount) -
        amountOf('USD', transfers.cleared!.transfer.source_amount),
    );

    // Each row's balance_after is the running sum of its currency; the last one is the balance.
    const running = new Map<string, bigint>();
    for (const row of rows) {
      const sum = (running.get(row.currency) ?? 0n) + amountOf(row.currency, row.amount);
      running.set(row.currency, sum);
      assert.equal(amountOf(row.currency, row.balance_after), sum, `balance_after of ${row.id}`);
    }
    const actual = await balances();
    assert.deepEqual([...actual.keys()].sort(), [...expectedBalance.keys()].sort());
    for (const [currency, amount] of expectedBalance) {
      assert.equal(actual.get(currency)!.available, amount, `${currency} available`);
      assert.equal(running.get(currency), amount, `${currency}: the sum of its transactions`);
      assert.equal(actual.get(currency)!.held, 0n, `${currency}: nothing held once every payout ended`);
    }
  });

  it('stops on Ctrl-C (SIGINT to the process group) and leaves nothing running', async () => {
    await service.stop('SIGINT');
    assert.match(service.stdout(), /"msg":"stopped"/);
    assert.throws(
      () => process.kill(-service.child.pid!, 0),
      { code: 'ESRCH' },
      'no process of the group (npm, sh, the server, its PostgreSQL) is left',
    );
    assert.doesNotMatch(service.stdout(), /second signal|shutdown timed out/);
  });
});
