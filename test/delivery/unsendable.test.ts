// A delivery that fails before anything is sent (D10, D13): a signing secret this process cannot unseal
// (damaged row, another SECRETS_ENCRYPTION_KEY) or an unusable endpoint_url is recorded as a failed attempt
// through the normal outcome path, so retries, exhaustion and dead_letter apply instead of the delivery
// being re-claimed every lease forever; and nothing logged holds secret material.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { generateEncryptionKey, SecretBox } from '../../src/platform/secrets.ts';
import { type DeliveryWorker, startDeliveryWorker } from '../../src/webhooks/delivery/worker.ts';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.ts';
import {
  attemptsOf,
  createOrganisation,
  createSubscription,
  type DeliveryTestContext,
  deliveriesOf,
  deliveryContext,
  publish,
  type TestSubscription,
  waitForEventStatus,
} from './fixtures.ts';

describe('deliveries that cannot be sent', () => {
  let ctx: DeliveryTestContext;
  let receiver: HttpsReceiver;
  const logLines: string[] = [];

  before(async () => {
    ctx = await deliveryContext({
      WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_MS: '5000',
    });
    receiver = await startHttpsReceiver();
  });

  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  /** A worker whose every log line, debug included, is kept for inspection. */
  function capturingWorker(deps = ctx.deps): DeliveryWorker {
    const log = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
    return startDeliveryWorker(deps, log, {
      stopTimeoutMs: 2_000,
      transport: { ca: testCertificate().cert },
    });
  }

  async function subscribe(path: string): Promise<TestSubscription> {
    const organisationId = await createOrganisation(ctx.deps.pool);
    return createSubscription(ctx.deps, {
      organisationId,
      endpointUrl: `${receiver.origin}${path}`,
      maxRetries: 2,
    });
  }

  /** Three failed attempts (max_retries 2), nothing sent, the delivery exhausted, the event dead_letter. */
  async function assertDeadLettered(eventId: number, path: string, reason: RegExp): Promise<void> {
    await waitForEventStatus(ctx.deps.pool, eventId, ['dead_letter'], 15_000);
    const attempts = await attemptsOf(ctx.deps.pool, eventId);
    assert.deepEqual(
      attempts.map((attempt) => [attempt.attempt_number, attempt.status, attempt.http_status_code]),
      [
        [1, 'failed', null],
        [2, 'failed', null],
        [3, 'failed', null],
      ],
    );
    for (const attempt of attempts) {
      assert.match(attempt.failure_reason ?? '', reason);
      assert.deepEqual(attempt.request_headers, {}, 'no request was made');
      assert.equal(attempt.next_retry_at, null);
    }
    assert.equal((await deliveriesOf(ctx.deps.pool, eventId))[0]?.state, 'exhausted');
    assert.equal(receiver.requests.filter((request) => request.path === path).length, 0, 'nothing was sent');
  }

  function assertNoSecretLogged(secrets: string[]): void {
    assert.ok(logLines.length > 0, 'the worker logged');
    for (const line of logLines) {
      assert.ok(!line.includes('whsec_'), `a log line holds a signing secret: ${line}`);
      for (const secret of secrets) {
        assert.ok(!line.includes(secret), `a log line holds secret material: ${line}`);
        // The sealed form's ciphertext and tag are secret material too.
        for (const part of secret.split('.').filter((piece) => piece.length >= 16)) {
          assert.ok(!line.includes(part), `a log line holds part of a sealed secret: ${line}`);
        }
      }
    }
  }

  it('should dead-letter a delivery whose sealed secret is damaged, logging no secret material', async () => {
    const subscription = await subscribe('/damaged-secret');
    const sealed = (
      await ctx.deps.pool.query<{ sealed: string }>(
        'SELECT signing_secret_sealed AS sealed FROM webhook_subscriptions WHERE id = $1',
        [subscription.id],
      )
    ).rows[0]!.sealed;
    // Flip the ciphertext: the GCM tag no longer matches.
    const [version, nonce, tag, ciphertext] = sealed.split('.');
    const damaged = [
      version,
      nonce,
      tag,
      `${ciphertext!.startsWith('A') ? 'B' : 'A'}${ciphertext!.slice(1)}`,
    ].join('.');
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET signing_secret_sealed = $2 WHERE id = $1', [
      subscription.id,
      damaged,
    ]);
    const event = await publish(ctx.deps, subscription.organisationId);
    const worker = capturingWorker();
    try {
      await assertDeadLettered(event.id, '/damaged-secret', /^could not sign the request: .*unreadable/);
    } finally {
      await worker.stop();
    }
    assert.ok(logLines.some((line) => line.includes('could not sign the request')));
    assertNoSecretLogged([subscription.secret, sealed, damaged]);
  });

  it('should dead-letter a delivery when the worker has another SECRETS_ENCRYPTION_KEY', async () => {
    const subscription = await subscribe('/other-key');
    const event = await publish(ctx.deps, subscription.organisationId);
    const worker = capturingWorker({ ...ctx.deps, secretBox: new SecretBox(generateEncryptionKey()) });
    try {
      await assertDeadLettered(event.id, '/other-key', /SECRETS_ENCRYPTION_KEY/);
    } finally {
      await worker.stop();
    }
    assertNoSecretLogged([subscription.secret]);
  });

  it('should dead-letter a delivery whose stored endpoint_url cannot be requested', async () => {
    const subscription = await subscribe('/bad-url');
    await ctx.deps.pool.query('UPDATE webhook_subscriptions SET endpoint_url = $2 WHERE id = $1', [
      subscription.id,
      'https//missing-colon.example/hook',
    ]);
    const event = await publish(ctx.deps, subscription.organisationId);
    const worker = capturingWorker();
    try {
      await assertDeadLettered(event.id, '/bad-url', /endpoint_url is not a valid https URL/);
    } finally {
      await worker.stop();
    }
  });
});
