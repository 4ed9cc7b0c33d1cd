// Configuration (D1): defaults, and every bad value stops start-up with a message naming the variable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseDurationList } from '../src/config.ts';

const rejects = (env: Record<string, string>, variable: string) => {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) =>
      error instanceof ConfigError && error.variable === variable && error.message.includes(variable),
  );
};

describe('configuration (D1)', () => {
  it('defaults to sandbox on port 8080 with the D1, D10 and D12 defaults', () => {
    const config = loadConfig({});
    assert.equal(config.appEnv, 'sandbox');
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.authRealm, 'sandbox');
    assert.equal(config.sandboxClientId, 'sandbox-client');
    assert.equal(config.sandboxClientSecret, 'sandbox-secret');
    assert.equal(config.tokenTtlSeconds, 300);
    assert.equal(config.rateLimitMax, 1200);
    assert.equal(config.rateLimitWindowMs, 60_000);
    assert.equal(config.tokenFailureLimitClient, 20);
    assert.equal(config.tokenFailureLimitAddress, 100);
    assert.equal(config.webhookTimeoutMs, 30_000);
    assert.deepEqual(
      config.webhookRetryScheduleMs,
      [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 36_000_000],
    );
    assert.equal(config.webhookAllowPrivateTargets, false);
    assert.equal(config.adminApiKey, undefined);
  });

  it('bounds opening a database connection and its answer to a statement by default; 0 turns a bound off', () => {
    const config = loadConfig({});
    assert.equal(config.databaseConnectTimeoutMs, 10_000);
    assert.equal(config.databaseStatementTimeoutMs, 60_000);
    const off = loadConfig({ DATABASE_CONNECT_TIMEOUT_MS: '0', DATABASE_STATEMENT_TIMEOUT_MS: '0' });
    assert.equal(off.databaseConnectTimeoutMs, 0);
    assert.equal(off.databaseStatementTimeoutMs, 0);
  });
  it('rejects a DATABASE_CONNECT_TIMEOUT_MS that is not a whole number', () =>
    rejects({ DATABASE_CONNECT_TIMEOUT_MS: '5s' }, 'DATABASE_CONNECT_TIMEOUT_MS'));
  it('rejects a DATABASE_STATEMENT_TIMEOUT_MS out of range', () =>
    rejects({ DATABASE_STATEMENT_TIMEOUT_MS: '3600001' }, 'DATABASE_STATEMENT_TIMEOUT_MS'));

  it('uses the production realm by default in production', () => {
    const config = loadConfig({ APP_ENV: 'production', SECRETS_ENCRYPTION_KEY: 'b'.repeat(64) });
    assert.equal(config.authRealm, 'production');
  });

  it('rejects an unknown APP_ENV', () => rejects({ APP_ENV: 'staging' }, 'APP_ENV'));
  it('rejects a PORT that is not a number', () => rejects({ PORT: 'eighty' }, 'PORT'));
  it('rejects a PORT out of range', () => rejects({ PORT: '70000' }, 'PORT'));
  it('rejects a DATABASE_URL that is not a postgres URL', () =>
    rejects({ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL'));
  it('rejects a DATABASE_URL that is not a URL', () =>
    rejects({ DATABASE_URL: 'not a url' }, 'DATABASE_URL'));
  it('requires SECRETS_ENCRYPTION_KEY in production (D13)', () =>
    rejects({ APP_ENV: 'production' }, 'SECRETS_ENCRYPTION_KEY'));
  it('rejects a SECRETS_ENCRYPTION_KEY that is not 32 bytes of hex', () =>
    rejects({ SECRETS_ENCRYPTION_KEY: 'abc' }, 'SECRETS_ENCRYPTION_KEY'));
  it('rejects a short ADMIN_API_KEY', () => rejects({ ADMIN_API_KEY: 'short' }, 'ADMIN_API_KEY'));
  it('takes DEPOSIT_BANK_ACCOUNTS entries with only the fields deposit instructions show', () => {
    const eur = {
      account_holder: 'Ops Ltd',
      bank_name: 'Commerzbank',
      bic: 'COBADEFFXXX',
      iban: 'DE89370400440532013000',
    };
    const usd = {
      account_holder: 'Ops Inc',
      bank_name: 'JPMorgan Chase Bank',
      bic: 'CHASUS33',
      account_number: '000123456789',
      routing_code: '021000021',
    };
    assert.deepEqual(
      loadConfig({ DEPOSIT_BANK_ACCOUNTS: JSON.stringify({ EUR: eur, USD: usd }) }).depositBankAccounts,
      {
        EUR: eur,
        USD: usd,
      },
    );
    const refused = (entry: unknown) =>
      rejects({ DEPOSIT_BANK_ACCOUNTS: JSON.stringify({ EUR: entry }) }, 'DEPOSIT_BANK_ACCOUNTS');
    refused({ ...eur, bank_address: 'Kaiserplatz, Frankfurt' });
    refused({ ...eur, iban: 89370400 });
    refused({ ...eur, routing_code: '' });
    refused({ account_holder: 'Ops Ltd', bank_name: 'Commerzbank', bic: 'COBADEFFXXX' });
    refused('DE89370400440532013000');
  });
  it('rejects a short METRICS_TOKEN', () => rejects({ METRICS_TOKEN: 'fifteen-chars!!' }, 'METRICS_TOKEN'));
  it('rejects AUTH_ISSUER without AUTH_JWKS_URL', () =>
    rejects({ AUTH_ISSUER: 'https://id.example/realms/x' }, 'AUTH_JWKS_URL'));
  it('rejects a realm other than sandbox in sandbox', () => rejects({ AUTH_REALM: 'other' }, 'AUTH_REALM'));
  it('rejects a malformed retry schedule', () =>
    rejects({ WEBHOOK_RETRY_SCHEDULE: '5s,soon' }, 'WEBHOOK_RETRY_SCHEDULE'));
  it('rejects a boolean that is not true or false', () =>
    rejects({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'));
  it('rejects a lease that does not outlast the request timeout by the recording margin', () => {
    rejects({ WEBHOOK_TIMEOUT_MS: '30000', WEBHOOK_LEASE_MS: '20000' }, 'WEBHOOK_LEASE_MS');
    rejects({ WEBHOOK_TIMEOUT_MS: '30000', WEBHOOK_LEASE_MS: '30999' }, 'WEBHOOK_LEASE_MS');
    assert.equal(
      loadConfig({ WEBHOOK_TIMEOUT_MS: '30000', WEBHOOK_LEASE_MS: '31000' }).webhookLeaseMs,
      31_000,
    );
  });
  it('trusts no proxy by default, and parses TRUST_PROXY forms', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, [
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
  });
  it('rejects a TRUST_PROXY entry that is not an address', () =>
    rejects({ TRUST_PROXY: '10.0.0.0/8,lb.internal' }, 'TRUST_PROXY'));
  it('rejects an unknown LOG_LEVEL', () => rejects({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'));
  it('rejects a REDIS_URL with another scheme', () =>
    rejects({ REDIS_URL: 'http://127.0.0.1:6379' }, 'REDIS_URL'));

  it('pegs USDC and USDT to USD and allows rates 72 hours old by default (D15)', () => {
    const config = loadConfig({});
    assert.deepEqual(config.fxPegs, { USDC: 'USD', USDT: 'USD' });
    assert.equal(config.fxRateMaxAgeHours, 72);
  });
  it('reads FX_PEGS as a comma list of PEGGED=ANCHOR, or none', () => {
    assert.deepEqual(loadConfig({ FX_PEGS: 'USDC=USD' }).fxPegs, { USDC: 'USD' });
    assert.deepEqual(loadConfig({ FX_PEGS: 'USDT=USD, BGN=EUR' }).fxPegs, { USDT: 'USD', BGN: 'EUR' });
    assert.deepEqual(loadConfig({ FX_PEGS: 'none' }).fxPegs, {});
  });
  it('rejects an FX_PEGS entry that is malformed, names an unknown currency, or pegs in a chain or twice', () => {
    for (const value of ['USDC:USD', 'USDC=', 'usdc=usd', 'USDC=USD,', 'XXXX=USD', 'USDC=ABC', 'USD=USD']) {
      rejects({ FX_PEGS: value }, 'FX_PEGS');
    }
    rejects({ FX_PEGS: 'USDC=USD,USDC=EUR' }, 'FX_PEGS');
    rejects({ FX_PEGS: 'USDC=USDT,USDT=USD' }, 'FX_PEGS');
  });
  it('reads FX_RATE_MAX_AGE_HOURS from 1 to 8760', () => {
    assert.equal(loadConfig({ FX_RATE_MAX_AGE_HOURS: '96' }).fxRateMaxAgeHours, 96);
    for (const value of ['0', '8761', '1.5', 'a day'])
      rejects({ FX_RATE_MAX_AGE_HOURS: value }, 'FX_RATE_MAX_AGE_HOURS');
  });

  it('parses duration lists in ms, s, m and h', () => {
    assert.deepEqual(parseDurationList('X', '250ms,1s,5m,2h'), [250, 1_000, 300_000, 7_200_000]);
  });

  it('names the variable when the process starts with a bad value', async () => {
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(process.execPath, ['src/main.ts', 'serve'], {
      env: { ...process.env, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /Invalid configuration: PORT must be a whole number/);
  });
});
