// What a scenario is, and what it gets to run: settings, a deadline, a temp directory, lazily started
// PostgreSQL and receiver certificate, service processes, and a cleanup stack that run.ts always unwinds.
import { randomBytes } from 'node:crypto';
import type { BenchServer } from './database.ts';
import { openServer } from './database.ts';
import { type ServiceProcess, startRole } from './processes.ts';
import { type Certificate, makeCertificate } from './receiver.ts';
import type { Settings } from './settings.ts';

export interface Metric {
  name: string;
  value: number | null;
  unit: string;
  /** The target, as text (`≥ 2,000/s`). */
  target?: string;
  /** Whether the value meets the target; undefined without a target or without a value. */
  pass?: boolean;
}

export interface ScenarioResult {
  metrics: Metric[];
  /** Everything else worth keeping in the JSON (per-run figures, configuration, counts). */
  details: Record<string, unknown>;
  /** Lines for the summary: caveats of this run. */
  notes: string[];
  /** Correctness failures (a delivery missing, a signature not verifying, an error status): the run fails. */
  problems: string[];
}

export interface Scenario {
  name: string;
  /** One line for the help text and the summary. */
  title: string;
  /** What it measures and what it leaves out (the summary repeats it; bench/README.md has the long form). */
  measures: string;
  /** Upper bound of the whole scenario, from the settings; the run is aborted past it. */
  timeoutMs(settings: Settings): number;
  run(context: ScenarioContext): Promise<ScenarioResult>;
}

export interface ScenarioContext {
  settings: Settings;
  /** Aborted at the scenario's deadline or on Ctrl-C. */
  signal: AbortSignal;
  /** A directory of this scenario's own (embedded PostgreSQL data, certificate, service logs). */
  tmpDir: string;
  log(message: string): void;
  /** Registers cleanup work; run.ts runs it last-in first-out when the scenario ends, however it ends. */
  defer(work: () => Promise<unknown> | unknown): void;
  /** PostgreSQL (embedded, or BENCH_DATABASE_URL), started on first use and stopped at the end. */
  server(): Promise<BenchServer>;
  /** The receiver's self-signed certificate, made on first use. */
  certificate(): Certificate;
  /** A fresh SECRETS_ENCRYPTION_KEY of this scenario, shared by the bench process and its services. */
  encryptionKey: string;
  /** Starts `node src/main.ts <role>` with the service environment plus `env`; stopped at the end. */
  startService(role: string, env: Record<string, string>, label?: string): Promise<ServiceProcess>;
  /** Results of scenarios that already ran in this invocation. */
  previous: ReadonlyMap<string, ScenarioResult>;
}

export function createContext(input: {
  settings: Settings;
  signal: AbortSignal;
  tmpDir: string;
  previous: ReadonlyMap<string, ScenarioResult>;
  log: (message: string) => void;
}): {
  context: ScenarioContext;
  cleanup(): Promise<void>;
  postgres(): string | undefined;
  /** The last lines of every service process's log (shown when a scenario fails; the logs go with tmpDir). */
  logTails(lines: number): string[];
} {
  const stack: Array<() => Promise<unknown> | unknown> = [];
  const defer = (work: () => Promise<unknown> | unknown) => stack.push(work);
  let server: Promise<BenchServer> | undefined;
  let opened: BenchServer | undefined;
  const services: ServiceProcess[] = [];
  let certificate: Certificate | undefined;
  const encryptionKey = randomBytes(32).toString('hex');
  const { settings, tmpDir, log, signal } = input;

  const context: ScenarioContext = {
    settings,
    signal,
    tmpDir,
    log,
    defer,
    previous: input.previous,
    encryptionKey,
    server() {
      server ??= openServer(settings.databaseUrl, tmpDir, log).then((started) => {
        opened = started;
        defer(() => started.stop());
        return started;
      });
      return server;
    },
    certificate() {
      certificate ??= makeCertificate(tmpDir);
      return certificate;
    },
    async startService(role, env, label) {
      const service = await startRole(
        role,
        {
          APP_ENV: 'sandbox',
          LOG_LEVEL: settings.logLevel,
          SECRETS_ENCRYPTION_KEY: encryptionKey,
          DATA_DIR: tmpDir,
          ...env,
        },
        { label, logDir: tmpDir, signal },
      );
      services.push(service);
      defer(() => service.stop());
      return service;
    },
  };

  return {
    context,
    postgres: () => (opened ? `PostgreSQL ${opened.version} (${opened.kind})` : undefined),
    logTails: (lines) =>
      services.map((service) => `--- ${service.label} (${service.logFile})\n${service.logTail(lines)}`),
    async cleanup() {
      while (stack.length > 0) {
        const work = stack.pop()!;
        try {
          await work();
        } catch (error) {
          log(`cleanup step failed: ${(error as Error).message}`);
        }
      }
    },
  };
}

export const atLeast = (value: number | null, minimum: number): boolean | undefined =>
  value === null || Number.isNaN(value) ? undefined : value >= minimum;

export const atMost = (value: number | null, maximum: number): boolean | undefined =>
  value === null || Number.isNaN(value) ? undefined : value <= maximum;

/** Peak RSS target of the issue: below 300 MB per service process. */
export const PEAK_RSS_TARGET_MB = 300;

export function rssMetric(name: string, peakMb: number | undefined): Metric {
  const value = peakMb ?? null;
  return {
    name,
    value,
    unit: 'MiB',
    target: `< ${PEAK_RSS_TARGET_MB} MB`,
    pass: value === null ? undefined : value < PEAK_RSS_TARGET_MB,
  };
}

/** Environment of a delivery worker against `databaseUrl` that trusts the receiver's certificate. */
export function workerEnv(
  context: ScenarioContext,
  databaseUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    NODE_EXTRA_CA_CERTS: context.certificate().certPath,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CONCURRENCY: String(context.settings.concurrency),
    ...extra,
  };
}
