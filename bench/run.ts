#!/usr/bin/env node
// Benchmarks (issue 6): `npm run bench` runs every scenario; `npm run bench -- <scenario> [...]` runs some.
// Each scenario starts what it needs on 127.0.0.1 (embedded PostgreSQL or BENCH_DATABASE_URL, service
// processes, an HTTPS receiver), prints a table, writes bench/results/<date>-<scenario>.{json,md}, and stops
// everything it started, whether it passes, fails or runs out of time. See bench/README.md.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo } from './lib/machine.ts';
import { type ResultRecord, textTable, writeResult } from './lib/results.ts';
import { createContext, type Scenario, type ScenarioResult } from './lib/scenario.ts';
import { loadSettings, type Settings } from './lib/settings.ts';
import { api } from './scenarios/api.ts';
import { banks } from './scenarios/banks.ts';
import { cryptoAddresses } from './scenarios/crypto-addresses.ts';
import { deliveryLatency } from './scenarios/delivery-latency.ts';
import { deliveryLimit } from './scenarios/delivery-limit.ts';
import { deliveryThroughput } from './scenarios/delivery-throughput.ts';
import { fanout } from './scenarios/fanout.ts';
import { fxRates } from './scenarios/fx-rates.ts';
import { ledgerScenario } from './scenarios/ledger.ts';
import { screening } from './scenarios/screening.ts';
import { slowEndpoint } from './scenarios/slow-endpoint.ts';
import { transfers } from './scenarios/transfers.ts';

/** In the order of a full run: delivery-limit first, so that delivery-throughput can state its ratio. */
const SCENARIOS: Scenario[] = [
  deliveryLimit,
  deliveryThroughput,
  deliveryLatency,
  fanout,
  slowEndpoint,
  api,
  ledgerScenario,
  transfers,
  fxRates,
  banks,
  screening,
  cryptoAddresses,
];

const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

function usage(): string {
  const names = SCENARIOS.map((scenario) => `  ${scenario.name.padEnd(20)} ${scenario.title}`).join('\n');
  return `Usage: npm run bench [-- <scenario> ...]   (no scenario: all of them, in this order)

Scenarios:
${names}

Sizes and knobs (environment): BENCH_SMOKE=1 (tiny sizes), BENCH_EVENTS, BENCH_WORKERS, BENCH_SECONDS,
BENCH_RATE, BENCH_FANOUT_EVENTS, BENCH_SLOW_RATE, BENCH_SLOW_MS, BENCH_API_EVENTS, BENCH_API_DURATION,
BENCH_API_CONNECTIONS, BENCH_BANK_BRANCHES, BENCH_BANKS_RATE, BENCH_SCREENING_ENTRIES, BENCH_SCREENING_ALIASES, BENCH_SCREENINGS, BENCH_TRANSFERS, BENCH_PER_SUBSCRIPTION, WEBHOOK_CONCURRENCY, BENCH_DATABASE_URL, BENCH_LOG_LEVEL.
See bench/README.md.
`;
}

