// Scenario crypto-addresses: deposit addresses created per second through the crypto service (D22), in
// this process against PostgreSQL. Every create of a key family takes that key's counter row lock until
// it commits (the index sequence is gap-free and never reused), so one family's creates are serial: first
// all on the EVM key, then spread over the three keys. Afterwards every key's indexes are checked to be
// 0..n-1 with no gap and every address distinct. The derivation alone is timed apart.
import { insertOrganisation } from '../../src/admin/repository.ts';
import { createAppDeps } from '../../src/areas.ts';
import { loadConfig } from '../../src/config.ts';
import { deriveAddress } from '../../src/crypto/derivation.ts';
import type { NetworkCode } from '../../src/crypto/networks.ts';
import { createDepositAddress } from '../../src/crypto/service.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Metrics } from '../../src/platform/metrics.ts';
import { SecretBox } from '../../src/platform/secrets.ts';
import type { Scenario, ScenarioResult } from '../lib/scenario.ts';
import { distribution } from '../lib/stats.ts';
import { now, round } from '../lib/util.ts';

/** Concurrent creators: what several API processes would run at once. */
const CONNECTIONS = 16;
const DERIVATIONS = 2_000;

export const cryptoAddresses: Scenario = {
  name: 'crypto-addresses',
  title: 'Deposit addresses created per second: one key, then three keys (16 concurrent creators)',
  measures:
    'createDepositAddress (external_id check, the key index taken from its counter row, derivation, insert, ' +
    'the deposit_address.created event with no subscriber, commit) from 16 concurrent creators of this ' +
    'process on 10 organisations: all on the EVM key (serial on its counter row), then spread over the EVM, ' +
    'Tron and Bitcoin keys. Then every key is checked for indexes 0..n-1 without gaps or repeats. The time ' +
    'of one derivation (BIP32 public child, address encoding) is measured apart. Leaves out HTTP.',
  timeoutMs: (settings) => 120_000 + settings.apiDuration * 2 * 1000 * 3,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const seconds = settings.apiDuration;
    const server = await context.server();
    const db = await server.createDatabase('crypto', CONNECTIONS + 2);
    context.defer(() => db.drop());
    const config = loadConfig({
      APP_ENV: 'sandbox',
      DATABASE_URL: db.url,
      SECRETS_ENCRYPTION_KEY: context.encryptionKey,
      LOG_LEVEL: 'silent',
    });
    const deps = createAppDeps({
      config,
      pool: db.pool,
      secretBox: new SecretBox(config.secretsEncryptionKey!),
      metrics: new Metrics({ processMetrics: false }),
    });
    const organisations: string[] = [];
    for (let index = 0; index < 10; index++) {
      organisations.push((await insertOrganisation(db.pool, newUuid(), `Bench crypto ${index}`)).id);
    }

    const drive = async (label: string, networks: readonly NetworkCode[]) => {
      const latencies: number[] = [];
      let n = 0;
      const started = now();
      const until = started + seconds * 1000;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (now() < until && !signal.aborted) {
            const i = n++;
            const network = networks[i % networks.length]!;
            const at = now();
            await createDepositAddress(deps, organisations[i % organisations.length]!, {
              network,
              asset: network === 'bitcoin' ? 'BTC' : 'USDT',
              external_id: `${label}-${i}`,
            });
            latencies.push(now() - at);
          }
        }),
      );
      const elapsed = now() - started;
      return {
        created: latencies.length,
        perSecond: (latencies.length * 1000) / elapsed,
        latency: distribution(latencies),
      };
    };

    context.log(`one key (ethereum and polygon) for ${seconds} s`);
    const oneKey = await drive('one', ['ethereum', 'polygon']);
    context.log(`three keys for ${seconds} s`);
    const threeKeys = await drive('three', ['ethereum', 'tron', 'bitcoin']);

    const problems: string[] = [];
    const keys = await db.pool.query<{
      family: string;
      next_index: number;
      n: number;
      max: number;
      d: number;
    }>(
      `SELECT k.family, k.next_index, count(a.id)::int AS n, coalesce(max(a.derivation_index), -1)::int AS max,
              count(DISTINCT a.address)::int AS d
       FROM crypto_account_keys k LEFT JOIN crypto_deposit_addresses a ON a.account_key_id = k.id
       GROUP BY k.id`,
    );
    for (const key of keys.rows) {
      if (key.n !== key.next_index || key.max !== key.n - 1 || key.d !== key.n) {
        problems.push(
          `${key.family}: next_index ${key.next_index}, ${key.n} addresses (${key.d} distinct), highest index ${key.max}`,
        );
      }
    }
    const total = oneKey.created + threeKeys.created;
    const stored = keys.rows.reduce((sum, key) => sum + key.n, 0);
    if (stored !== total) problems.push(`${stored} addresses stored, the run created ${total}`);

    context.log(`${DERIVATIONS} derivations per key`);
    const derivation: Record<string, number> = {};
    for (const family of ['evm', 'tron', 'bitcoin'] as const) {
      const key = config.cryptoKeys[family]!;
      deriveAddress(key, 0);
      const started = now();
      for (let index = 1; index <= DERIVATIONS; index++) deriveAddress(key, 1_000_000 + index);
      derivation[family] = round(((now() - started) * 1000) / DERIVATIONS);
    }

    return {
      metrics: [
        { name: 'creates/s, one key', value: round(oneKey.perSecond), unit: '/s' },
        { name: 'create p50, one key', value: oneKey.latency.p50, unit: 'ms' },
        { name: 'create p99, one key', value: oneKey.latency.p99, unit: 'ms' },
        { name: 'creates/s, three keys', value: round(threeKeys.perSecond), unit: '/s' },
        { name: 'create p50, three keys', value: threeKeys.latency.p50, unit: 'ms' },
        { name: 'create p99, three keys', value: threeKeys.latency.p99, unit: 'ms' },
        { name: 'derivation, EVM', value: derivation.evm!, unit: 'µs' },
        { name: 'derivation, Tron', value: derivation.tron!, unit: 'µs' },
        { name: 'derivation, Bitcoin', value: derivation.bitcoin!, unit: 'µs' },
        { name: 'index gaps or repeats', value: problems.length, unit: '' },
      ],
      details: { connections: CONNECTIONS, seconds, oneKey, threeKeys, derivationMicroseconds: derivation },
      notes: [],
      problems,
    };
  },
};
