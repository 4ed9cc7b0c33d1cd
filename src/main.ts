#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=100
// CLI entry (D1): payment-service [serve|api|auth|worker|migrate|admin ...]
import pino from 'pino';
import { runAdminCli } from './admin/cli.ts';
import { seedSandbox } from './admin/service.ts';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirInUseError } from './db/embedded.ts';
import { type JobRunner, startJobRunner, workerGauges } from './platform/jobs/runner.ts';
import { loggerOptions } from './platform/logging.ts';
import { openRuntime } from './runtime.ts';
import { type DeliveryWorker, startDeliveryWorker } from './webhooks/delivery/worker.ts';

const ROLES = ['serve', 'api', 'auth', 'worker', 'migrate', 'admin'] as const;
type Role = (typeof ROLES)[number];

async function main(argv: string[]): Promise<number> {
  const role = (argv[0] ?? 'serve') as Role;
  if (!ROLES.includes(role)) {
    process.stderr.write(`Unknown role "${role}". Usage: payment-service [${ROLES.join('|')}]\n`);
    return 2;
  }
  if (role === 'admin') return runAdminCli(argv.slice(1));

  const config = loadConfig();
  const log = pino(loggerOptions(config.logLevel));
  const runtime = await openRuntime(config, log, `payment-service:${role}`);
  if (role === 'migrate') {
    log.info('migrations are up to date');
    await runtime.close();
    return 0;
  }
  const { deps } = runtime;
  const serveApi = role === 'serve' || role === 'api';
  const serveAuth = role === 'serve' || role === 'auth';
  const runWorker = role === 'serve' || role === 'worker';

  let sandboxCredentials: { clientId: string; clientSecret: string } | undefined;
  if (config.appEnv === 'sandbox' && (serveApi || serveAuth)) sandboxCredentials = await seedSandbox(deps);

  const app = await buildApp(deps, { components: { api: serveApi, auth: serveAuth }, logger: log });
  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close().catch(() => {});
    await runtime.close();
    throw error;
  }
  // Claim deliveries only once the process is certainly up: a failed listen must not strand leases.
  const worker: DeliveryWorker | undefined = runWorker
    ? startDeliveryWorker(deps, log.child({ component: 'delivery' }))
    : undefined;
  const jobs: JobRunner | undefined = runWorker
    ? startJobRunner(deps, log.child({ component: 'jobs' }))
    : undefined;
  // A worker's /metrics shows the backlogs it works on: timers due, payouts awaiting their rail.
  if (runWorker) deps.metrics.addStorageGauges(workerGauges(deps), deps.pool);
  log.info({ role, address, env: config.appEnv }, `payment-service ${role} listening on ${address}`);
  if (role === 'worker') log.info('worker role: the HTTP server answers /healthz, /readyz and /metrics only');
  if (role === 'auth') log.info('auth role: token, JWKS and discovery endpoints only');
  if (sandboxCredentials) {
    const base = address.replace('0.0.0.0', '127.0.0.1');
    process.stdout.write(
      [
        '',
        `  payment-service (sandbox) is ready at ${base}`,
        `  token endpoint : ${base}/realms/${config.authRealm}/protocol/openid-connect/token`,
        `  client_id      : ${sandboxCredentials.clientId}`,
        `  client_secret  : ${sandboxCredentials.clientSecret}`,
        `  API reference  : ${base}/docs`,
        '',
        '',
      ].join('\n'),
    );
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      log.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
      const force = setTimeout(() => {
        log.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs + 5_000);
      force.unref();
      await Promise.allSettled([app.close(), worker?.stop(), jobs?.stop()]);
      await runtime.close();
      log.info('stopped');
      resolve(0);
    };
    // `on`, not `once`: the second signal must reach shutdown, which then exits at once with code 1.
    process.on('SIGINT', () => void shutdown('SIGINT'));
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof DataDirInUseError) {
      process.stderr.write(`payment-service: ${error.message}\n`);
    } else {
      process.stderr.write(`payment-service: failed to start: ${(error as Error).stack ?? String(error)}\n`);
    }
    process.exit(1);
  },
);
