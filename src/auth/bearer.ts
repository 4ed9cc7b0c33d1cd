// Bearer authentication for every route that declares a scope (D5, D6).
// Order of checks on an API request (D5):
//   1. token       instance onRequest hook below, before the body is read (contract section 5 rule 7)
//   2. rate limit  route-level onRequest hook of @fastify/rate-limit (rate-limit.ts); Fastify runs
//                  route-level hooks after instance hooks, so it always sees request.principal
//   3. permission  instance preParsing hook below
//   4. body        parsing and schema validation

import { findOrganisation } from '../admin/repository.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { AppError, forbidden, UnauthorizedError } from '../platform/errors.ts';
import { keyStoreFor } from './keys.ts';
import { findClient } from './repository.ts';
import { createTokenVerifier, TokenRejectedError } from './tokens.ts';

// RFC 6750: the scheme is case-insensitive; the token is a compact JWS (three base64url parts).
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*) *$/i;

// A deleted client's tokens stop working (D7). Its state is cached per process for this long, so a
// deletion takes effect on every API process within CLIENT_CACHE_MS. LISTEN/NOTIFY would make it
// immediate, but needs a dedicated, reconnecting connection per process; for a 2 s window on tokens
// that expire within minutes anyway, one indexed lookup per client every 2 s is the simpler choice.
export const CLIENT_CACHE_MS = 2_000;
const CLIENT_CACHE_ENTRIES = 10_000;

export async function registerBearerAuth(app: App, deps: AppDeps): Promise<void> {
  const verify = createTokenVerifier(deps, keyStoreFor(deps));
  const builtInIssuer = deps.config.authIssuer === undefined;

  const clientState = new Map<string, { active: boolean; at: number }>();
  const organisationState = new Map<string, { active: boolean; at: number }>();
  /** The cached answer of `look` for `key`, asked again after CLIENT_CACHE_MS. */
  const cachedCheck = async (
    state: Map<string, { active: boolean; at: number }>,
    key: string,
    look: () => Promise<boolean>,
  ): Promise<boolean> => {
    const cached = state.get(key);
    if (cached && Date.now() - cached.at < CLIENT_CACHE_MS) return cached.active;
    const active = await look();
    if (state.size >= CLIENT_CACHE_ENTRIES) state.clear();
    state.set(key, { active, at: Date.now() });
    return active;
  };
  const clientActive = (clientId: string): Promise<boolean> =>
    cachedCheck(clientState, clientId, async () => {
      const client = await findClient(deps.pool, clientId);
      // With an external issuer (AUTH_ISSUER) its clients need not exist here: only a client this
      // service knows and has deleted is refused. The built-in issuer only knows its own clients.
      return client ? client.deleted_at === null : !builtInIssuer;
    });
  // An external issuer's org_id must name an organisation the operator created here: everything the
  // organisation owns refers to it. The built-in issuer's clients belong to one by construction.
  const organisationKnown = (organisationId: string): Promise<boolean> =>
    cachedCheck(organisationState, organisationId, async () =>
      Boolean(await findOrganisation(deps.pool, organisationId)),
    );

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.scope === undefined) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match) {
      throw new UnauthorizedError(
        header === undefined ? 'missing bearer token' : 'malformed authorization header',
      );
    }
    let principal: Awaited<ReturnType<typeof verify>>;
    try {
      principal = await verify(match[1]!);
    } catch (error) {
      if (error instanceof TokenRejectedError)
        throw new UnauthorizedError(`token rejected: ${error.message}`);
      // The issuer's keys could not be read (JWKS endpoint or storage down): not the client's fault,
      // and a new token would not help.
      request.log.error({ err: error }, 'token verification failed: signing keys unavailable');
      throw new AppError('SERVICE_UNAVAILABLE', 'Token verification is temporarily unavailable; retry');
    }
    let active: boolean;
    let known: boolean;
    try {
      active = await clientActive(principal.clientId);
      known = builtInIssuer || (await organisationKnown(principal.organisationId));
    } catch (error) {
      // Storage is down: as with unreadable keys, not the client's fault (503, not 500 or 401).
      request.log.error({ err: error }, 'token verification failed: client lookup unavailable');
      throw new AppError('SERVICE_UNAVAILABLE', 'Token verification is temporarily unavailable; retry');
    }
    if (!active) throw new UnauthorizedError('client deleted or unknown');
    if (!known) throw new UnauthorizedError('organisation unknown');
    request.principal = principal;
  });

  app.addHook('preParsing', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    if (!request.principal?.scopes.includes(scope)) {
      throw forbidden(`This operation requires the scope ${scope}`);
    }
  });
}
