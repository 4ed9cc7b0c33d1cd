// The token endpoint, JWKS and discovery of the built-in issuer (contract section 4 "Token", D6).
// Keycloak-compatible paths under /realms/{realm}; errors use the OAuth 2.0 envelope, never the
// platform one. Failed token requests are limited per client id and per address (D12).
import formbody from '@fastify/formbody';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConfigError } from '../config.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { newErrorId } from '../platform/ids.ts';
import { component } from '../platform/openapi.ts';
import { keyStoreFor } from './keys.ts';
import { createTokenFailureLimiter, type TokenFailureLimiter } from './rate-limit.ts';
import { issueToken, OAuthError, presentedClientId } from './service.ts';
import { authBaseUrl, issuerFor } from './tokens.ts';

const TokenResponse = component(
  'TokenResponse',
  Type.Object(
    {
      access_token: Type.String(),
      expires_in: Type.Integer(),
      refresh_expires_in: Type.Integer(),
      token_type: Type.Literal('Bearer'),
      'not-before-policy': Type.Integer(),
      scope: Type.String({ description: 'The scopes of the client, space-separated.' }),
    },
    {
      examples: [
        {
          access_token:
            'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IjAxSkQzVjZNMlEifQ.eyJzdWIiOiJzYW5kYm94LWNsaWVudCJ9.c2lnbmF0dXJl',
          expires_in: 300,
          refresh_expires_in: 0,
          token_type: 'Bearer',
          'not-before-policy': 0,
          scope: 'transfers:read transfers:write',
        },
      ],
    },
  ),
);
const OAuthErrorBody = component(
  'OAuthError',
  Type.Object({ error: Type.String(), error_description: Type.String() }),
);
const RealmNotFound = component(
  'RealmNotFound',
  Type.Object({ error: Type.Literal('Realm does not exist') }),
);
const RealmParams = Type.Object({ realm: Type.String() });

// Documented only: the route reads the form itself (formbody), so that every fault is an OAuth error
// with its own description rather than a schema rejection.
const TokenRequest = component(
  'TokenRequest',
  Type.Object(
    {
      grant_type: Type.Literal('client_credentials'),
      client_id: Type.String({ description: 'Optional with HTTP Basic (client_secret_basic).' }),
      client_secret: Type.String({ description: 'Optional with HTTP Basic (client_secret_basic).' }),
    },
    {
      examples: [
        { grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: 'sandbox-secret' },
      ],
    },
  ),
);
// Documented only as well: the key set and discovery document are served as they are built.
const Jwks = component(
  'Jwks',
  Type.Object({
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.Literal('RSA'),
          kid: Type.String(),
          use: Type.Literal('sig'),
          alg: Type.Literal('RS256'),
          n: Type.String(),
          e: Type.String(),
        },
        { additionalProperties: true },
      ),
    ),
  }),
);
const OpenIdConfiguration = component(
  'OpenIdConfiguration',
  Type.Object({
    issuer: Type.String(),
    token_endpoint: Type.String(),
    jwks_uri: Type.String(),
    grant_types_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    id_token_signing_alg_values_supported: Type.Array(Type.String()),
    subject_types_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
  }),
);

const TOKEN_BODY_LIMIT = 64 * 1024;

const tooManyFailures = (retryAfterSeconds: number): OAuthError =>
  new OAuthError(
    429,
    'invalid_request',
    `Too many failed token requests; retry later (after ${retryAfterSeconds} s)`,
    retryAfterSeconds,
  );

