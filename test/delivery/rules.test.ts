// Pure rules of the engine: the retry schedule, Standard Webhooks signing, outcome classification, and
// the configuration it reads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { generateSigningSecret } from '../../src/platform/secrets.ts';
import { classify, decide, settledStatus, tallyFailures } from '../../src/webhooks/delivery/outcome.ts';
import { retryDelayMs, willRetry } from '../../src/webhooks/delivery/schedule.ts';
import { sign, signingKey, webhookHeaders } from '../../src/webhooks/delivery/sign.ts';

describe('delivery rules', () => {
  it('should wait schedule[n-1] after failed attempt n, repeating the last entry', () => {
    const schedule = [5_000, 300_000, 1_800_000];
    assert.deepEqual(
      [1, 2, 3, 4, 9].map((n) => retryDelayMs(schedule, n)),
      [5_000, 300_000, 1_800_000, 1_800_000, 1_800_000],
    );
    assert.equal(willRetry(8, 8), true, 'attempt 8 of a round with max_retries 8 is retried');
    assert.equal(willRetry(9, 8), false, 'attempt 9 is the last');
    assert.equal(willRetry(1, 0), false, 'max_retries 0: one attempt');
  });

  it('should sign exactly as the Standard Webhooks library does, keyed by the secret as issued', () => {
    for (let i = 0; i < 20; i++) {
      const secret = generateSigningSecret();
      const body = JSON.stringify({ id: `evt_${i}`, data: { note: 'é✓\n"' } });
      const timestamp = 1_795_000_000 + i;
      const library = new Webhook(secret).sign(`evt_${i}`, new Date(timestamp * 1000), body);
      assert.equal(sign(signingKey(secret), `evt_${i}`, timestamp, body), library);
    }
  });

  it('should verify with the library and fail with another secret or a changed body', () => {
    const secret = generateSigningSecret();
    const body = '{"id":"evt_1","type":"transfer.completed"}';
    const headers = webhookHeaders({
      key: signingKey(secret),
      eventPublicId: 'evt_1',
      body,
      timestamp: Math.floor(Date.now() / 1000),
      deliveryId: 'dlv_1',
    });
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(generateSigningSecret()).verify(body, headers));
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers));
  });

  it('should classify answers and decide the delivery', () => {
    const ok = classify({ kind: 'response', statusCode: 201, bodySnippet: 'x', latencyMs: 3 });
    assert.deepEqual(ok, {
      status: 'success',
      httpStatusCode: 201,
      latencyMs: 3,
      responseBodySnippet: 'x',
      failureReason: null,
    });
    assert.deepEqual(decide(ok, 1, 8, [1]), { kind: 'succeeded' });
    const redirect = classify({ kind: 'response', statusCode: 308, bodySnippet: '', latencyMs: 3 });
    assert.equal(redirect.status, 'failed');
    assert.deepEqual(decide(redirect, 2, 8, [10, 20]), { kind: 'retry', delayMs: 20 });
    assert.deepEqual(decide(redirect, 9, 8, [10, 20]), { kind: 'exhausted' });
    const timeout = classify({
      kind: 'timeout',
      latencyMs: 30_000,
      reason: 'timeout: no response within 30000 ms',
    });
    assert.equal(timeout.httpStatusCode, null);
    assert.equal(settledStatus({ http_status_code: null, failure_reason: timeout.failureReason }), 'timeout');
    assert.equal(
      settledStatus({ http_status_code: 500, failure_reason: 'endpoint answered HTTP 500' }),
      'failed',
    );
    assert.equal(settledStatus({ http_status_code: null, failure_reason: 'connection refused' }), 'failed');
  });

  it('should tally a run of outcomes for consecutive_failures without knowing the starting count', () => {
    const [S, F] = [true, false];
    assert.deepEqual(tallyFailures([]), {
      succeeded: false,
      failures: 0,
      failures_before_first_success: 0,
      failures_after_last_success: 0,
      longest_failure_run_between_successes: 0,
    });
    assert.deepEqual(tallyFailures([F, F, F]), {
      succeeded: false,
      failures: 3,
      failures_before_first_success: 3,
      failures_after_last_success: 0,
      longest_failure_run_between_successes: 0,
    });
    assert.deepEqual(tallyFailures([F, F, S, F, F, F, S, F, S, F, F]), {
      succeeded: true,
      failures: 8,
      failures_before_first_success: 2,
      failures_after_last_success: 2,
      longest_failure_run_between_successes: 3,
    });
    assert.deepEqual(tallyFailures([S, S]), {
      succeeded: true,
      failures: 0,
      failures_before_first_success: 0,
      failures_after_last_success: 0,
      longest_failure_run_between_successes: 0,
    });
  });

  it('should read WEBHOOK_CA_FILE only when the file exists', () => {
    assert.throws(
      () => loadConfig({ WEBHOOK_CA_FILE: '/nonexistent/ca.pem' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'WEBHOOK_CA_FILE',
    );
    assert.equal(loadConfig({}).webhookCaFile, undefined);
    assert.equal(loadConfig({ WEBHOOK_CA_FILE: import.meta.filename }).webhookCaFile, import.meta.filename);
  });
});
