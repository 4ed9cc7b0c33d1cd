// Client authentication for the token endpoint (contract section 7 token errors, D6).
import type { FastifyBaseLogger } from 'fastify';
import type { AppDeps } from '../platform/deps.ts';
import type { KeyStore } from './keys.ts';
import { findClient, replaceSecretHash } from './repository.ts';
import { issueAccessToken } from './tokens.ts';

export class OAuthError extends Error {
  readonly statusCode: number;
  readonly error: string;
  readonly description: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(statusCode: number, error: string, description: string, retryAfterSeconds?: number) {
    super(description);
    this.statusCode = statusCode;
    this.error = error;
    this.description = description;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

interface Credentials {
  grantType: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
}

function formValue(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  // A parameter sent twice arrives as a list: a malformed request.
  if (Array.isArray(value)) throw new OAuthError(400, 'invalid_request', `The parameter ${name} is repeated`);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `client_secret_basic` (RFC 6749 section 2.3.1): id and secret are form-urlencoded, then base64. */
function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
  const match = authorization === undefined ? null : /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/** Form fields, or HTTP Basic (client_secret_basic) as Keycloak accepts. */
export function readCredentials(body: unknown, authorization: string | undefined): Credentials {
  const grantType = formValue(body, 'grant_type');
  let clientId = formValue(body, 'client_id');
  let clientSecret = formValue(body, 'client_secret');
  if (authorization !== undefined && /^Basic\b/i.test(authorization)) {
    const basic = basicCredentials(authorization);
    if (!basic) throw new OAuthError(400, 'invalid_request', 'The Basic authorization header is malformed');
    // Two different identities in one request: refuse rather than pick one.
    if (clientId !== undefined && clientId !== basic.id) {
      throw new OAuthError(400, 'invalid_request', 'client_id differs from the Basic authorization header');
    }
    clientId = basic.id;
    clientSecret = basic.secret === '' ? undefined : basic.secret;
  }
  return { grantType, clientId, clientSecret };
}

/** The client id a token request presents, for the failure limits; never throws (D12). */
export function presentedClientId(body: unknown, authorization: string | undefined): string | undefined {
  const fromBody =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).client_id : undefined;
  if (typeof fromBody === 'string' && fromBody !== '') return fromBody.slice(0, 256);
  const basic = basicCredentials(authorization);
  return basic && basic.id !== '' ? basic.id.slice(0, 256) : undefined;
}

export interface AuthenticatedClient {
  clientId: string;
  organisationId: string;
  scopes: string[];
}

export async function authenticateClient(
  deps: AppDeps,
  log: FastifyBaseLogger,
  body: unknown,
  authorization: string | undefined,
): Promise<AuthenticatedClient> {
  const { grantType, clientId, clientSecret } = readCredentials(body, authorization);
  const missing = [
    ['grant_type', grantType],
    ['client_id', clientId],
    ['client_secret', clientSecret],
  ].find(([, value]) => value === undefined);
  if (missing) throw new OAuthError(400, 'invalid_request', `Missing form parameter: ${missing[0]}`);
  if (grantType !== 'client_credentials') {
    throw new OAuthError(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported');
  }
  const client = await findClient(deps.pool, clientId!);
  if (!client || client.deleted_at !== null || client.realm !== deps.config.authRealm) {
    throw new OAuthError(401, 'invalid_client', 'Invalid client: the client id is not recognised');
  }
  const check = await deps.secretBox.checkClientSecret(clientSecret!, client.secret_hash);
  if (check === 'other-key') {
    // Not the client's fault and not a guess: the operator changed or lost the key (operator guide).
    log.warn(
      { client_id: client.client_id, stored_key_id: client.secret_hash.split('$')[1] },
      'client secret hash was keyed with another SECRETS_ENCRYPTION_KEY; restore that key or re-issue the client',
    );
  }
  if (check !== 'match' && check !== 'match-outdated') {
    // Spelled as the contract spells it (D6).
    throw new OAuthError(
      401,
      'unauthorized_clientclient',
      'Invalid client credentials: the secret does not match',
    );
  }
  if (check === 'match-outdated')
    await upgradeSecretHash(deps, log, client.client_id, client.secret_hash, clientSecret!);
  return { clientId: client.client_id, organisationId: client.organisation_id, scopes: client.scopes };
}

/**
 * Replaces a matching scrypt hash, or one keyed with a previous SECRETS_ENCRYPTION_KEY, with the hash
 * under the current key: later requests skip scrypt, and the previous key can be retired once no hash
 * names it. The secret was just verified; a failure here leaves the old hash, which still verifies.
 */
async function upgradeSecretHash(
  deps: AppDeps,
  log: FastifyBaseLogger,
  clientId: string,
  stored: string,
  secret: string,
): Promise<void> {
  try {
    const replaced = await replaceSecretHash(
      deps.pool,
      clientId,
      stored,
      deps.secretBox.hashClientSecret(secret),
    );
    if (!replaced) return;
    if (stored.startsWith('scrypt$')) {
      log.info({ client_id: clientId }, 'client secret re-hashed from scrypt to HMAC-SHA-256');
    } else {
      log.info(
        { client_id: clientId, stored_key_id: stored.split('$')[1], key_id: deps.secretBox.keyId },
        'client secret re-hashed under the current SECRETS_ENCRYPTION_KEY',
      );
    }
  } catch (error) {
    log.warn(
      { err: error, client_id: clientId },
      'could not re-hash a client secret; it keeps its stored hash',
    );
  }
}

/** The token response of D6 (Keycloak's shape; no refresh token for client credentials). */
export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_expires_in: 0;
  token_type: 'Bearer';
  'not-before-policy': 0;
  scope: string;
}

/** A client-credentials token request: authenticate the client, then sign its token for `issuer`. */
export async function issueToken(
  deps: AppDeps,
  keys: KeyStore,
  issuer: string,
  request: { body: unknown; authorization: string | undefined; log: FastifyBaseLogger },
): Promise<TokenResponse> {
  const client = await authenticateClient(deps, request.log, request.body, request.authorization);
  const token = await issueAccessToken(deps, keys, issuer, client);
  return {
    access_token: token.access_token,
    expires_in: token.expires_in,
    refresh_expires_in: 0,
    token_type: 'Bearer',
    'not-before-policy': 0,
    scope: client.scopes.join(' '),
  };
}
