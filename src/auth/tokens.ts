// Access tokens (D6): RS256 JWTs from the built-in issuer, verified by the API against the configured
// issuer's JWKS. Only RS256 is accepted, so `alg: none` and HMAC confusion are refused.
import { randomUUID } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
  SignJWT,
} from 'jose';
import type { AppDeps, Principal } from '../platform/deps.ts';
import { isUuid } from '../platform/ids.ts';
import type { Jwks, KeyStore } from './keys.ts';

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

/** The token itself is not acceptable (401). Anything else the verifier throws is an outage. */
export class TokenRejectedError extends Error {
  override readonly name = 'TokenRejectedError';
}

// JOSE failures that say nothing about the token: the issuer's key set could not be fetched or read.
const ISSUER_FAILURES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

/**
 * Builds the verifier the bearer hook uses: the built-in issuer's keys from storage, or, with
 * AUTH_ISSUER / AUTH_JWKS_URL, a remote JWKS (the `auth` role of this service, or any OIDC issuer).
 */
export function createTokenVerifier(deps: AppDeps, keys: KeyStore): TokenVerifier {
  const { config } = deps;
  const realmPath = `/realms/${config.authRealm}`;
  let getKey: JWTVerifyGetKey;
  let issuerMatches: (iss: string) => boolean;
  if (config.authIssuer && config.authJwksUrl) {
    // Cached; an unknown kid (a rotation) refetches, at most once a second, so a forged kid cannot
    // flood the issuer and a new key is picked up within a second of its first token.
    getKey = createRemoteJWKSet(new URL(config.authJwksUrl), {
      cooldownDuration: 1_000,
      cacheMaxAge: 600_000,
      timeoutDuration: 5_000,
    });
    const expected = config.authIssuer;
    issuerMatches = (iss) => iss === expected;
  } else {
    let local: { jwks: Jwks; set: JWTVerifyGetKey } | undefined;
    getKey = async (header, token) => {
      // The key store caches and reloads on an unknown kid; rebuild the set only when it changed.
      const jwks = await keys.jwks(header.kid);
      if (local?.jwks !== jwks) local = { jwks, set: createLocalJWKSet(jwks) };
      return local.set(header, token);
    };
    const fixed = config.authPublicUrl ? issuerFor(config.authPublicUrl, config.authRealm) : undefined;
    issuerMatches = (iss) => {
      if (fixed) return iss === fixed;
      // Without AUTH_PUBLIC_URL the issuer host is whatever host the token request came to (D6).
      try {
        return new URL(iss).pathname === realmPath;
      } catch {
        return false;
      }
    };
  }
  // Verified tokens by their exact text until they expire. A client reuses one token for minutes, and
  // the RS256 check is the costliest step of authenticating a request. Only tokens that verified are
  // kept; expiry is checked on every hit; a deleted client is still refused by the bearer hook.
  const verified = new Map<string, { principal: Principal; expiresAtMs: number }>();
  const verifyUncached = async (token: string): Promise<Principal> => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        algorithms: ['RS256'],
        clockTolerance: 5,
        requiredClaims: ['exp', 'iss'],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError && !ISSUER_FAILURES.has(error.code)) {
        throw new TokenRejectedError(`${error.code}: ${error.message}`);
      }
      throw error;
    }
    if (typeof payload.iss !== 'string' || !issuerMatches(payload.iss)) {
      throw new TokenRejectedError(`issuer mismatch: ${String(payload.iss)}`);
    }
    const principal = principalFrom(payload);
    if (verified.size >= VERIFIED_CACHE_ENTRIES) verified.delete(verified.keys().next().value!);
    verified.set(token, { principal, expiresAtMs: (payload.exp ?? 0) * 1000 });
    return principal;
  };
  return async (token) => {
    const hit = verified.get(token);
    if (hit) {
      if (hit.expiresAtMs > Date.now()) return hit.principal;
      verified.delete(token);
    }
    return verifyUncached(token);
  };
}

const VERIFIED_CACHE_ENTRIES = 10_000;

function principalFrom(payload: JWTPayload): Principal {
  const clientId = typeof payload.azp === 'string' ? payload.azp : payload.sub;
  const organisationId = payload.org_id;
  if (typeof clientId !== 'string' || typeof organisationId !== 'string')
    throw new TokenRejectedError('token lacks client or organisation');
  // Organisations are UUIDs; an external issuer's token naming anything else identifies none.
  if (!isUuid(organisationId))
    throw new TokenRejectedError('token names no organisation (org_id is no UUID)');
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
  return { clientId, organisationId, scopes };
}
