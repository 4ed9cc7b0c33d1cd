// Prometheus metrics: one registry per process, exposed at GET /metrics.
import client from 'prom-client';
import type { Queryable } from '../db/pool.ts';
import type { GaugeGroup, GaugeReading } from './area.ts';

/** Pending deliveries and the age of the oldest due one, read from storage on each scrape. */
export type DeliveryQueueSource = () => Promise<{ depth: number; lagSeconds: number }>;

/** How long a scrape or a readiness probe waits for a storage read before it answers without it. */
const STORAGE_READ_WAIT_MS = 2_000;

/**
 * A storage read shared by those it feeds (gauges, readiness probes): started at most once a second, never
 * while the last one is still running, and waited for at most STORAGE_READ_WAIT_MS. It answers undefined when the read failed or is still
 * running by then, and the gauges keep their last values: a database that does not answer (unreachable,
 * or a table locked by a migration) must not hold the whole scrape, which also carries the process's own
 * metrics. A slow read goes on, and a later scrape shows what it read.
 */
export function sharedRead<T>(read: () => Promise<T>): () => Promise<T | undefined> {
  let startedAt = 0;
  let running = false;
  let last: Promise<T | undefined> | undefined;
  return () => {
    const now = Date.now();
    if (!running && (!last || now - startedAt > 1_000)) {
      startedAt = now;
      running = true;
      last = read()
        .catch(() => undefined)
        .finally(() => {
          running = false;
        });
    }
    const current = last!;
    if (!running) return current;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, STORAGE_READ_WAIT_MS, undefined);
    });
    return Promise.race([current, giveUp]).finally(() => clearTimeout(timer));
  };
}

export class Metrics {
  readonly registry = new client.Registry();
  readonly httpRequests: client.Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: client.Histogram<'method' | 'route' | 'status'>;
  /** Delivery attempts by outcome: success, failed, timeout; given_up when nothing was sent (D10). */
  readonly webhookAttempts: client.Counter<'outcome'>;
  readonly webhookLatency: client.Histogram<'outcome'>;
  readonly webhookInFlight: client.Gauge;
  readonly webhookQueueDepth: client.Gauge;
  readonly webhookLag: client.Gauge;
  /** Durable timer runs by kind and outcome (done, failed: retried later). */
  readonly jobsRun: client.Counter<'kind' | 'outcome'>;
  #readQueue: () => Promise<{ depth: number; lagSeconds: number } | undefined> = async () => undefined;

  /**
   * `processMetrics`: Node.js process metrics (CPU, memory, event loop, GC). Each collection installs
   * monitors that live as long as the process, so only a process's own registry turns them on; tests
   * that build many apps in one process pass false.
   */
  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics !== false) client.collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new client.Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template, method and status code',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status code',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.jobsRun = new client.Counter({
      name: 'jobs_run_total',
      help: 'Durable timer jobs run, by kind and outcome (done; failed: retried later)',
      labelNames: ['kind', 'outcome'],
      registers: [this.registry],
    });
    this.webhookAttempts = new client.Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome (success, failed, timeout; given_up: subscription not active)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.webhookLatency = new client.Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Webhook request latency by outcome (a timeout reports the timeout)',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.webhookInFlight = new client.Gauge({
      name: 'webhook_delivery_in_flight',
      help: 'Webhook requests this process is sending now',
      registers: [this.registry],
    });
    // Queue gauges are computed on scrape (one cheap query shared by both), by processes that run a worker.
    this.webhookQueueDepth = new client.Gauge({
      name: 'webhook_delivery_queue_depth',
      help: 'Pending webhook deliveries (due, in flight, or waiting for a retry)',
      registers: [this.registry],
      collect: async () => {
        const stats = await this.#readQueue();
        if (stats) this.webhookQueueDepth.set(stats.depth);
      },
    });
    this.webhookLag = new client.Gauge({
      name: 'webhook_delivery_lag_seconds',
      help: 'Age of the oldest due webhook delivery not yet sent (0 when none is waiting)',
      registers: [this.registry],
      collect: async () => {
        const stats = await this.#readQueue();
        if (stats) this.webhookLag.set(stats.lagSeconds);
      },
    });
  }

  /** Set by the delivery worker: where the queue gauges read from. */
  setDeliveryQueueSource(source: DeliveryQueueSource | undefined): void {
    // A failed or slow read leaves the gauges at their last value rather than failing or holding the scrape.
    this.#readQueue = source ? sharedRead(source) : async () => undefined;
  }

  /**
   * Registers gauges read from storage on each scrape, by processes that run a worker (the areas'
   * backlogs, the durable timers'). A group's query runs at most once a second, however many of its
   * gauges a scrape collects; a read that fails, or has not answered within STORAGE_READ_WAIT_MS, leaves
   * them at their last values rather than failing or holding the scrape (sharedRead).
   */
  addStorageGauges(groups: readonly GaugeGroup[], db: Queryable): void {
    for (const group of groups) {
      const read: () => Promise<GaugeReading[] | undefined> = sharedRead(() => group.read(db));
      for (const [name, help] of Object.entries(group.gauges)) {
        const gauge: client.Gauge<string> = new client.Gauge({
          name,
          help,
          labelNames: [...group.labelNames],
          registers: [this.registry],
          async collect() {
            const readings = await read();
            if (!readings) return;
            gauge.reset();
            for (const reading of readings) gauge.set(reading.labels, reading.values[name] ?? 0);
          },
        });
      }
    }
  }
}

/**
 * One reading per value of `label`: the known values first (zeros where storage has no row), then any
 * other value storage holds (a kind an older worker still knows, say), in sorted order.
 */
export function readingsByLabel<Row>(
  label: string,
  known: readonly string[],
  rows: readonly Row[],
  keyOf: (row: Row) => string,
  valuesOf: (row: Row | undefined) => Record<string, number>,
): GaugeReading[] {
  const byKey = new Map(rows.map((row) => [keyOf(row), row]));
  return [...new Set([...known, ...byKey.keys()])]
    .sort()
    .map((key) => ({ labels: { [label]: key }, values: valuesOf(byKey.get(key)) }));
}