export function registerAuthRoutes(app: App, deps: AppDeps, options: { authOnly?: boolean } = {}): void {
  if (options.authOnly && deps.config.appEnv === 'production' && deps.config.authPublicUrl === undefined) {
    // A separate auth host (the `auth` role) sits behind its own address and usually a proxy; the
    // `iss` of its tokens must be the public address API processes are told to trust (AUTH_ISSUER),
    // not whatever Host header a request happens to carry.
    throw new ConfigError(
      'AUTH_PUBLIC_URL',
      'is required for the auth role in production: it fixes the issuer (iss) that API processes trust',
    );
  }
  const keys = keyStoreFor(deps);
  app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: TOKEN_BODY_LIMIT });
    // A JSON (or any non-form) body is a malformed token request, not a 415 (D6).
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('*', (_request, _payload, done) =>
      done(
        new OAuthError(
          400,
          'invalid_request',
          'The token request must be form-encoded (application/x-www-form-urlencoded)',
        ),
      ),
    );
    const failures = createTokenFailureLimiter(scope as App, deps, (request) =>
      presentedClientId(request.body, request.headers.authorization),
    );
    scope.setErrorHandler((error: Error, request, reply) => sendOAuthError(request, reply, error, failures));

    scope.addHook('onRequest', async (request, reply) => {
      // Token responses carry credentials: never cached (RFC 6749 section 5.1), errors included.
      if (request.method === 'POST') reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
      const { realm } = request.params as { realm?: string };
      if (realm !== deps.config.authRealm) {
        return reply.code(404).send({ error: 'Realm does not exist' });
      }
    });

    scope.post(
      '/realms/:realm/protocol/openid-connect/token',
      {
        config: {
          swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: TokenRequest }, url }),
        },
        schema: {
          tags: ['authentication'],
          operationId: 'requestToken',
          summary: 'Obtain an access token (OAuth 2.0 client credentials)',
          description:
            'Form-encoded `grant_type=client_credentials`, `client_id`, `client_secret` (or HTTP Basic). ' +
            'Failed requests are limited per client id and per address; past the limit: 429.',
          params: RealmParams,
          consumes: ['application/x-www-form-urlencoded'],
          response: {
            200: TokenResponse,
            400: OAuthErrorBody,
            401: OAuthErrorBody,
            404: RealmNotFound,
            429: OAuthErrorBody,
            500: OAuthErrorBody,
          },
        },
        // Checked before the body is read: an address past its failure limit gets nothing more.
        onRequest: async (request) => {
          const wait = await failures.addressBlockedFor(request);
          if (wait !== undefined) throw tooManyFailures(wait);
        },
        // The client id is known once the form is parsed.
        preHandler: async (request) => {
          const wait = await failures.clientBlockedFor(request);
          if (wait !== undefined) throw tooManyFailures(wait);
        },
      },
      async (request) => {
        const issuer = issuerFor(authBaseUrl(deps, request), deps.config.authRealm);
        return issueToken(deps, keys, issuer, {
          body: request.body,
          authorization: request.headers.authorization,
          log: request.log,
        });
      },
    );

    scope.get(
      '/realms/:realm/protocol/openid-connect/certs',
      {
        config: {
          swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, response: { 200: Jwks } }, url }),
        },
        schema: {
          tags: ['authentication'],
          operationId: 'getJwks',
          summary: 'JSON Web Key Set of the issuer (current and recently retired signing keys)',
          params: RealmParams,
        },
      },
      async () => keys.jwks(),
    );

    scope.get(
      '/realms/:realm/.well-known/openid-configuration',
      {
        config: {
          swaggerTransform: ({ schema, url }) => ({
            schema: { ...schema, response: { 200: OpenIdConfiguration } },
            url,
          }),
        },
        schema: {
          tags: ['authentication'],
          operationId: 'getOpenIdConfiguration',
          summary: 'OpenID Connect discovery document',
          params: RealmParams,
        },
      },
      async (request) => {
        const issuer = issuerFor(authBaseUrl(deps, request), deps.config.authRealm);
        return {
          issuer,
          token_endpoint: `${issuer}/protocol/openid-connect/token`,
          jwks_uri: `${issuer}/protocol/openid-connect/certs`,
          grant_types_supported: ['client_credentials'],
          response_types_supported: ['token'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
          id_token_signing_alg_values_supported: ['RS256'],
          subject_types_supported: ['public'],
          scopes_supported: deps.catalogue.scopes,
        };
      },
    );
  });
}

async function sendOAuthError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: Error,
  failures: TokenFailureLimiter,
): Promise<FastifyReply> {
  const errorId = newErrorId();
  reply.header('Cache-Control', 'no-store');
  let oauthError: OAuthError;
  if (error instanceof OAuthError) {
    oauthError = error;
  } else {
    const status = (error as { statusCode?: number }).statusCode;
    if (status === undefined || status < 400 || status >= 500) {
      request.log.error({ error_id: errorId, err: error }, 'token endpoint failed');
      return reply.code(500).send({
        error: 'server_error',
        error_description: `Unexpected internal error (${errorId}); retry with backoff`,
      });
    }
    // Oversized or unparsable form bodies and the like.
    oauthError = new OAuthError(400, 'invalid_request', 'The token request is malformed');
  }
  request.log.info(
    { error_id: errorId, oauth_error: oauthError.error, status: oauthError.statusCode },
    oauthError.description,
  );
  if (oauthError.statusCode === 400 || oauthError.statusCode === 401) {
    // Every refused request counts towards the failure limits (D12); a limiter fault must not turn
    // the answer into a 500.
    await failures.recordFailure(request).catch((fault: unknown) => {
      request.log.warn({ err: fault }, 'could not count a failed token request');
    });
  }
  if (oauthError.retryAfterSeconds !== undefined) {
    reply.header('Retry-After', String(oauthError.retryAfterSeconds));
  }
  return reply
    .code(oauthError.statusCode)
    .send({ error: oauthError.error, error_description: oauthError.description });
}
