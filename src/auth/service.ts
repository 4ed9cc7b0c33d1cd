// Client authentication for the token endpoint (contract section 7 token errors, D6).
import type { AppDeps } from '../platform/deps.ts';
import { verifySecret } from '../platform/secrets.ts';
import { findClient } from './repository.ts';

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

/** Form fields, or HTTP Basic (client_secret_basic) as Keycloak accepts. */
export function readCredentials(body: unknown, authorization: string | undefined): Credentials {
  let clientId = formValue(body, 'client_id');
  let clientSecret = formValue(body, 'client_secret');
  if (authorization?.startsWith('Basic ')) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      clientId ??= decodeURIComponent(decoded.slice(0, colon));
      clientSecret ??= decodeURIComponent(decoded.slice(colon + 1));
    }
  }
  return { grantType: formValue(body, 'grant_type'), clientId, clientSecret };
}

export interface AuthenticatedClient {
  clientId: string;
  organisationId: string;
  scopes: string[];
}

export async function authenticateClient(
  deps: AppDeps,
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
    throw new OAuthError(401, 'invalid_client', 'Invalid client or Invalid client credentials');
  }
  if (!(await verifySecret(clientSecret!, client.secret_hash))) {
    // Spelled as the contract spells it (D6).
    throw new OAuthError(401, 'unauthorized_clientclient', 'Invalid client or Invalid client credentials');
  }
  return { clientId: client.client_id, organisationId: client.organisation_id, scopes: client.scopes };
}
