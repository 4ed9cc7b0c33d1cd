// Idempotency keys (D14), for every route that declares `config: { idempotent: true }`.
//
// The hook wraps such a route's handler, so it runs after the bearer token, rate limit, permission and
// body validation (D5 order): a request that fails those stores nothing and may be retried with the key.
// Then, with an `Idempotency-Key` header:
//   - a new key is taken (the primary key of idempotency_keys decides between concurrent requests, in
//     every API process), the operation runs, and its response is stored;
//   - a repeat with the same method, path and an equal JSON body replays the stored status and body
//     with `Idempotent-Replayed: true`; the same key on another path or body is 422
//     IDEMPOTENCY_KEY_REUSED; a repeat while the first still runs is 409 IDEMPOTENCY_KEY_IN_USE.
// The operation's own transaction marks the key as committed (db/pool.ts beforeCommit), fenced by the
// request's owner token: a crash between the commit and the stored response can never let a retry run
// the operation a second time, and a request whose key was taken over cannot commit.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import stringify from 'safe-stable-stringify';
import { beforeCommit, type Pool } from '../db/pool.ts';
import type { App } from './deps.ts';
import { AppError, validationFailed } from './errors.ts';
import * as repo from './idempotency-repository.ts';
import type { SecretBox } from './secrets.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** How long keys and their responses are kept (D14). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * How long a running request holds its key. Past it, a retry with the same body may take the key over,
 * but only if the first request's operation has not committed; if the first one commits later all the
 * same, its fenced commit fails and it rolls back.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

/** 1..255 printable ASCII characters (D14). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The header as the OpenAPI document describes it on every route that honours it. */
export const IDEMPOTENCY_KEY_HEADER_SCHEMA = {
  type: 'string',
  pattern: KEY_PATTERN.source,
  description:
    `Optional (D14): 1 to 255 printable ASCII characters, kept ${IDEMPOTENCY_RETENTION_MS / 3_600_000} hours. ` +
    'A repeat with the same method, path and body answers the first response again with the header ' +
    '`Idempotent-Replayed: true`; the same key with another path or body is 422 IDEMPOTENCY_KEY_REUSED; a ' +
    'repeat while the first still runs is 409 IDEMPOTENCY_KEY_IN_USE.',
} as const;

interface KeyHold {
  organisationId: string;
  key: string;
  owner: string;
  /**
   * The operation refused an id its body refers to (a 404 naming the field: a beneficiary_id or
   * corridor_id unknown to the organisation): a refusal of the body like a 422, so the client may correct
   * the id under the same key. A 404 of the path's own id names no field and is kept.
   */
  unknownBodyId?: boolean;
}

const holds = new WeakMap<FastifyRequest, KeyHold>();

/** sha256 over method, path and the body as canonical JSON (key order does not matter). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${stringify(body ?? null)}`)
    .digest('hex');
}

function inUse(): AppError {
  return new AppError(
    'IDEMPOTENCY_KEY_IN_USE',
    'A request with this Idempotency-Key is still being processed; retry after it has finished',
  );
}

/**
 * Stored responses are sealed with the D13 key: a response may hold what is encrypted at rest elsewhere
 * (a beneficiary's account identifiers, D19).
 */
export function registerIdempotency(app: App, pool: Pool, secretBox: SecretBox): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    const handler = route.handler as RouteHandlerMethod;
    route.handler = async function idempotentHandler(
      this: unknown,
      request: FastifyRequest,
      reply: FastifyReply,
    ) {
      const header = request.headers[IDEMPOTENCY_HEADER];
      if (header === undefined || request.principal === undefined)
        return handler.call(this as never, request, reply);
      if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
        throw validationFailed(
          'Idempotency-Key',
          'Idempotency-Key must be 1 to 255 printable ASCII characters',
        );
      }
      const organisationId = request.principal.organisationId;
      const path = request.url.split('?')[0] ?? request.url;
      const fingerprint = requestFingerprint(request.method, path, request.body);
      const owner = randomUUID();
      const claimed = await repo.claimKey(pool, {
        organisationId,
        key: header,
        fingerprint,
        method: request.method,
        path,
        owner,
        leaseMs: IDEMPOTENCY_LEASE_MS,
        retentionMs: IDEMPOTENCY_RETENTION_MS,
      });
      if (!claimed) {
        const existing = await repo.findKey(pool, organisationId, header);
        // Gone between the two statements (expired and purged, or released by a failed first request):
        // the client may simply retry.
        if (!existing) throw inUse();
        if (existing.fingerprint !== fingerprint) {
          throw new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was used with another path or body; use a new key for a new request',
            { field: 'Idempotency-Key' },
          );
        }
        if (
          existing.state === 'completed' &&
          existing.response_status !== null &&
          existing.response_body !== null
        ) {
          return reply
            .code(existing.response_status)
            .header(REPLAYED_HEADER, 'true')
            .type('application/json')
            .serializer((payload: unknown) => payload as string)
            .send(secretBox.decrypt(existing.response_body));
        }
        if (existing.committed_at !== null && (existing.locked_until?.getTime() ?? 0) <= Date.now()) {
          // The first request's operation took effect but its process stopped before storing the
          // response: the operation must not run again, and its response cannot be replayed.
          throw new AppError(
            'IDEMPOTENCY_KEY_IN_USE',
            'The request with this Idempotency-Key took effect but its response was lost; read the resource ' +
              '(by its external_id, for example) instead of retrying',
          );
        }
        throw inUse();
      }
      const hold: KeyHold = { organisationId, key: header, owner };
      holds.set(request, hold);
      const markCommitted = async (tx: Parameters<typeof repo.markCommitted>[0]) => {
        if (!(await repo.markCommitted(tx, organisationId, header, owner))) throw inUse();
      };
      try {
        return await beforeCommit.run(markCommitted, () => handler.call(this as never, request, reply));
      } catch (error) {
        if (error instanceof AppError && error.code === 'NOT_FOUND' && error.field !== undefined) {
          hold.unknownBodyId = true;
        }
        throw error;
      }
    };
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const hold = holds.get(request);
    if (hold === undefined) return payload;
    holds.delete(request);
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    try {
      if (reply.statusCode >= 500 || reply.statusCode === 422 || hold.unknownBodyId) {
        // Nothing is stored for a validation failure or a 5xx (D14): the same key may be retried. Unless
        // the operation took effect before it failed: running it again would repeat its effect, so that
        // response is kept and replayed like any other.
        await repo.releaseKey(pool, hold.organisationId, hold.key, hold.owner);
      }
      const stored = secretBox.encrypt(body);
      await repo.storeResponse(pool, hold.organisationId, hold.key, hold.owner, reply.statusCode, stored);
    } catch (error) {
      // The response still goes out; the key stays running until its lease ends.
      request.log.error({ err: error }, 'could not store the idempotent response');
    }
    return payload;
  });
}

/** Deletes expired keys in batches; returns how many. */
export async function purgeExpiredKeys(pool: Pool, batch = 1_000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await repo.purgeExpired(pool, batch);
    total += deleted;
    if (deleted < batch) return total;
  }
}