/** The command as typed, with the BENCH_* / WEBHOOK_* variables that shaped it (passwords removed). */
function commandLine(args: string[]): string {
  const vars = Object.entries(process.env)
    .filter(([name]) => /^(BENCH_|WEBHOOK_CONCURRENCY)/.test(name))
    .map(([name, value]) => `${name}=${name === 'BENCH_DATABASE_URL' ? redactUrl(value ?? '') : value}`);
  const viaNpm = process.env.npm_lifecycle_event === 'bench';
  const command = viaNpm
    ? `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`
    : `node bench/run.ts${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
  return [...vars, command].join(' ');
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

function publicSettings(settings: Settings): Settings {
  return { ...settings, databaseUrl: settings.databaseUrl ? redactUrl(settings.databaseUrl) : undefined };
}

const log = (message: string) => process.stdout.write(`${message}\n`);

async function runScenario(
  scenario: Scenario,
  settings: Settings,
  previous: Map<string, ScenarioResult>,
  command: string,
  interrupt: AbortSignal,
): Promise<ResultRecord> {
  const startedAt = new Date();
  const machineAtStart = machineInfo(undefined);
  const tmpDir = await mkdtemp(path.join(tmpdir(), `ps-bench-${scenario.name}-`));
  // The embedded server runs as the `postgres` user when the bench runs as root: it must reach the directory.
  await chmod(tmpDir, 0o755);
  const timeoutMs = scenario.timeoutMs(settings);
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([deadline, interrupt]);
  const prefix = (message: string) => log(`[${scenario.name}] ${message}`);
  const { context, cleanup, postgres, logTails } = createContext({
    settings,
    signal,
    tmpDir,
    previous,
    log: prefix,
  });
  prefix(`start (${scenario.title}); bounded at ${Math.round(timeoutMs / 1000)} s`);

  let result: ScenarioResult | undefined;
  let error: string | undefined;
  try {
    const aborted = new Promise<never>((_, reject) => {
      const fail = () =>
        reject(
          new Error(
            interrupt.aborted ? 'interrupted' : `did not finish within ${Math.round(timeoutMs / 1000)} s`,
          ),
        );
      if (signal.aborted) fail();
      signal.addEventListener('abort', fail, { once: true });
    });
    aborted.catch(() => {});
    const running = scenario.run(context);
    // Past the deadline the scenario may still fail later, against resources already stopped: ignore that.
    running.catch(() => {});
    result = await Promise.race([running, aborted]);
  } catch (caught) {
    error = (caught as Error).stack ?? String(caught);
    prefix(`FAILED: ${(caught as Error).message}`);
    for (const tail of logTails(15)) log(tail);
  } finally {
    prefix('stopping everything it started');
    await cleanup();
    await rm(tmpDir, { recursive: true, force: true }).catch(() => {});
  }
  if (result) previous.set(scenario.name, result);
  const missed = result?.metrics.some((metric) => metric.pass === false) ?? false;
  const failed = error !== undefined || (result?.problems.length ?? 0) > 0;
  return {
    scenario: scenario.name,
    title: scenario.title,
    status: failed ? 'failed' : missed ? 'missed targets' : 'passed',
    date: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
    command,
    smoke: settings.smoke,
    machine: { ...machineAtStart, postgres: postgres() },
    settings: publicSettings(settings),
    measures: scenario.measures,
    result,
    error,
  };
}

async function main(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h') || args[0] === 'list') {
    process.stdout.write(usage());
    return 0;
  }
  const unknown = args.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`Unknown scenario: ${unknown.join(', ')}\n\n${usage()}`);
    return 2;
  }
  const chosen = args.length === 0 ? SCENARIOS : SCENARIOS.filter((scenario) => args.includes(scenario.name));
  const settings = loadSettings();
  const command = commandLine(args);
  const interrupt = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupt.signal.aborted) process.exit(130);
      log(`${signal}: stopping the current scenario (again to exit at once)`);
      interrupt.abort();
    });
  }
  if (settings.smoke) log('smoke run: sizes below the full defaults; results are named smoke-*');

  const previous = new Map<string, ScenarioResult>();
  const records: ResultRecord[] = [];
  for (const scenario of chosen) {
    if (interrupt.signal.aborted) break;
    const record = await runScenario(scenario, settings, previous, command, interrupt.signal);
    records.push(record);
    if (interrupt.signal.aborted) {
      log(`== ${record.scenario}: interrupted; no result written`);
      break;
    }
    const files = await writeResult(RESULTS_DIR, record);
    log('');
    log(`== ${record.scenario}: ${record.status} (${record.durationSeconds} s)`);
    if (record.result) log(textTable(record));
    for (const problem of record.result?.problems ?? []) log(`problem: ${problem}`);
    for (const note of record.result?.notes ?? []) log(`note: ${note}`);
    log(`written: ${files.map((file) => path.relative(process.cwd(), file)).join(', ')}`);
    log('');
  }
  if (records.length > 1) {
    log('Summary:');
    for (const record of records) log(`  ${record.scenario.padEnd(20)} ${record.status}`);
  }
  return records.some((record) => record.status === 'failed') || interrupt.signal.aborted ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
