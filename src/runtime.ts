// Opening and closing a process's resources: storage (embedded or external), migrations, secrets.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { createAppDeps } from './areas.ts';
import { ensurePlatformAccounts } from './balances/ledger.ts';
import type { Config } from './config.ts';
import { type EmbeddedServer, startEmbeddedPostgres } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { createPool } from './db/pool.ts';
import type { AppDeps } from './platform/deps.ts';
import { Metrics } from './platform/metrics.ts';
import { generateEncryptionKey, SecretBox } from './platform/secrets.ts';

export interface Runtime {
  deps: AppDeps;
  embedded: EmbeddedServer | undefined;
  close(): Promise<void>;
}

/** SECRETS_ENCRYPTION_KEY, or in sandbox a key generated once and kept in DATA_DIR (D13). */
async function encryptionKey(config: Config): Promise<string> {
  if (config.secretsEncryptionKey) return config.secretsEncryptionKey;
  const keyPath = path.join(config.dataDir, 'secrets.key');
  if (existsSync(keyPath)) return (await readFile(keyPath, 'utf8')).trim();
  await mkdir(config.dataDir, { recursive: true });
  const key = generateEncryptionKey();
  await writeFile(keyPath, key, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(keyPath, 'utf8')).trim();
}

export async function openRuntime(config: Config, log: Logger, applicationName: string): Promise<Runtime> {
  let embedded: EmbeddedServer | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres(config.dataDir, (message) => log.info(message));
    databaseUrl = embedded.url;
  }
  try {
    const pool = createPool(databaseUrl, config.databasePoolSize, applicationName, {
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
    });
    const applied = await migrate(pool);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const deps = createAppDeps({
      config,
      pool,
      secretBox: new SecretBox(await encryptionKey(config), config.secretsEncryptionKeysPrevious),
      metrics: new Metrics(),
    });
    // Before any posting: a posting that created a platform account could deadlock (Area.platformAccounts).
    await ensurePlatformAccounts(
      pool,
      deps.areas.flatMap((area) => area.platformAccounts?.(config) ?? []),
    );
    return {
      deps,
      embedded,
      async close() {
        await pool.end().catch(() => {});
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
