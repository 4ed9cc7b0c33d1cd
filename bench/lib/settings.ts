// Benchmark sizes and knobs, from BENCH_* variables. BENCH_SMOKE=1 switches every default to a tiny size;
// a run with any size below its full default is a smoke run too, and its results are named `smoke-*`.

export interface Settings {
  /** BENCH_EVENTS: events of delivery-throughput and requests of delivery-limit. */
  events: number;
  /** BENCH_WORKERS: worker process counts of delivery-throughput, one run each ("1,2"). */
  workers: number[];
  /** WEBHOOK_CONCURRENCY given to the workers, and the concurrency of the delivery-limit client. */
  concurrency: number;
  /**
   * WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION of delivery-throughput and delivery-latency (one subscription):
   * BENCH_PER_SUBSCRIPTION, default = `concurrency`, so that the cap of one subscription is not what is measured.
   */
  perSubscription: number;
  /** BENCH_RATE: events per second of delivery-latency. */
  rate: number;
  /** BENCH_SECONDS: duration of the steady-rate scenarios (delivery-latency, slow-endpoint). */
  seconds: number;
  /** BENCH_FANOUT_EVENTS: events of fanout (each to 10 subscriptions). */
  fanoutEvents: number;
  /** BENCH_SLOW_RATE: events per second of slow-endpoint (each to 10 subscriptions). */
  slowRate: number;
  /** BENCH_SLOW_MS: how long the slow endpoint takes per request. */
  slowMs: number;
  /** BENCH_API_EVENTS: events seeded for api (attempts: 3 per event). */
  apiEvents: number;
  /** BENCH_API_DURATION: seconds of load per API endpoint. */
  apiDuration: number;
  /** BENCH_API_CONNECTIONS: autocannon connections per API endpoint (api and banks). */
  apiConnections: number;
  /** BENCH_FX_HOURS: hourly rate sets of the fx-rates scenario's history. */
  fxHours: number;
  /** BENCH_BANK_BRANCHES: branches of the banks scenario's directory. */
  bankBranches: number;
  /** BENCH_BANKS_RATE: requests per second of the banks scenario's paced runs (latency against its targets). */
  banksRate: number;
  /** BENCH_TRANSFERS: transfers of the transfers scenario. */
  transfers: number;
  /** BENCH_TRANSFER_ORGANISATIONS: organisations the transfers scenario's clients send from (1: one hot balance). */
  transferOrganisations: number;
  /** BENCH_SCREENING_ENTRIES: entries of the generated OFAC list of the screening scenario. */
  screeningEntries: number;
  /** BENCH_SCREENING_ALIASES: aliases (alt.csv rows) of that list. */
  screeningAliases: number;
  /** BENCH_SCREENINGS: screenings measured, one at a time, after a warm-up. */
  screenings: number;
  /** BENCH_DATABASE_URL: an external PostgreSQL server (a fresh database per run); unset: embedded. */
  databaseUrl: string | undefined;
  /** BENCH_LOG_LEVEL: LOG_LEVEL of the service processes (their logs go to files). */
  logLevel: string;
  /** Whether this is a smoke run (BENCH_SMOKE=1, or a size below its full default). */
  smoke: boolean;
}

interface Size {
  env: string;
  full: number;
  smoke: number;
}

const SIZES = {
  events: { env: 'BENCH_EVENTS', full: 20_000, smoke: 200 },
  seconds: { env: 'BENCH_SECONDS', full: 60, smoke: 5 },
  fanoutEvents: { env: 'BENCH_FANOUT_EVENTS', full: 1_000, smoke: 50 },
  apiEvents: { env: 'BENCH_API_EVENTS', full: 1_000_000, smoke: 10_000 },
  apiDuration: { env: 'BENCH_API_DURATION', full: 20, smoke: 3 },
  fxHours: { env: 'BENCH_FX_HOURS', full: 8_760, smoke: 48 },
  bankBranches: { env: 'BENCH_BANK_BRANCHES', full: 200_000, smoke: 2_000 },
  transfers: { env: 'BENCH_TRANSFERS', full: 3_000, smoke: 200 },
  screeningEntries: { env: 'BENCH_SCREENING_ENTRIES', full: 20_000, smoke: 1_000 },
  screeningAliases: { env: 'BENCH_SCREENING_ALIASES', full: 60_000, smoke: 3_000 },
  screenings: { env: 'BENCH_SCREENINGS', full: 2_000, smoke: 100 },
} satisfies Record<string, Size>;

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return Number(raw);
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const smokeRequested = env.BENCH_SMOKE === '1' || env.BENCH_SMOKE === 'true';
  let belowFull = false;
  const size = (spec: Size): number => {
    const value = positiveInt(env, spec.env, smokeRequested ? spec.smoke : spec.full);
    if (value < spec.full) belowFull = true;
    return value;
  };
  const events = size(SIZES.events);
  const seconds = size(SIZES.seconds);
  const fanoutEvents = size(SIZES.fanoutEvents);
  const apiEvents = size(SIZES.apiEvents);
  const apiDuration = size(SIZES.apiDuration);
  const fxHours = size(SIZES.fxHours);
  const bankBranches = size(SIZES.bankBranches);
  const transfers = size(SIZES.transfers);
  const screeningEntries = size(SIZES.screeningEntries);
  const screeningAliases = size(SIZES.screeningAliases);
  const screenings = size(SIZES.screenings);
  const workers = (env.BENCH_WORKERS ?? '1,2').split(',').map((part) => {
    const count = Number(part.trim());
    if (!Number.isInteger(count) || count < 1 || count > 16)
      throw new Error(
        `BENCH_WORKERS must be a comma list of worker counts 1..16, got "${env.BENCH_WORKERS}"`,
      );
    return count;
  });
  const concurrency = positiveInt(env, 'WEBHOOK_CONCURRENCY', 64);
  return {
    events,
    workers,
    concurrency,
    perSubscription: Math.min(concurrency, positiveInt(env, 'BENCH_PER_SUBSCRIPTION', concurrency)),
    rate: positiveInt(env, 'BENCH_RATE', 200),
    seconds,
    fanoutEvents,
    slowRate: positiveInt(env, 'BENCH_SLOW_RATE', 20),
    slowMs: positiveInt(env, 'BENCH_SLOW_MS', 5_000),
    apiEvents,
    apiDuration,
    apiConnections: positiveInt(env, 'BENCH_API_CONNECTIONS', 10),
    fxHours,
    bankBranches,
    banksRate: positiveInt(env, 'BENCH_BANKS_RATE', 200),
    transfers,
    transferOrganisations: positiveInt(env, 'BENCH_TRANSFER_ORGANISATIONS', 1),
    screeningEntries,
    screeningAliases,
    screenings,
    databaseUrl: env.BENCH_DATABASE_URL || undefined,
    logLevel: env.BENCH_LOG_LEVEL || 'info',
    smoke: smokeRequested || belowFull,
  };
}
