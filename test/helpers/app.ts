// The real application on a database of its own, for HTTP tests through app.inject() or a real port.

import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createClient, createOrganisation, seedSandbox } from '../../src/admin/service.ts';
import { buildApp } from '../../src/app.ts';
import { createAppDeps } from '../../src/areas.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { type Area, buildCatalogue } from '../../src/platform/area.ts';
import type { App, AppDeps, Components } from '../../src/platform/deps.ts';
import { loggerOptions } from '../../src/platform/logging.ts';
import { Metrics } from '../../src/platform/metrics.ts';
import { SecretBox } from '../../src/platform/secrets.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const TEST_ADMIN_KEY = 'test-admin-key-0123456789abcdef';
export const TEST_ENCRYPTION_KEY = 'a'.repeat(64);

/**
 * Every log line the app wrote, for tests that scan logs (secrets never appear). With TEST_LOG_DIR set
 * (the test runner sets it) the lines also go to a file there, and the runner scans the whole suite's
 * logs for secrets after the run (scripts/test.ts).
 */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    const text = chunk.toString('utf8');
    this.lines.push(...text.split('\n').filter(Boolean));
    if (process.env.TEST_LOG_DIR)
      appendFileSync(path.join(process.env.TEST_LOG_DIR, `${process.pid}.log`), text);
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestApp {
  app: App;
  deps: AppDeps;
  config: Config;
  db: TestDatabase;
  logs: LogCapture;
  /** An organisation with a client holding `scopes` (default: all), and a token for it. */
  tenant(scopes?: string[]): Promise<Tenant>;
  /** Builds another app instance on the same database (e.g. a second process's view). */
  close(): Promise<void>;
}

export interface Tenant {
  organisationId: string;
  clientId: string;
  clientSecret: string;
  token: string;
  /** Authorization header value. */
  auth: { authorization: string };
}

export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    APP_ENV: 'sandbox',
    LOG_LEVEL: 'info',
    SECRETS_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...overrides,
  };
}

export async function startTestApp(
  options: {
    env?: Record<string, string>;
    components?: Components;
    db?: TestDatabase;
    /** Registers extra routes (e.g. a token-protected probe) before the app is made ready. */
    routes?: (app: App) => void;
    /** Areas added after the service's own (e.g. a test area that records the hooks it is called with). */
    extraAreas?: readonly Area[];
  } = {},
): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig(testEnv({ DATABASE_URL: db.url, ...options.env }));
  const baseDeps: AppDeps = createAppDeps({
    config,
    pool: db.pool,
    secretBox: new SecretBox(config.secretsEncryptionKey!, config.secretsEncryptionKeysPrevious),
    metrics: new Metrics({ processMetrics: false }),
  });
  const areas = [...baseDeps.areas, ...(options.extraAreas ?? [])];
  const deps: AppDeps = options.extraAreas
    ? { ...baseDeps, areas, catalogue: buildCatalogue(areas) }
    : baseDeps;
  const logs = new LogCapture();
  const logger = pino(loggerOptions(config.logLevel), logs);
  if (config.appEnv === 'sandbox') await seedSandbox(deps);
  const app = await buildApp(deps, { components: options.components ?? { api: true, auth: true }, logger });
  options.routes?.(app);
  await app.ready();

  const tenant = async (scopes?: string[]): Promise<Tenant> => {
    const organisation = await createOrganisation(deps, `Org ${Math.random().toString(36).slice(2, 8)}`);
    const client = await createClient(deps, {
      organisation_id: organisation.id,
      ...(scopes ? { scopes } : {}),
    });
    const token = await requestToken(app, client.client_id, client.client_secret!);
    return {
      organisationId: organisation.id,
      clientId: client.client_id,
      clientSecret: client.client_secret!,
      token,
      auth: { authorization: `Bearer ${token}` },
    };
  };

  return {
    app,
    deps,
    config,
    db,
    logs,
    tenant,
    async close() {
      await app.close();
      if (!options.db) await db.drop();
    },
  };
}

/** Remembers a secret the suite was given, so that the runner can prove no log line holds it. */
export function recordIssuedSecret(secret: string): void {
  if (process.env.TEST_LOG_DIR)
    appendFileSync(path.join(process.env.TEST_LOG_DIR, 'issued-secrets.txt'), `${secret}\n`);
}

export async function requestToken(
  app: App,
  clientId: string,
  clientSecret: string,
  realm = 'sandbox',
): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: `/realms/${realm}/protocol/openid-connect/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });
  if (response.statusCode !== 200)
    throw new Error(`token request failed: ${response.statusCode} ${response.body}`);
  return (response.json() as { access_token: string }).access_token;
}

/** Asserts the platform envelope: `error` first, `error_id` last; returns the parsed body. */
export function errorBody(body: string): { error: string; code: string; field?: string; error_id: string } {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const keys = Object.keys(parsed);
  if (keys[0] !== 'error' || keys.at(-1) !== 'error_id') {
    throw new Error(`not the platform envelope (keys ${keys.join(',')}): ${body}`);
  }
  if (typeof parsed.error_id !== 'string' || !/^err_[0-9A-HJKMNP-TV-Z]{26}$/.test(parsed.error_id)) {
    throw new Error(`bad error_id: ${body}`);
  }
  return parsed as { error: string; code: string; field?: string; error_id: string };
}
