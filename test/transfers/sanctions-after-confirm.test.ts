// No money goes to a name a sanctions review confirmed (D18, D19, D20, D21), whatever happens to the
// beneficiary between a payment's creation and its hand-off to the rail: blocked and then deleted, deleted
// while its new name waits for the review, or renamed after the transfer was confirmed. Real beneficiaries,
// real screenings and the sandbox rail without step delay.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { HELD_HAND_OFF_RECHECK_MS, handOff } from '../../src/payments/payouts.ts';
import type { JobRunner } from '../../src/platform/jobs/runner.ts';
import { Decimal } from '../../src/platform/money.ts';
import { bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { sendAgainstLocks, waitUntil } from '../helpers/wait.ts';
import { balance, PAYOUTS, runJobs, transactionsOf } from '../payments/fixtures.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const USD_EUR = 'cor_0000SANDBX0000000000000001';

interface TransferJson {
  id: string;
  status: string;
  status_reason: string | null;
  deposit: { id: string } | null;
  payout: { id: string; status: string; failure_reason: string | null } | null;
}

describe('no payout to a name a sanctions review confirmed (D18, D20, D21)', () => {
  let t: TestApp;
  let jobs: JobRunner | undefined;
  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' } });
  });
  after(async () => {
    await jobs?.stop();
    await t.close();
  });
  const startJobs = () => {
    jobs ??= runJobs(t);
  };
  const stopJobs = async () => {
    await jobs?.stop();
    jobs = undefined;
  };

  const ok = async (request: Promise<{ statusCode: number; body: string }>, status = 200) => {
    const response = await request;
    assert.equal(response.statusCode, status, response.body);
    return JSON.parse(response.body) as Record<string, unknown>;
  };
  const newBeneficiary = async (api: ApiClient) => {
    const created = await createBeneficiary(api, bodyOf('DE', { name: 'Ada Lovelace' }));
    assert.equal(created.status, 'active');
    return created.id;
  };
  /** A new name of the sanctions list's: the beneficiary is screened again and waits for the review. */
  const rename = async (api: ApiClient, id: string) => {
    const renamed = await ok(api.patch(`/api/v1/beneficiaries/${id}`, { name: 'Paula Sanctioned' }));
    assert.equal(renamed.status, 'in_review');
    return renamed.screening_id as string;
  };
  const review = (api: ApiClient, screeningId: string, decision: 'cleared' | 'confirmed_match') =>
    ok(api.post(`/api/v1/sandbox/screenings/${screeningId}/review`, { decision }));
  /** A pending payout of `amount` EUR to the beneficiary: its id. */
  const payoutTo = async (api: ApiClient, beneficiaryId: string, amount: string) => {
    const payout = await ok(
      api.post(PAYOUTS, { beneficiary_id: beneficiaryId, currency: 'EUR', amount }),
      201,
    );
    assert.equal(payout.status, 'pending');
    return payout.id as string;
  };
  const bankTransfer = async (api: ApiClient, beneficiaryId: string) => {
    const quote = await ok(
      api.post('/api/v1/transfers/quotes', { corridor_id: USD_EUR, source_amount: '100.00' }),
      201,
    );
    const transfer = (await ok(
      api.post(`/api/v1/transfers/quotes/${quote.id}/confirm`, {
        beneficiary_id: beneficiaryId,
        funding_method: 'bank_transfer',
      }),
      201,
    )) as unknown as TransferJson;
    assert.equal(transfer.status, 'awaiting_deposit');
    return transfer;
  };
  const fund = (api: ApiClient, id: string) => ok(api.post(`/api/v1/sandbox/transfers/${id}/fund`, {}));
  const transferOf = async (api: ApiClient, id: string) =>
    (await ok(api.get(`/api/v1/transfers/${id}`))) as unknown as TransferJson;
  const payoutStatus = async (api: ApiClient, id: string) =>
    (await ok(api.get(`${PAYOUTS}/${id}`))) as { status: string; failure_reason: string | null };
  const reaches = (api: ApiClient, id: string, status: string) =>
    waitUntil(async () => (await transferOf(api, id)).status === status, `transfer ${status}`, 10_000);
  /**
   * The payout's hand-off has run and held it: its next look is the recheck interval away (its job due
   * then), and no hand-off is recorded.
   */
  const heldAtHandOff = (payoutId: string) =>
    waitUntil(
      async () =>
        (
          await t.db.pool.query(
            "SELECT 1 FROM jobs WHERE dedupe_key = $1 AND run_at > now() + $2 * interval '1 millisecond' / 2",
            [`payments.hand_off:${payoutId}`, HELD_HAND_OFF_RECHECK_MS],
          )
        ).rowCount === 1,
      'the hand-off held the payout',
      10_000,
    );
  const handedOff = async (payoutId: string) =>
    (await t.db.pool.query('SELECT 1 FROM payout_hand_offs WHERE payout_id = $1', [payoutId])).rowCount === 1;

  it("screens a transfer's beneficiary with its birth date and country, as the beneficiary was screened", async () => {
    const api = apiClient(t, await t.tenant());
    // The sandbox entry QUARRINGTON, Zebulon Ambrose was born 1961-07-14 in GB: another birth date and
    // country bring the exact name's 1.00 down to 0.75, under the threshold.
    const created = await createBeneficiary(
      api,
      bodyOf('DE', { name: 'Zebulon Ambrose Quarrington', date_of_birth: '1990-01-01' }),
    );
    assert.equal(created.status, 'active');
    const transfer = (await bankTransfer(api, created.id)) as TransferJson & { screening_id: string };
    const screening = (await ok(api.get(`/api/v1/sanctions/screenings/${transfer.screening_id}`))) as {
      match_status: string;
      date_of_birth: string | null;
      country: string | null;
    };
    assert.deepEqual(
      [screening.match_status, screening.date_of_birth, screening.country],
      ['no_match', '1990-01-01', 'DE'],
    );
  });

  it('rejects a transfer whose beneficiary was blocked and then deleted, when its money comes', async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    const beneficiary = await newBeneficiary(api);
    const transfer = await bankTransfer(api, beneficiary);
    await review(api, await rename(api, beneficiary), 'confirmed_match');
    assert.equal((await ok(api.get(`/api/v1/beneficiaries/${beneficiary}`))).status, 'blocked');
    assert.equal((await ok(api.del(`/api/v1/beneficiaries/${beneficiary}`))).status, 'deleted');

    const funded = (await fund(api, transfer.id)) as unknown as TransferJson;
    assert.deepEqual(
      [funded.status, funded.status_reason, funded.payout],
      [
        'rejected',
        `the beneficiary was blocked by a sanctions review; deposit ${transfer.deposit!.id} brought 100.00 USD, credited to the balance`,
        null,
      ],
    );
    assert.deepEqual(
      (await transactionsOf(api, transfer.deposit!.id)).map((entry) => [entry.type, entry.amount]),
      [['deposit', '100.00']],
    );
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('rejects a transfer whose beneficiary was deleted while its new name waited, once the review confirms it', async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    const [confirmed, cleared] = [await newBeneficiary(api), await newBeneficiary(api)];
    const toConfirmed = await bankTransfer(api, confirmed);
    const toCleared = await bankTransfer(api, cleared);
    const screenings = [await rename(api, confirmed), await rename(api, cleared)];
    for (const id of [confirmed, cleared]) await ok(api.del(`/api/v1/beneficiaries/${id}`));
    await review(api, screenings[0]!, 'confirmed_match');
    await review(api, screenings[1]!, 'cleared');
    // A review changes nothing a client sees of a deleted beneficiary.
    for (const id of [confirmed, cleared]) {
      assert.equal((await ok(api.get(`/api/v1/beneficiaries/${id}`))).status, 'deleted');
    }

    assert.equal(((await fund(api, toConfirmed.id)) as unknown as TransferJson).status, 'rejected');
    // Cleared: a transfer confirmed before the delete goes on (D19).
    assert.equal(((await fund(api, toCleared.id)) as unknown as TransferJson).status, 'processing');
    await reaches(api, toCleared.id, 'completed');
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it("holds a transfer's payout while its beneficiary's new name waits; cleared pays it, confirmed refunds it", async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    const [toClear, toConfirm] = [await newBeneficiary(api), await newBeneficiary(api)];
    const transfers = [await bankTransfer(api, toClear), await bankTransfer(api, toConfirm)];
    const screenings = [await rename(api, toClear), await rename(api, toConfirm)];
    const before = await balance(api, 'USD');

    const payouts: string[] = [];
    for (const transfer of transfers) {
      const funded = (await fund(api, transfer.id)) as unknown as TransferJson;
      assert.deepEqual([funded.status, funded.payout?.status], ['processing', 'pending']);
      payouts.push(funded.payout!.id);
    }
    for (const payout of payouts) {
      await heldAtHandOff(payout);
      assert.equal((await payoutStatus(api, payout)).status, 'pending');
      assert.equal(await handedOff(payout), false);
    }

    await review(api, screenings[0]!, 'cleared');
    await reaches(api, transfers[0]!.id, 'completed');
    assert.equal(await handedOff(payouts[0]!), true);

    await review(api, screenings[1]!, 'confirmed_match');
    await reaches(api, transfers[1]!.id, 'refunded');
    const refunded = await transferOf(api, transfers[1]!.id);
    assert.deepEqual(
      [refunded.status_reason, refunded.payout?.status, refunded.payout?.failure_reason],
      ['payout failed: compliance', 'failed', 'compliance'],
    );
    assert.equal(await handedOff(payouts[1]!), false);
    // The two deposits came in; the refunded transfer's 100.00 went back to the balance.
    const after = await balance(api, 'USD');
    assert.equal(new Decimal(after.available).minus(before.available).toFixed(2), '100.00');
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('fails a payout with compliance when its beneficiary is blocked before the hand-off, its amount back', async () => {
    await stopJobs();
    const api = apiClient(t, await t.tenant());
    const [blocked, cleared] = [await newBeneficiary(api), await newBeneficiary(api)];
    const opening = await balance(api, 'EUR');
    const payouts: string[] = [];
    for (const beneficiary of [blocked, cleared]) {
      payouts.push(await payoutTo(api, beneficiary, '250.00'));
    }
    // While the beneficiary's new name waits, the hand-off holds the payout.
    const screenings = [await rename(api, blocked), await rename(api, cleared)];
    startJobs();
    for (const payout of payouts) await heldAtHandOff(payout);
    assert.deepEqual(
      [(await payoutStatus(api, payouts[0]!)).status, (await payoutStatus(api, payouts[1]!)).status],
      ['pending', 'pending'],
    );

    await review(api, screenings[0]!, 'confirmed_match');
    await review(api, screenings[1]!, 'cleared');
    await waitUntil(
      async () => (await payoutStatus(api, payouts[0]!)).status === 'failed',
      'the payout failed',
      10_000,
    );
    assert.equal((await payoutStatus(api, payouts[0]!)).failure_reason, 'compliance');
    assert.equal(await handedOff(payouts[0]!), false);
    await waitUntil(
      async () => (await payoutStatus(api, payouts[1]!)).status === 'completed',
      'the payout completed',
      10_000,
    );
    assert.deepEqual(
      (await transactionsOf(api, payouts[0]!)).map((entry) => [entry.type, entry.amount]),
      [
        ['payout', '-250.00'],
        ['payout_reversal', '250.00'],
      ],
    );
    assert.equal(
      new Decimal(opening.available).minus((await balance(api, 'EUR')).available).toFixed(2),
      '250.00',
    );
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('holds the payouts of a beneficiary deleted while its new name waits, until the review', async () => {
    await stopJobs();
    const api = apiClient(t, await t.tenant());
    const beneficiary = await newBeneficiary(api);
    const payout = await payoutTo(api, beneficiary, '30.00');
    const transfer = await bankTransfer(api, beneficiary);
    const screening = await rename(api, beneficiary);
    await ok(api.del(`/api/v1/beneficiaries/${beneficiary}`));
    startJobs();
    const leg = ((await fund(api, transfer.id)) as unknown as TransferJson).payout!.id;
    for (const id of [payout, leg]) {
      await heldAtHandOff(id);
      assert.equal((await payoutStatus(api, id)).status, 'pending');
    }

    await review(api, screening, 'confirmed_match');
    await reaches(api, transfer.id, 'refunded');
    for (const id of [payout, leg]) {
      assert.deepEqual(await payoutStatus(api, id).then((p) => [p.status, p.failure_reason]), [
        'failed',
        'compliance',
      ]);
      assert.equal(await handedOff(id), false);
    }
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
  });

  it('hands a held payout off at its next look once a new name without a hit makes the beneficiary active', async () => {
    await stopJobs();
    const api = apiClient(t, await t.tenant());
    const beneficiary = await newBeneficiary(api);
    const payout = await payoutTo(api, beneficiary, '20.00');
    await rename(api, beneficiary);
    // Its hand-off holds it.
    startJobs();
    await heldAtHandOff(payout);
    const renamed = await ok(api.patch(`/api/v1/beneficiaries/${beneficiary}`, { name: 'Ada Lovelace' }));
    assert.equal(renamed.status, 'active');
    assert.equal((await payoutStatus(api, payout)).status, 'pending');
    // The recheck interval passes.
    await t.db.pool.query('UPDATE jobs SET run_at = now() WHERE dedupe_key = $1', [
      `payments.hand_off:${payout}`,
    ]);
    await waitUntil(
      async () => (await payoutStatus(api, payout)).status === 'completed',
      'the payout completed',
      10_000,
    );
  });

  it("blocks the beneficiary whose name a transfer's review confirmed, unless its name has changed since", async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    await activeSubscription(client(t, api.tenant), { event_type_codes: ['beneficiary.blocked'] });
    // A name cleared for the beneficiary, and a hit again at every confirm (D24).
    const lookalike = async () => {
      const created = await createBeneficiary(api, bodyOf('DE', { name: 'Lena Lookalike' }));
      await review(api, created.screening_id, 'cleared');
      return created.id;
    };
    const held = async (beneficiary: string) => {
      const quote = await ok(
        api.post('/api/v1/transfers/quotes', { corridor_id: USD_EUR, source_amount: '100.00' }),
        201,
      );
      const transfer = await ok(
        api.post(`/api/v1/transfers/quotes/${quote.id}/confirm`, {
          beneficiary_id: beneficiary,
          funding_method: 'balance',
        }),
        201,
      );
      assert.equal(transfer.status, 'in_review');
      return transfer as { id: string; screening_id: string };
    };
    const same = await lookalike();
    const renamed = await lookalike();
    const toSame = await held(same);
    const toRenamed = await held(renamed);
    await ok(api.patch(`/api/v1/beneficiaries/${renamed}`, { name: 'Lena Lovelace' }));

    await review(api, toSame.screening_id, 'confirmed_match');
    await review(api, toRenamed.screening_id, 'confirmed_match');
    for (const transfer of [toSame, toRenamed])
      assert.equal((await transferOf(api, transfer.id)).status, 'rejected');
    assert.equal((await ok(api.get(`/api/v1/beneficiaries/${same}`))).status, 'blocked');
    assert.equal((await ok(api.get(`/api/v1/beneficiaries/${renamed}`))).status, 'active');
    const blockedEvents = await t.db.pool.query<{ source_object_id: string }>(
      "SELECT source_object_id FROM webhook_events WHERE organisation_id = $1 AND event_type_code = 'beneficiary.blocked'",
      [api.tenant.organisationId],
    );
    assert.deepEqual(
      blockedEvents.rows.map((row) => row.source_object_id),
      [same],
    );
    const refused = await api.post(PAYOUTS, { beneficiary_id: same, currency: 'EUR', amount: '5.00' });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(JSON.parse(refused.body).code, 'BENEFICIARY_NOT_ACTIVE');
    await payoutTo(api, renamed, '5.00');
  });

  it('leaves no payout held when its review meets a hand-off running on it, whichever goes first', async () => {
    await stopJobs();
    const api = apiClient(t, await t.tenant());
    const held = async () => {
      const beneficiary = await newBeneficiary(api);
      const payout = await payoutTo(api, beneficiary, '10.00');
      return { payout, screening: await rename(api, beneficiary) };
    };
    /** A hand-off as the job runner runs it: its job row deleted first, in a transaction left open. */
    const runningHandOff = async (payout: string) => {
      const client = await t.db.pool.connect();
      await client.query('BEGIN');
      assert.equal(
        (await client.query('DELETE FROM jobs WHERE dedupe_key = $1', [`payments.hand_off:${payout}`]))
          .rowCount,
        1,
      );
      return client;
    };
    const cleared = (screening: string) => () => review(api, screening, 'cleared');

    // The hand-off locked the payout and found the name waiting: the review waits for its commit, then
    // schedules the payout's hand-off again.
    const first = await held();
    const early = await runningHandOff(first.payout);
    await handOff(early, t.deps, first.payout);
    const reviewed = await sendAgainstLocks(t.db.pool, cleared(first.screening), 'review after a hand-off');
    await early.query('COMMIT');
    early.release();
    await reviewed();

    // The hand-off has deleted its job but not yet locked the payout: the review does not wait for it, and
    // the hand-off then reads the beneficiary as the review left it.
    const second = await held();
    const late = await runningHandOff(second.payout);
    const answered = await Promise.race([
      cleared(second.screening)().then(() => 'answered'),
      new Promise((resolve) => setTimeout(resolve, 5_000, 'waits for the hand-off')),
    ]);
    assert.equal(answered, 'answered');
    await handOff(late, t.deps, second.payout);
    await late.query('COMMIT');
    late.release();
    assert.equal(await handedOff(second.payout), true);

    startJobs();
    for (const payout of [first.payout, second.payout]) {
      await waitUntil(
        async () => (await payoutStatus(api, payout)).status === 'completed',
        'completed',
        10_000,
      );
    }
  });
});
