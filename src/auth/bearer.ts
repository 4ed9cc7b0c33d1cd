// Bearer authentication for every route that declares a scope (D5, D6).
// Order of checks: token (onRequest, before the body is read), then permission (preParsing,
// after the rate limit), then body parsing and validation.
import type { App, AppDeps } from '../platform/deps.ts';
import { forbidden, UnauthorizedError } from '../platform/errors.ts';
import { KeyStore } from './keys.ts';
import { findClient } from './repository.ts';
import { createTokenVerifier } from './tokens.ts';

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;
const CLIENT_CACHE_MS = 2_000;

export async function registerBearerAuth(app: App, deps: AppDeps): Promise<void> {
  const verify = createTokenVerifier(deps, new KeyStore(deps));
  const builtInIssuer = deps.config.authIssuer === undefined;
  // A deleted client's tokens stop working (D7). The lookup is cached briefly per process.
  const clientState = new Map<string, { active: boolean; at: number }>();
  const clientActive = async (clientId: string): Promise<boolean> => {
    const cached = clientState.get(clientId);
    if (cached && Date.now() - cached.at < CLIENT_CACHE_MS) return cached.active;
    const client = await findClient(deps.pool, clientId);
    const active = client !== undefined && client.deleted_at === null;
    if (clientState.size > 10_000) clientState.clear();
    clientState.set(clientId, { active, at: Date.now() });
    return active;
  };

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.scope === undefined) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match)
      throw new UnauthorizedError(
        header === undefined ? 'missing bearer token' : 'malformed authorization header',
      );
    let principal: Awaited<ReturnType<typeof verify>>;
    try {
      principal = await verify(match[1]!);
    } catch (error) {
      throw new UnauthorizedError(`token rejected: ${(error as Error).message}`);
    }
    if (builtInIssuer && !(await clientActive(principal.clientId)))
      throw new UnauthorizedError('client deleted');
    request.principal = principal;
  });

  app.addHook('preParsing', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    if (!request.principal?.scopes.includes(scope))
      throw forbidden(`This operation requires the scope ${scope}`);
  });
}
