// SSRF rules (D10): every destination is resolved and refused if any address is not public; the
// connection dials the checked address; WEBHOOK_ALLOW_PRIVATE_TARGETS=true lifts the rule.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import ipaddr from 'ipaddr.js';
import { createDeliveryAgent, type SendResult, sendWebhook } from '../../src/webhooks/delivery/send.ts';
import {
  blockedRange,
  describeRange,
  type LookupFunction,
  refusedLiteral,
} from '../../src/webhooks/delivery/ssrf.ts';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.ts';
import {
  attemptsOf,
  createOrganisation,
  createSubscription,
  deliveryContext,
  publish,
  startTestWorker,
  waitForEventStatus,
} from './fixtures.ts';

const fakeDns =
  (answers: Record<string, string[]>, calls: string[] = []): LookupFunction =>
  async (hostname) => {
    calls.push(hostname);
    const addresses = answers[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('SSRF rules', () => {
  let receiver: HttpsReceiver;

  before(async () => {
    receiver = await startHttpsReceiver();
  });
  after(async () => {
    await receiver.close();
  });

  async function send(url: string, options: { allowPrivate?: boolean; lookup?: LookupFunction } = {}) {
    const agent = createDeliveryAgent({
      timeoutMs: 2_000,
      allowPrivateTargets: options.allowPrivate ?? false,
      ca: testCertificate().cert,
      lookup: options.lookup ?? fakeDns({}),
    });
    try {
      return await sendWebhook(agent, {
        url,
        headers: { 'content-type': 'application/json' },
        body: '{}',
        timeoutMs: 2_000,
      });
    } finally {
      await agent.destroy();
    }
  }

  const refused = (result: SendResult, pattern: RegExp) => {
    assert.equal(result.kind, 'error', JSON.stringify(result));
    assert.match((result as { reason: string }).reason, pattern);
  };

  it('should classify every special-purpose range as blocked and public unicast as allowed', () => {
    const blocked: Record<string, string> = {
      '127.0.0.1': 'loopback',
      '127.255.0.9': 'loopback',
      '10.1.2.3': 'private',
      '172.16.5.4': 'private',
      '192.168.1.1': 'private',
      '169.254.169.254': 'linkLocal',
      '100.64.0.1': 'carrierGradeNat',
      '224.0.0.1': 'multicast',
      '240.0.0.1': 'reserved',
      '192.0.2.10': 'reserved',
      '0.0.0.0': 'unspecified',
      '255.255.255.255': 'broadcast',
      '::1': 'loopback',
      '::': 'unspecified',
      'fd00::1': 'uniqueLocal',
      'fc12:3456::1': 'uniqueLocal',
      'fe80::1': 'linkLocal',
      'ff02::1': 'multicast',
      '::ffff:127.0.0.1': 'ipv4Mapped',
      '::ffff:10.0.0.1': 'ipv4Mapped',
      '::ffff:8.8.8.8': 'ipv4Mapped',
      '2001:db8::1': 'reserved',
      '::7f00:1': 'ipv4Compatible',
      '::a00:1': 'ipv4Compatible',
      '::8.8.8.8': 'ipv4Mapped', // ipaddr.js reads dotted ::a.b.c.d as mapped: blocked either way
      '::ffff:7f00:1': 'ipv4Mapped',
    };
    for (const [address, range] of Object.entries(blocked)) {
      assert.equal(blockedRange(address), range, address);
    }
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '2606:4700:4700::1111',
      '2a00:1450:4001::200e',
    ]) {
      assert.equal(blockedRange(address), undefined, address);
    }
  });

  it('should name every range ipaddr.js reports in words, not by its identifier', () => {
    const ranges = [ipaddr.IPv4, ipaddr.IPv6].flatMap((kind) =>
      Object.keys((kind.prototype as unknown as { SpecialRanges: Record<string, unknown> }).SpecialRanges),
    );
    for (const range of [...ranges, 'ipv4Compatible', 'invalid']) {
      assert.doesNotMatch(describeRange(range), /special-purpose/, `${range} has a description`);
      assert.match(describeRange(range), /^(an? |not )[a-z0-9 ().-]*(address)$/i, range);
    }
    assert.equal(describeRange('ipv4Mapped'), 'an IPv4-mapped address');
    assert.equal(describeRange('loopback'), 'a loopback address');
    assert.equal(describeRange('uniqueLocal'), 'a unique local address');
  });

  it('should tell a refused IP literal host from a public one and from a name', () => {
    assert.equal(refusedLiteral('127.0.0.1'), '127.0.0.1 is a loopback address');
    assert.equal(refusedLiteral('[::ffff:7f00:1]'), '::ffff:7f00:1 is an IPv4-mapped address');
    assert.equal(refusedLiteral('[::7f00:1]'), '::7f00:1 is an IPv4-compatible address');
    assert.equal(refusedLiteral('[fe80::1]'), 'fe80::1 is a link-local address');
    assert.equal(refusedLiteral('93.184.216.34'), undefined);
    assert.equal(refusedLiteral('[2606:4700:4700::1111]'), undefined);
    assert.equal(refusedLiteral('localhost'), undefined, 'names are checked when resolved');
  });

  for (const [label, host] of [
    ['loopback', '127.0.0.1'],
    ['private', '10.0.0.1'],
    ['private (192.168/16)', '192.168.0.10'],
    ['link-local (cloud metadata)', '169.254.169.254'],
    ['CGNAT', '100.64.0.1'],
    ['IPv6 loopback', '[::1]'],
    ['IPv6 ULA', '[fd00::1]'],
    ['IPv4-mapped IPv6', '[::ffff:127.0.0.1]'],
    ['IPv4-mapped IPv6, canonical hex form', '[::ffff:7f00:1]'],
    ['IPv4-compatible IPv6 of loopback (::127.0.0.1)', '[::7f00:1]'],
    ['IPv4-compatible IPv6 of loopback, dotted', '[::127.0.0.1]'],
    ['IPv4-compatible IPv6 of a private address (::10.0.0.1)', '[::a00:1]'],
    ['unspecified', '0.0.0.0'],
  ] as const) {
    it(`should refuse an IP literal destination: ${label}`, async () => {
      const before = receiver.requests.length;
      const result = await send(`https://${host}:${receiver.port}/hook`);
      refused(result, /^destination refused: \S+ is an? [\w ().-]+ address$/);
      assert.doesNotMatch((result as { reason: string }).reason, /ipv4|uniqueLocal|linkLocal|carrierGrade/);
      assert.equal(receiver.requests.length, before);
    });
  }

  it('should refuse a hostname that resolves to a private address', async () => {
    const result = await send(`https://hook.example:${receiver.port}/hook`, {
      lookup: fakeDns({ 'hook.example': ['10.20.30.40'] }),
    });
    refused(result, /hook\.example resolves to 10\.20\.30\.40, a private address/);
  });

  it('should refuse a hostname when ANY of its addresses is blocked', async () => {
    const result = await send(`https://hook.example:${receiver.port}/hook`, {
      lookup: fakeDns({ 'hook.example': ['93.184.216.34', '127.0.0.1'] }),
    });
    refused(result, /resolves to 127\.0\.0\.1, a loopback address/);
    const v6 = await send(`https://hook.example:${receiver.port}/hook`, {
      lookup: fakeDns({ 'hook.example': ['2606:4700:4700::1111', 'fd12::7'] }),
    });
    refused(v6, /resolves to fd12::7, a unique local address/);
    const compatible = await send(`https://hook.example:${receiver.port}/hook`, {
      lookup: fakeDns({ 'hook.example': ['::7f00:1'] }),
    });
    refused(compatible, /resolves to ::7f00:1, an IPv4-compatible address/);
  });

  for (const address of ['::7f00:1', '::a00:1', '::ffff:7f00:1']) {
    it(`should refuse a hostname that resolves to ${address}, as DNS writes IPv4 inside IPv6`, async () => {
      const before = receiver.requests.length;
      const result = await send(`https://hook.example:${receiver.port}/hook`, {
        lookup: fakeDns({ 'hook.example': [address] }),
      });
      refused(
        result,
        new RegExp(`resolves to ${address.replaceAll('.', '\\.')}, an IPv4-(compatible|mapped) address`),
      );
      assert.equal(receiver.requests.length, before);
    });
  }

  it('should refuse the whole ::/96 block, whatever the embedded IPv4 address', () => {
    for (const address of ['::7f00:1', '::a00:1', '::808:808', '::1:0', '::ffff', '::100:0']) {
      assert.ok(blockedRange(address) !== undefined, address);
    }
    // The first 96 bits not all zero: an ordinary public address.
    assert.equal(blockedRange('1::7f00:1'), undefined);
  });

  it('should record a DNS failure as a failure without a status code', async () => {
    const result = await send('https://nowhere.example/hook', { lookup: fakeDns({}) });
    refused(result, /DNS lookup failed: host not found/);
  });

  it('should dial the address it checked, once, and verify TLS against the host name', async () => {
    // hook.example exists only in the injected resolver: reaching the receiver proves that the connection
    // used the checked address rather than resolving again.
    const calls: string[] = [];
    const before = receiver.requests.length;
    const result = await send(`https://hook.example:${receiver.port}/dialled`, {
      allowPrivate: true,
      lookup: fakeDns({ 'hook.example': ['127.0.0.1'] }, calls),
    });
    assert.equal(result.kind, 'response', JSON.stringify(result));
    assert.deepEqual(calls, ['hook.example']);
    const request = receiver.requests[before];
    assert.equal(request?.path, '/dialled');
    assert.equal(request?.headers.host, `hook.example:${receiver.port}`);
  });

  it('should refuse a plain http endpoint', async () => {
    refused(await send(`http://127.0.0.1:${receiver.port}/`, { allowPrivate: true }), /must use https/);
  });

  it('should record a refused destination as a failed attempt through the worker', async () => {
    const ctx = await deliveryContext({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_TIMEOUT_MS: '1000' });
    const worker = startTestWorker(ctx.deps, {
      transport: { lookup: fakeDns({ 'internal.example': ['10.1.1.1'] }) },
    });
    try {
      const organisationId = await createOrganisation(ctx.deps.pool);
      await createSubscription(ctx.deps, {
        organisationId,
        endpointUrl: `https://internal.example:${receiver.port}/hook`,
        maxRetries: 0,
      });
      const before = receiver.requests.length;
      const event = await publish(ctx.deps, organisationId);
      await waitForEventStatus(ctx.deps.pool, event.id, ['dead_letter']);
      const [attempt] = await attemptsOf(ctx.deps.pool, event.id);
      assert.equal(attempt?.status, 'failed');
      assert.equal(attempt?.http_status_code, null);
      assert.equal(
        attempt?.failure_reason,
        'destination refused: internal.example resolves to 10.1.1.1, a private address',
      );
      assert.equal(receiver.requests.length, before);
    } finally {
      await worker.stop();
      await ctx.close();
    }
  });
});
