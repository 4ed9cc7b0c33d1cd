// The delivery worker (D10): claims due deliveries with a lease, sends each request outside any
// transaction, records the outcome with fencing. Any number of workers may run against one database.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { listenOnChannel } from '../../db/listen.ts';
import type { AppDeps } from '../../platform/deps.ts';
import { groupCommit } from '../../platform/group-commit.ts';
import { DELIVERY_CHANNEL } from '../publish-repository.ts';
import { type PreparedDelivery, prepareDeliveries } from './prepare.ts';
import * as repo from './repository.ts';
import {
  createDeliveryAgent,
  SendAbortedError,
  type SendResult,
  sendWebhook,
  type TransportOptions,
} from './send.ts';
import { type CompletedAttempt, giveUp, type RecordOutcome, recordAttempts } from './service.ts';

export interface DeliveryWorker {
  /** Stops claiming, finishes or releases in-flight work. */
  stop(): Promise<void>;
  /** Claims now instead of waiting for a notification or the timer (tests). */
  wake(): void;
  readonly id: string;
}

export interface DeliveryWorkerOptions {
  /** Fencing identity; unique per worker (default: host, pid and random bytes). */
  workerId?: string;
  /** Extra trusted CAs and an injectable resolver (tests); the rest comes from the configuration. */
  transport?: Pick<TransportOptions, 'ca' | 'lookup'>;
  /** How long stop() waits for in-flight requests before releasing their leases (default SHUTDOWN_TIMEOUT_MS). */
  stopTimeoutMs?: number;
  /** Longest sleep without a notification: a backstop for lost NOTIFYs (default 10 s). */
  maxIdleMs?: number;
  /** Tests: no LISTEN connection, wake-ups only from the timer and wake(). */
  listen?: boolean;
}

/** Pause after a claim that found due rows it could not take (locked by others, capped), to avoid spinning. */
const BUSY_RETRY_MS = 25;
/** Pause after a storage error in the claim loop. */
const ERROR_RETRY_MS = 1_000;
/**
 * Most outcomes recorded in one transaction. A worker holds at most HELD_PER_REQUEST_SLOT x
 * WEBHOOK_CONCURRENCY deliveries (256 at the defaults, of which at most 192 are waiting to be recorded),
 * so this bound only matters above the default concurrency.
 */
const MAX_OUTCOMES_PER_TRANSACTION = 256;
/**
 * A request slot (WEBHOOK_CONCURRENCY, and the per-subscription cap) is freed as soon as the endpoint has
 * answered, not when the outcome is recorded, so that sending never waits for the database. Deliveries
 * whose outcome is still being recorded keep their lease; this many times WEBHOOK_CONCURRENCY bounds all
 * the deliveries a worker holds (sending or recording), so a slow database slows claiming down.
 * At 2 the bound, not the request slots, stopped the claims of a draining worker (18,150 of 18,432
 * claim-loop rounds): a transaction recording 60-90 outcomes takes 25-35 ms on a busy 2-core machine,
 * longer than the requests. At 4 the worker drained 10-15 % faster (bench delivery-throughput, 2026-11-22);
 * 6 and 8 gained nothing more.
 */
export const HELD_PER_REQUEST_SLOT = 4;

interface InFlight {
  controller: AbortController;
  done: Promise<void>;
}

