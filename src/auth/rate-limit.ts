// Rate limits (D12) with @fastify/rate-limit: counts in memory for one process, or in Redis when
// REDIS_URL is set so that every process of the deployment shares one count.
//  - API: RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS per client on every route that requires a
//    token; 429 RATE_LIMIT_EXCEEDED in the platform envelope with Retry-After and RateLimit-* (D5).
//  - Token endpoint: failed requests per presented client id (TOKEN_FAILURE_LIMIT_CLIENT) and per
//    address (TOKEN_FAILURE_LIMIT_ADDRESS) a minute; past them 429 in the OAuth envelope.
import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { App, AppDeps } from '../platform/deps.ts';
import { AppError } from '../platform/errors.ts';

const TOKEN_FAILURE_WINDOW_MS = 60_000;

/**
 * Registers the API rate limit on `app`. Call it before any route is added: the plugin attaches its
 * check to each route as it is registered. The check is a route-level onRequest hook, which Fastify
 * runs after the instance-level bearer hook (so the client is known) and before the preParsing scope
 * check: token, rate limit, permission, body (D5).
 */
export async function registerRateLimits(app: App, deps: AppDeps): Promise<void> {
  const { config } = deps;
  let redis: Redis | undefined;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, {
      // Fail fast rather than hold requests while Redis is away (see skipOnError below): no queue of
      // commands while disconnected; ioredis keeps reconnecting in the background.
      connectTimeout: 2_000,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
    });
    const connection = redis;
    // Start counting in Redis from the first request: wait (briefly) for the connection before the
    // app is ready. A Redis that is down does not stop the start; requests are then not limited.
    app.addHook('onReady', async () => {
      if (connection.status === 'ready') return;
      const ready = await Promise.race([
        new Promise<boolean>((resolve) => connection.once('ready', () => resolve(true))),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3_000).unref()),
      ]);
      if (!ready) app.log.warn('rate-limit store (Redis) not reachable at start; requests are not limited');
    });
    let lastLogged = 0;
    redis.on('error', (error: Error) => {
      // ioredis reconnects by itself; say so once a minute, not on every attempt.
      if (Date.now() - lastLogged < 60_000) return;
      lastLogged = Date.now();
      app.log.warn(
        { err: error },
        'rate-limit store (Redis) unavailable; requests are not limited meanwhile',
      );
    });
    app.addHook('onClose', async () => {
      await redis?.quit().catch(() => redis?.disconnect());
    });
  }

  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    // RateLimit-Limit / -Remaining / -Reset (IETF draft names) and Retry-After (D5).
    enableDraftSpec: true,
    // Per client (D12). Routes without a token (health, docs, token endpoint, operator API) are not
    // counted here; the token endpoint has its own failure limits below.
    keyGenerator: (request) => `api:${request.principal?.clientId ?? ''}`,
    allowList: (request) => request.principal === undefined,
    // An unreachable Redis must not take the API down with it: requests pass, a warning is logged.
    skipOnError: true,
    cache: 10_000,
    ...(redis ? { redis, nameSpace: `${config.redisKeyPrefix}rate-limit:` } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Too many requests: the limit is ${context.max} per window; retry after ${context.after}`,
      ),
  });
}

export interface TokenFailureLimiter {
  /** Seconds until this address may try again, or undefined when it may proceed. */
  addressBlockedFor(request: FastifyRequest): Promise<number | undefined>;
  /** Seconds until the presented client id may try again, or undefined when it may proceed. */
  clientBlockedFor(request: FastifyRequest): Promise<number | undefined>;
  /** Counts one failed token request against the address and, when one was presented, the client id. */
  recordFailure(request: FastifyRequest): Promise<void>;
}

/**
 * The token endpoint's failed-attempt limits (D12), on the store registerRateLimits set up (memory or
 * the shared Redis). `clientIdOf` reads the client id a request presents, without validating it.
 * Once a window holds the limit of failures, every request of that address or client id is refused
 * until the window ends, correct credentials included: that is what stops guessing.
 */
export function createTokenFailureLimiter(
  app: App,
  deps: AppDeps,
  clientIdOf: (request: FastifyRequest) => string | undefined,
): TokenFailureLimiter {
  const common = {
    timeWindow: TOKEN_FAILURE_WINDOW_MS,
    // The API's allow list (requests without a principal) must not apply here.
    allowList: () => false,
  };
  const byAddress = app.createRateLimit({
    ...common,
    max: deps.config.tokenFailureLimitAddress,
    keyGenerator: (request) => `token-failures:address:${request.ip}`,
  });
  const byClient = app.createRateLimit({
    ...common,
    max: deps.config.tokenFailureLimitClient,
    keyGenerator: (request) => `token-failures:client:${clientIdOf(request) ?? ''}`,
  });

  /** Blocked once the window holds `max` failures: one more would exceed it. */
  const wait = async (limiter: typeof byAddress, request: FastifyRequest): Promise<number | undefined> => {
    const state = await limiter(request, { increment: false });
    if (state.isAllowed || state.remaining > 0) return undefined;
    return Math.max(1, state.ttlInSeconds);
  };

  return {
    addressBlockedFor: (request) => wait(byAddress, request),
    async clientBlockedFor(request) {
      return clientIdOf(request) === undefined ? undefined : wait(byClient, request);
    },
    async recordFailure(request) {
      await byAddress(request);
      if (clientIdOf(request) !== undefined) await byClient(request);
    },
  };
}
