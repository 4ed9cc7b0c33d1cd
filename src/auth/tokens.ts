// Access tokens (D6): RS256 JWTs from the built-in issuer, verified by the API against the configured
// issuer's JWKS. Only RS256 is accepted, so `alg: none` and HMAC confusion are refused.
import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { AppDeps, Principal } from '../platform/deps.ts';
import type { KeyStore } from './keys.ts';

export interface IssuedToken {
  access_token: string;
  expires_in: number;
}

export async function issueAccessToken(
  deps: AppDeps,
  keys: KeyStore,
  issuer: string,
  client: { clientId: string; organisationId: string; scopes: string[] },
): Promise<IssuedToken> {
  const key = await keys.signingKey();
  const ttl = deps.config.tokenTtlSeconds;
  const now = Math.floor(Date.now() / 1000);
  const accessToken = await new SignJWT({
    azp: client.clientId,
    org_id: client.organisationId,
    scope: client.scopes.join(' '),
    typ: 'Bearer',
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(issuer)
    .setSubject(client.clientId)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .setJti(randomUUID())
    .sign(key.privateKey);
  return { access_token: accessToken, expires_in: ttl };
}

/** The `{auth_url}` of a token request: AUTH_PUBLIC_URL, else the scheme and host it came to (D6). */
export function authBaseUrl(deps: AppDeps, request: { protocol: string; host: string }): string {
  return deps.config.authPublicUrl ?? `${request.protocol}://${request.host}`;
}

export const issuerFor = (authUrl: string, realm: string): string => `${authUrl}/realms/${realm}`;

export type TokenVerifier = (token: string) => Promise<Principal>;

/** Builds the verifier the bearer hook uses: built-in issuer keys, or an external issuer's JWKS. */
export function createTokenVerifier(deps: AppDeps, keys: KeyStore): TokenVerifier {
  const { config } = deps;
  const realmPath = `/realms/${config.authRealm}`;
  let getKey: Parameters<typeof jwtVerify>[1];
  let issuerMatches: (iss: string) => boolean;
  if (config.authIssuer && config.authJwksUrl) {
    getKey = createRemoteJWKSet(new URL(config.authJwksUrl), {
      cooldownDuration: 30_000,
      cacheMaxAge: 600_000,
    });
    const expected = config.authIssuer;
    issuerMatches = (iss) => iss === expected;
  } else {
    let local:
      | { set: ReturnType<typeof createLocalJWKSet>; kids: Set<string | undefined>; at: number }
      | undefined;
    getKey = async (header, token) => {
      // Reload the published keys when the cache is old or an unknown kid shows up (a rotation).
      if (!local || Date.now() - local.at > 60_000 || !local.kids.has(header.kid)) {
        const jwks = await keys.jwks();
        local = {
          set: createLocalJWKSet(jwks),
          kids: new Set(jwks.keys.map((key) => key.kid)),
          at: Date.now(),
        };
      }
      return local.set(header, token);
    };
    const fixed = config.authPublicUrl ? issuerFor(config.authPublicUrl, config.authRealm) : undefined;
    issuerMatches = (iss) => {
      if (fixed) return iss === fixed;
      try {
        return new URL(iss).pathname === realmPath;
      } catch {
        return false;
      }
    };
  }
  return async (token) => {
    const { payload } = await jwtVerify(token, getKey, { algorithms: ['RS256'], clockTolerance: 5 });
    if (typeof payload.iss !== 'string' || !issuerMatches(payload.iss)) throw new Error('issuer mismatch');
    return principalFrom(payload);
  };
}

function principalFrom(payload: JWTPayload): Principal {
  const clientId = typeof payload.azp === 'string' ? payload.azp : payload.sub;
  const organisationId = payload.org_id;
  if (typeof clientId !== 'string' || typeof organisationId !== 'string')
    throw new Error('token lacks client or organisation');
  if (typeof payload.exp !== 'number') throw new Error('token has no expiry');
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
  return { clientId, organisationId, scopes };
}