export function startDeliveryWorker(
  deps: AppDeps,
  log: Logger,
  options: DeliveryWorkerOptions = {},
): DeliveryWorker {
  const { config, pool, metrics } = deps;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const stopTimeoutMs = options.stopTimeoutMs ?? config.shutdownTimeoutMs;
  const maxIdleMs = options.maxIdleMs ?? 10_000;
  const agent = createDeliveryAgent({
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    caFile: config.webhookCaFile,
    ...options.transport,
  });
  /** Every delivery this worker holds: its request open, or its outcome being recorded. */
  const inFlight = new Map<number, InFlight>();
  /** Open requests, in all and per subscription (the caps of D10's fairness rule). */
  let sending = 0;
  const perSubscription = new Map<string, number>();
  let running = true;
  let wakeRequested = false;
  /**
   * Whether the last claim was cut short by this worker's free slots (or none was free). Only then does a
   * slot freed by any delivery call for a new claim; otherwise a freed slot wakes the loop only if its
   * subscription was at its cap. An idle worker thus runs no claim per completed request.
   */
  let limitedBySlots = false;
  let wakeSleep: (() => void) | undefined;

  const wake = () => {
    wakeRequested = true;
    wakeSleep?.();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeSleep = undefined;
        resolve();
      }
      wakeSleep = done;
    });

  const saturated = () =>
    [...perSubscription]
      .filter(([, count]) => count >= config.webhookConcurrencyPerSubscription)
      .map(([id]) => id);

  /**
   * Outcomes are recorded by group commit: requests that complete while a transaction records earlier
   * ones are recorded together in the next, so under load one transaction records many outcomes and at
   * rest each is recorded at once. A batch that still fails after retries is recorded outcome by outcome,
   * so that one outcome the database refuses cannot keep the others from being recorded.
   */
  const outcomes = groupCommit<CompletedAttempt, RecordOutcome>(
    async (attempts) => {
      const record = (batch: CompletedAttempt[]) =>
        recordAttempts(pool, { workerId, attempts: batch, retryScheduleMs: config.webhookRetryScheduleMs });
      try {
        return await withRetries(() => record(attempts));
      } catch (error) {
        if (attempts.length === 1) throw error;
        log.warn({ err: error, outcomes: attempts.length }, 'recording a batch failed; recording one by one');
        return Promise.all(
          attempts.map((attempt) =>
            record([attempt]).then(
              ([outcome]) => outcome!,
              (failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))),
            ),
          ),
        );
      }
    },
    { maxBatch: MAX_OUTCOMES_PER_TRANSACTION },
  );

  /**
   * One claimed, prepared delivery: give up, or send and record. Errors leave the lease to expire
   * (at-least-once). The subscription was read again right before signing (prepareDeliveries, just after
   * the claim): the request is signed with the secret, sent to the URL and judged against the max_retries
   * current at send time, and a subscription paused or deleted since the claim gets nothing (D9, D10). A
   * worker claims only as many deliveries as it has free slots, so nothing waits for a slot between that
   * read and the send.
   */
  async function deliver(
    prepared: PreparedDelivery,
    signal: AbortSignal,
    freeSlot: () => void,
  ): Promise<void> {
    if (signal.aborted) return; // stopping: stop() releases the lease once this settles
    const { delivery } = prepared;
    if (prepared.kind === 'inactive') {
      const outcome = await withRetries(() => giveUp(pool, { workerId, delivery }));
      if (!outcome.recorded && outcome.why === 'active') {
        // Re-activated between the read above and the give-up: not given up. Hand it back, due now; the
        // next claim (this worker is woken as the slot frees) reads the subscription again and sends it.
        await repo.releaseLeases(pool, workerId, [delivery.id]);
        log.debug({ delivery_id: delivery.id }, 'subscription active again; delivery not given up');
        wake(); // due now
        return;
      }
      if (outcome.recorded) {
        metrics.webhookAttempts.inc({ outcome: 'given_up' });
        log.info(
          {
            delivery_id: delivery.id,
            event_id: delivery.event_id,
            subscription_id: delivery.subscription_id,
          },
          `delivery given up: ${outcome.reason}`,
        );
      }
      return;
    }
    let result: SendResult;
    let requestHeaders: Record<string, string>;
    if (prepared.kind === 'unsendable') {
      // Recorded as a failed attempt so that retries, exhaustion and dead_letter apply instead of the
      // delivery being re-claimed forever. Only the fixed reason is logged: no secret material (D13).
      result = prepared.result;
      requestHeaders = {};
      log.error(
        { delivery_id: delivery.id, subscription_id: delivery.subscription_id },
        `delivery cannot be sent: ${prepared.result.reason}`,
      );
    } else {
      requestHeaders = prepared.headers;
      try {
        result = await sendWebhook(agent, {
          url: delivery.endpoint_url,
          headers: prepared.headers,
          body: delivery.payload,
          timeoutMs: config.webhookTimeoutMs,
          signal,
        });
      } catch (error) {
        if (error instanceof SendAbortedError) return; // stopping: the lease is released, not recorded
        throw error;
      }
    }
    freeSlot(); // the endpoint has answered: the next request may start while this outcome is recorded
    const outcome = await outcomes.submit({ delivery, result, requestHeaders });
    if (!outcome.recorded) {
      log.warn(
        { delivery_id: delivery.id, event_id: delivery.event_id },
        'delivery lease lost before the outcome was recorded; another worker will send it again',
      );
      return;
    }
    // A retry is due sooner than the lease end the loop may be sleeping towards: let it look again.
    if (outcome.attemptStatus === 'pending_retry') wake();
    metrics.webhookAttempts.inc({ outcome: outcome.attempt.status });
    metrics.webhookLatency.observe({ outcome: outcome.attempt.status }, outcome.attempt.latencyMs / 1000);
    log.debug(
      {
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        subscription_id: delivery.subscription_id,
        attempt_number: outcome.attemptNumber,
        status: outcome.attemptStatus,
        http_status_code: outcome.attempt.httpStatusCode,
        latency_ms: outcome.attempt.latencyMs,
        event_status: outcome.eventStatus,
      },
      'delivery attempt recorded',
    );
    if (outcome.autoDisabled) {
      log.warn(
        { subscription_id: delivery.subscription_id },
        'subscription auto-disabled after consecutive failed deliveries',
      );
    }
  }

  /** A storage hiccup while recording should not cost a redelivery: retry a few times first. */
  async function withRetries<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (attempt >= 3) throw error;
        log.warn({ err: error, attempt }, 'recording a delivery outcome failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }

  /** Request slots free now: open requests under WEBHOOK_CONCURRENCY, held deliveries under their bound. */
  const freeSlots = () =>
    Math.min(
      config.webhookConcurrency - sending,
      HELD_PER_REQUEST_SLOT * config.webhookConcurrency - inFlight.size,
    );

  function start(prepared: PreparedDelivery): void {
    const { delivery } = prepared;
    const controller = new AbortController();
    sending++;
    perSubscription.set(delivery.subscription_id, (perSubscription.get(delivery.subscription_id) ?? 0) + 1);
    metrics.webhookInFlight.inc();
    let slotHeld = true;
    const freeSlot = () => {
      if (!slotHeld) return;
      slotHeld = false;
      sending--;
      const left = (perSubscription.get(delivery.subscription_id) ?? 1) - 1;
      if (left > 0) perSubscription.set(delivery.subscription_id, left);
      else perSubscription.delete(delivery.subscription_id);
      metrics.webhookInFlight.dec();
      // A slot is free: claim again if slots were what held the worker back, or if this subscription was at
      // its cap (its due deliveries were left out of the claim and of the wait for the next due one).
      if (limitedBySlots || left + 1 >= config.webhookConcurrencyPerSubscription) wake();
    };
    const done = deliver(prepared, controller.signal, freeSlot)
      .catch((error: unknown) => {
        log.error(
          { err: error, delivery_id: delivery.id, event_id: delivery.event_id },
          'delivery failed unexpectedly; it is retried when its lease expires',
        );
      })
      .finally(() => {
        const heldAtBound = inFlight.size >= HELD_PER_REQUEST_SLOT * config.webhookConcurrency;
        inFlight.delete(delivery.id);
        freeSlot();
        if (heldAtBound) wake(); // the bound on held deliveries stopped claiming
      });
    inFlight.set(delivery.id, { controller, done });
  }

  /**
   * Reads the claimed deliveries' subscriptions and signs their requests. On a storage error the leases
   * are handed back at once (due now) rather than left to expire, and the error goes to the claim loop.
   */
  async function prepare(claimed: repo.ClaimedDelivery[]): Promise<PreparedDelivery[]> {
    try {
      return await prepareDeliveries(pool, deps.secretBox, claimed);
    } catch (error) {
      await repo
        .releaseLeases(
          pool,
          workerId,
          claimed.map((delivery) => delivery.id),
        )
        .catch(() => {});
      throw error;
    }
  }

  async function loop(): Promise<void> {
    while (running) {
      wakeRequested = false;
      let delayMs = maxIdleMs;
      try {
        const free = freeSlots();
        limitedBySlots = free <= 0;
        if (free > 0) {
          const claimed = await repo.claimDeliveries(pool, {
            workerId,
            leaseMs: config.webhookLeaseMs,
            limit: free,
            perSubscription: config.webhookConcurrencyPerSubscription,
            inFlight: perSubscription,
            held: [...inFlight.keys()],
          });
          for (const prepared of await prepare(claimed)) start(prepared);
          if (!running) break;
          if (claimed.length === free) {
            limitedBySlots = true;
            continue; // full: the next round waits for a free slot
          }
          const dueInMs = await repo.nextDueInMs(pool, saturated());
          if (dueInMs !== undefined) {
            delayMs = Math.min(
              maxIdleMs,
              Math.max(dueInMs, claimed.length === 0 && dueInMs === 0 ? BUSY_RETRY_MS : 0),
            );
          }
        }
      } catch (error) {
        if (!running) break;
        log.error({ err: error }, 'delivery claim failed; retrying');
        delayMs = ERROR_RETRY_MS;
      }
      if (!running) break;
      if (wakeRequested && delayMs > 0 && freeSlots() > 0) continue;
      if (delayMs > 0) await sleep(delayMs);
    }
  }

  metrics.setDeliveryQueueSource(() => repo.queueStats(pool));
  const listener = options.listen === false ? undefined : listenOnChannel(pool, log, wake, DELIVERY_CHANNEL);
  const looping = loop();
  log.info(
    {
      worker_id: workerId,
      concurrency: config.webhookConcurrency,
      per_subscription: config.webhookConcurrencyPerSubscription,
    },
    'delivery worker started',
  );

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      running = false;
      wakeSleep?.();
      await looping;
      const pending = () => Promise.allSettled([...inFlight.values()].map((task) => task.done));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pending(), new Promise((resolve) => (timer = setTimeout(resolve, stopTimeoutMs)))]);
      clearTimeout(timer);
      if (inFlight.size > 0) {
        // Unfinished requests: abort them first and wait until none is open, THEN hand their deliveries back
        // (due now, for any worker). Releasing first would let another worker send a delivery whose request
        // is still open here. An aborted request records nothing; the endpoint may still have received it
        // (at-least-once). A delivery that recorded its outcome meanwhile no longer carries our lease, so
        // the release leaves it alone.
        const ids = [...inFlight.keys()];
        for (const task of inFlight.values()) task.controller.abort();
        await pending();
        const released = await repo.releaseLeases(pool, workerId, ids).catch((error: unknown) => {
          log.error({ err: error }, 'could not release delivery leases; they expire on their own');
          return 0;
        });
        log.warn({ released, in_flight: ids.length }, 'delivery worker stopped with requests in flight');
      }
      metrics.setDeliveryQueueSource(undefined);
      await listener?.close();
      await agent.close().catch(() => {});
      log.info({ worker_id: workerId }, 'delivery worker stopped');
    })();
    return stopping;
  };

  return { stop, wake, id: workerId };
}
