// Configuration (D1): read from the environment once at start, validated, frozen.
// A bad value stops the process with a message that names the variable.

import { existsSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import {
  type AccountKey,
  KEY_VARIABLES,
  parseAccountKey,
  SANDBOX_ACCOUNT_KEYS,
  TEST_MNEMONIC_COIN_FINGERPRINTS,
} from './crypto/keys.ts';
import {
  KEY_FAMILIES,
  type KeyFamily,
  NETWORK_CODES,
  NETWORKS,
  type NetworkCode,
} from './crypto/networks.ts';
import { findCurrency } from './platform/money.ts';

export type AppEnv = 'sandbox' | 'production';

export interface Config {
  appEnv: AppEnv;
  port: number;
  host: string;
  logLevel: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** Bound on opening one database connection (0: none). */
  databaseConnectTimeoutMs: number;
  /** Bound on the answer to one statement; the connection is then closed (0: none). */
  databaseStatementTimeoutMs: number;
  dataDir: string;
  authRealm: string;
  authPublicUrl: string | undefined;
  authIssuer: string | undefined;
  authJwksUrl: string | undefined;
  tokenTtlSeconds: number;
  sandboxClientId: string;
  sandboxClientSecret: string;
  adminApiKey: string | undefined;
  /** METRICS_TOKEN: the Bearer credential /metrics asks for; unset, /metrics answers anyone. */
  metricsToken: string | undefined;
  secretsEncryptionKey: string | undefined;
  /** Keys that only open and verify what they sealed and hashed, while a rotation is under way. */
  secretsEncryptionKeysPrevious: readonly string[];
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  tokenFailureLimitClient: number;
  tokenFailureLimitAddress: number;
  webhookTimeoutMs: number;
  webhookRetryScheduleMs: number[];
  webhookConcurrency: number;
  webhookConcurrencyPerSubscription: number;
  webhookLeaseMs: number;
  webhookAllowPrivateTargets: boolean;
  /** WEBHOOK_CA_FILE: PEM file of extra CAs trusted for deliveries (beside the system store). */
  webhookCaFile: string | undefined;
  shutdownTimeoutMs: number;
  /** PAYMENT_CONNECTOR: the rail of payouts and inbound bank deposits (D21). */
  paymentConnector: 'sandbox' | 'manual';
  /** SANDBOX_STEP_DELAY_MS: how long each simulated step takes (D24). */
  sandboxStepDelayMs: number;
  /**
   * DEPOSIT_BANK_ACCOUNTS: the platform's collection accounts by currency, shown in bank-transfer deposit
   * instructions (D20, D21). Sandbox: public example accounts for USD, EUR and GBP.
   */
  depositBankAccounts: Readonly<Record<string, CollectionAccount>>;
  /** QUOTE_TTL_SECONDS: how long a quote stays open (D20). */
  quoteTtlSeconds: number;
  /** TRANSFER_FUNDING_TTL_SECONDS: how long a transfer waits for its funds before it expires (D20). */
  transferFundingTtlSeconds: number;
  /**
   * DEPOSIT_TTL_SECONDS: how long a deposit waits for its funds before it expires (D21); a transfer's deposit
   * leg waits that long past the transfer's funding deadline.
   */
  depositTtlSeconds: number;
  /** Durable timers (D21): job batches one worker runs at once. */
  jobConcurrency: number;
  /**
   * FX_PEGS: pegged currency -> anchor (D15). A pegged code takes its anchor's rates; the two convert
   * at 1.
   */
  fxPegs: Readonly<Record<string, string>>;
  /** FX_RATE_MAX_AGE_HOURS: a rate older than this cannot be quoted (D15); never applied in sandbox. */
  fxRateMaxAgeHours: number;
  /** SANCTIONS_MATCH_THRESHOLD (D18): the lowest score of a hit, as a decimal string with 2 decimals. */
  sanctionsMatchThreshold: string;
  /** SANCTIONS_IMPORT_MAX_MB: the largest sanctions list import request the operator API accepts. */
  sanctionsImportMaxBytes: number;
  /** Fastify trustProxy: false, true, a hop count, or addresses/CIDRs of trusted proxies. */
  trustProxy: boolean | number | string[];
  /**
   * Account keys that derive deposit addresses (D22), by key family. A family without one is not offered;
   * the sandbox defaults to the test mnemonic's keys.
   */
  cryptoKeys: Readonly<Partial<Record<KeyFamily, AccountKey>>>;
  /** Confirmations after which a crypto deposit is received, by network (CRYPTO_CONFIRMATIONS). */
  cryptoConfirmations: Readonly<Record<NetworkCode, number>>;
}

export interface CollectionAccount {
  account_holder: string;
  bank_name: string;
  bic: string;
  iban?: string;
  account_number?: string;
  routing_code?: string;
}

/** The fields of a collection account, as deposit instructions show them. */
const COLLECTION_ACCOUNT_FIELDS = [
  'account_holder',
  'bank_name',
  'bic',
  'iban',
  'account_number',
  'routing_code',
] as const satisfies readonly (keyof CollectionAccount)[];

/** Sandbox collection accounts: public example identifiers with valid checksums, never real money. */
export const SANDBOX_COLLECTION_ACCOUNTS: Readonly<Record<string, CollectionAccount>> = {
  EUR: {
    account_holder: 'Payment Service Sandbox Ltd',
    bank_name: 'Commerzbank',
    bic: 'COBADEFFXXX',
    iban: 'DE89370400440532013000',
  },
  GBP: {
    account_holder: 'Payment Service Sandbox Ltd',
    bank_name: 'National Westminster Bank',
    bic: 'NWBKGB2L',
    account_number: '31926819',
    routing_code: '601613',
  },
  USD: {
    account_holder: 'Payment Service Sandbox Inc',
    bank_name: 'JPMorgan Chase Bank',
    bic: 'CHASUS33',
    account_number: '000123456789',
    routing_code: '021000021',
  },
};

function collectionAccounts(env: Env, appEnv: AppEnv): Readonly<Record<string, CollectionAccount>> {
  const raw = optional(env, 'DEPOSIT_BANK_ACCOUNTS');
  if (raw === undefined) return appEnv === 'sandbox' ? SANDBOX_COLLECTION_ACCOUNTS : {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('DEPOSIT_BANK_ACCOUNTS', 'must be a JSON object of currency -> account');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('DEPOSIT_BANK_ACCOUNTS', 'must be a JSON object of currency -> account');
  }
  for (const [currency, account] of Object.entries(parsed)) {
    const fields = account as Record<string, unknown>;
    const text = (name: string) => typeof fields?.[name] === 'string' && (fields[name] as string).length > 0;
    // The entry is shown to payers as it is (deposit instructions and their events): only the fields the
    // instructions have, each a text.
    const stray = Object.keys(fields ?? {}).find(
      (name) => !(COLLECTION_ACCOUNT_FIELDS as readonly string[]).includes(name) || !text(name),
    );
    if (stray !== undefined) {
      throw new ConfigError(
        'DEPOSIT_BANK_ACCOUNTS',
        `entry ${currency}: ${stray} is not one of ${COLLECTION_ACCOUNT_FIELDS.join(', ')} with a non-empty text`,
      );
    }
    if (
      !/^[A-Z]{3,5}$/.test(currency) ||
      !text('account_holder') ||
      !text('bank_name') ||
      !text('bic') ||
      !(text('iban') || (text('account_number') && text('routing_code')))
    ) {
      throw new ConfigError(
        'DEPOSIT_BANK_ACCOUNTS',
        `entry ${currency} needs account_holder, bank_name, bic and iban or account_number with routing_code`,
      );
    }
  }
  return parsed as Record<string, CollectionAccount>;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

function redisKeyPrefix(env: Env): string {
  const prefix = str(env, 'REDIS_KEY_PREFIX', 'payment-service:');
  if (!/^[\w.:-]{1,64}$/.test(prefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1 to 64 letters, digits, "_", ".", ":" or "-"');
  }
  return prefix;
}

function existingFile(env: Env, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && !existsSync(raw)) throw new ConfigError(name, `names no readable file: "${raw}"`);
  return raw;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses "250ms,1s,5m,2h" (D10) into milliseconds. */
export function parseDurationList(name: string, raw: string): number[] {
  const parts = raw.split(',').map((part) => part.trim());
  return parts.map((part) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(part);
    if (!match)
      throw new ConfigError(
        name,
        `must be a comma list of durations like 250ms,1s,5m,2h; "${part}" is not one`,
      );
    return Number(match[1]) * DURATION_UNITS[match[2]!]!;
  });
}

/** TRUST_PROXY: unset/false, true, a number of hops, or a comma list of proxy addresses or CIDRs. */
function trustProxy(env: Env): boolean | number | string[] {
  const raw = optional(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const valid =
      address !== undefined && ipaddr.isValid(address) && (bits === undefined || /^\d{1,3}$/.test(bits));
    if (!valid)
      throw new ConfigError(
        'TRUST_PROXY',
        `must be true, false, a hop count or addresses/CIDRs; "${entry}" is not one`,
      );
  }
  return entries;
}

/** D15: the stablecoins follow the US dollar. */
export const DEFAULT_FX_PEGS = 'USDC=USD,USDT=USD';

/**
 * FX_PEGS (D15): a comma list of `PEGGED=ANCHOR` currency codes, or `none`. Both codes must be known
 * currencies; an anchor cannot itself be pegged, and a code is pegged once.
 */
export function parseFxPegs(raw: string): Readonly<Record<string, string>> {
  const name = 'FX_PEGS';
  if (raw.trim() === 'none') return Object.freeze({});
  const pegs: Record<string, string> = {};
  for (const part of raw.split(',').map((entry) => entry.trim())) {
    const match = /^([A-Z]{3,4})=([A-Z]{3,4})$/.exec(part);
    if (!match) {
      throw new ConfigError(
        name,
        `must be a comma list like USDC=USD,USDT=USD, or none; "${part}" is not one`,
      );
    }
    const [, pegged, anchor] = match as unknown as [string, string, string];
    for (const code of [pegged, anchor]) {
      if (!findCurrency(code)) throw new ConfigError(name, `names an unknown currency: ${code}`);
    }
    if (pegged === anchor) throw new ConfigError(name, `pegs ${pegged} to itself`);
    if (pegs[pegged] !== undefined) throw new ConfigError(name, `pegs ${pegged} twice`);
    pegs[pegged] = anchor;
  }
  for (const [pegged, anchor] of Object.entries(pegs)) {
    if (pegs[anchor] !== undefined) {
      throw new ConfigError(
        name,
        `pegs ${pegged} to ${anchor}, which is itself pegged; peg to ${pegs[anchor]}`,
      );
    }
  }
  return Object.freeze(pegs);
}

/** The sandbox simulates its rail; production pays through the manual rail unless told otherwise. */
function paymentConnector(env: Env, appEnv: AppEnv): 'sandbox' | 'manual' {
  const connector = oneOf(env, 'PAYMENT_CONNECTOR', appEnv === 'sandbox' ? 'sandbox' : 'manual', [
    'sandbox',
    'manual',
  ] as const);
  if (appEnv === 'production' && connector === 'sandbox') {
    throw new ConfigError(
      'PAYMENT_CONNECTOR',
      'cannot be "sandbox" when APP_ENV=production: nothing would be paid',
    );
  }
  return connector;
}

/** SANCTIONS_MATCH_THRESHOLD: a score above 0 and at most 1, with at most 2 decimals; `0.9` -> `0.90`. */
function matchThreshold(env: Env): string {
  const raw = str(env, 'SANCTIONS_MATCH_THRESHOLD', '0.85');
  if (!/^(0(\.\d{1,2})?|1(\.0{1,2})?)$/.test(raw) || Number(raw) === 0) {
    throw new ConfigError(
      'SANCTIONS_MATCH_THRESHOLD',
      `must be a decimal above 0 and at most 1 with at most 2 decimals, got "${raw}"`,
    );
  }
  return Number(raw).toFixed(2);
}

/** CRYPTO_XPUB_EVM, CRYPTO_XPUB_TRON, CRYPTO_ZPUB_BTC: validated account keys; sandbox defaults (D22). */
function cryptoKeys(env: Env, appEnv: AppEnv): Partial<Record<KeyFamily, AccountKey>> {
  const keys: Partial<Record<KeyFamily, AccountKey>> = {};
  for (const family of KEY_FAMILIES) {
    const variable = KEY_VARIABLES[family];
    const raw = optional(env, variable) ?? (appEnv === 'sandbox' ? SANDBOX_ACCOUNT_KEYS[family] : undefined);
    if (raw === undefined) continue;
    let key: AccountKey;
    try {
      key = parseAccountKey(family, raw, appEnv === 'sandbox');
    } catch (error) {
      throw new ConfigError(variable, (error as Error).message);
    }
    // The sandbox's keys come from a published mnemonic: anyone can spend what the addresses of any of its
    // accounts receive. A sandbox configuration copied into production, or another account of that
    // mnemonic, must not start. (A key of another wallet shares the 4-byte parent fingerprint by chance
    // once in 2^32.)
    if (appEnv !== 'sandbox' && key.parentFingerprint === TEST_MNEMONIC_COIN_FINGERPRINTS[family]) {
      throw new ConfigError(
        variable,
        "is an account key of the sandbox's published test mnemonic (abandon...about): anyone could spend " +
          'what its addresses receive; configure an account key of your own',
      );
    }
    keys[family] = Object.freeze(key);
  }
  return Object.freeze(keys);
}

/** CRYPTO_CONFIRMATIONS: `network:count` pairs, comma-separated, over the networks' defaults. */
function cryptoConfirmations(env: Env): Record<NetworkCode, number> {
  const confirmations = Object.fromEntries(
    NETWORK_CODES.map((code) => [code, NETWORKS[code].defaultConfirmations]),
  ) as Record<NetworkCode, number>;
  const raw = optional(env, 'CRYPTO_CONFIRMATIONS');
  if (raw === undefined) return Object.freeze(confirmations);
  for (const part of raw.split(',').map((entry) => entry.trim())) {
    const match = /^([a-z]+):(\d{1,4})$/.exec(part);
    const code = match?.[1];
    if (!match || code === undefined || !(NETWORK_CODES as readonly string[]).includes(code)) {
      throw new ConfigError(
        'CRYPTO_CONFIRMATIONS',
        `must be a comma list of network:count with networks ${NETWORK_CODES.join(', ')}; "${part}" is not one`,
      );
    }
    const count = Number(match[2]);
    if (count < 1 || count > 1000) {
      throw new ConfigError(
        'CRYPTO_CONFIRMATIONS',
        `must give each network 1 to 1000 confirmations, got ${part}`,
      );
    }
    confirmations[code as NetworkCode] = count;
  }
  return Object.freeze(confirmations);
}

/** SECRETS_ENCRYPTION_KEYS_PREVIOUS: comma-separated keys, each 64 hex characters, none the current key. */
function previousEncryptionKeys(env: Env, current: string | undefined): readonly string[] {
  const name = 'SECRETS_ENCRYPTION_KEYS_PREVIOUS';
  const raw = optional(env, name);
  if (raw === undefined) return [];
  const keys = raw.split(',').map((key) => key.trim().toLowerCase());
  for (const key of keys) {
    if (!/^[0-9a-f]{64}$/.test(key)) {
      throw new ConfigError(name, 'must be comma-separated keys of 64 hexadecimal characters (32 bytes)');
    }
  }
  if (current === undefined)
    throw new ConfigError(name, 'needs SECRETS_ENCRYPTION_KEY, the key they were rotated to');
  if (keys.includes(current.toLowerCase()))
    throw new ConfigError(name, 'must not hold SECRETS_ENCRYPTION_KEY itself');
  if (new Set(keys).size !== keys.length) throw new ConfigError(name, 'names a key twice');
  return Object.freeze(keys);
}

/** Time a worker needs beyond the request timeout to record an outcome under its lease. */
export const LEASE_MARGIN_MS = 1_000;

/** D10 default schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h,10h';

export function loadConfig(env: Env = process.env): Config {
  const appEnv = oneOf(env, 'APP_ENV', 'sandbox', ['sandbox', 'production'] as const);
  const secretsEncryptionKey = optional(env, 'SECRETS_ENCRYPTION_KEY');
  if (secretsEncryptionKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(secretsEncryptionKey)) {
    throw new ConfigError('SECRETS_ENCRYPTION_KEY', 'must be 64 hexadecimal characters (32 bytes)');
  }
  if (appEnv === 'production' && secretsEncryptionKey === undefined) {
    throw new ConfigError('SECRETS_ENCRYPTION_KEY', 'is required when APP_ENV=production (D13)');
  }
  const secretsEncryptionKeysPrevious = previousEncryptionKeys(env, secretsEncryptionKey);
  const adminApiKey = optional(env, 'ADMIN_API_KEY');
  if (adminApiKey !== undefined && adminApiKey.length < 16) {
    throw new ConfigError('ADMIN_API_KEY', 'must be at least 16 characters');
  }
  const metricsToken = optional(env, 'METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters');
  }
  const authIssuer = url(env, 'AUTH_ISSUER', ['http:', 'https:']);
  const authJwksUrl = url(env, 'AUTH_JWKS_URL', ['http:', 'https:']);
  if ((authIssuer === undefined) !== (authJwksUrl === undefined)) {
    throw new ConfigError(
      authIssuer ? 'AUTH_JWKS_URL' : 'AUTH_ISSUER',
      'must be set together with the other of AUTH_ISSUER / AUTH_JWKS_URL',
    );
  }
  const realmDefault = appEnv === 'sandbox' ? 'sandbox' : 'production';
  const authRealm = str(env, 'AUTH_REALM', realmDefault);
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(authRealm)) {
    throw new ConfigError('AUTH_REALM', 'must be lowercase letters, digits, "-" or "_"');
  }
  if (appEnv === 'sandbox' && authRealm !== 'sandbox') {
    throw new ConfigError('AUTH_REALM', 'must be "sandbox" when APP_ENV=sandbox (contract section 5)');
  }
  const concurrency = int(env, 'WEBHOOK_CONCURRENCY', 64, 1, 10_000);
  const webhookTimeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 30_000, 100, 300_000);
  const webhookLeaseMs = int(env, 'WEBHOOK_LEASE_MS', 60_000, 1_000, 3_600_000);
  if (webhookLeaseMs < webhookTimeoutMs + LEASE_MARGIN_MS) {
    // The lease must outlast the request and the recording of its outcome, or a second worker could
    // send the same attempt and the first one's outcome would be fenced out.
    throw new ConfigError(
      'WEBHOOK_LEASE_MS',
      `must be at least WEBHOOK_TIMEOUT_MS + ${LEASE_MARGIN_MS} (${webhookTimeoutMs + LEASE_MARGIN_MS})`,
    );
  }
  return Object.freeze({
    appEnv,
    port: int(env, 'PORT', 8080, 0, 65_535),
    host: str(env, 'HOST', '0.0.0.0'),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ] as const),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 20, 1, 1000),
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 10_000, 0, 600_000),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 60_000, 0, 3_600_000),
    dataDir: str(env, 'DATA_DIR', './data'),
    authRealm,
    authPublicUrl: url(env, 'AUTH_PUBLIC_URL', ['http:', 'https:']),
    authIssuer,
    authJwksUrl,
    tokenTtlSeconds: int(env, 'TOKEN_TTL_SECONDS', 300, 30, 86_400),
    sandboxClientId: str(env, 'SANDBOX_CLIENT_ID', 'sandbox-client'),
    sandboxClientSecret: str(env, 'SANDBOX_CLIENT_SECRET', 'sandbox-secret'),
    adminApiKey,
    metricsToken,
    secretsEncryptionKey,
    secretsEncryptionKeysPrevious,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    // Namespaces the rate-limit keys, so that several deployments (or test runs) can share one Redis.
    redisKeyPrefix: redisKeyPrefix(env),
    rateLimitMax: int(env, 'RATE_LIMIT_MAX', 1200, 1, 10_000_000),
    rateLimitWindowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
    tokenFailureLimitClient: int(env, 'TOKEN_FAILURE_LIMIT_CLIENT', 20, 1, 1_000_000),
    tokenFailureLimitAddress: int(env, 'TOKEN_FAILURE_LIMIT_ADDRESS', 100, 1, 1_000_000),
    webhookTimeoutMs,
    webhookRetryScheduleMs: parseDurationList(
      'WEBHOOK_RETRY_SCHEDULE',
      str(env, 'WEBHOOK_RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE),
    ),
    webhookConcurrency: concurrency,
    webhookConcurrencyPerSubscription: int(env, 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION', 8, 1, concurrency),
    webhookLeaseMs,
    webhookAllowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    webhookCaFile: existingFile(env, 'WEBHOOK_CA_FILE'),
    trustProxy: trustProxy(env),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 2, 1, 64),
    paymentConnector: paymentConnector(env, appEnv),
    sandboxStepDelayMs: int(env, 'SANDBOX_STEP_DELAY_MS', 2_000, 0, 3_600_000),
    depositTtlSeconds: int(env, 'DEPOSIT_TTL_SECONDS', 86_400, 60, 31_536_000),
    quoteTtlSeconds: int(env, 'QUOTE_TTL_SECONDS', 900, 10, 86_400),
    transferFundingTtlSeconds: int(env, 'TRANSFER_FUNDING_TTL_SECONDS', 86_400, 60, 31_536_000),
    depositBankAccounts: collectionAccounts(env, appEnv),
    fxPegs: parseFxPegs(str(env, 'FX_PEGS', DEFAULT_FX_PEGS)),
    fxRateMaxAgeHours: int(env, 'FX_RATE_MAX_AGE_HOURS', 72, 1, 8_760),
    sanctionsMatchThreshold: matchThreshold(env),
    sanctionsImportMaxBytes: int(env, 'SANCTIONS_IMPORT_MAX_MB', 64, 1, 1024) * 1024 * 1024,
    cryptoKeys: cryptoKeys(env, appEnv),
    cryptoConfirmations: cryptoConfirmations(env),
  });
}
