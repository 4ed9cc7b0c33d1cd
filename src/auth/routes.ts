// The token endpoint, JWKS and discovery of the built-in issuer (contract section 4 "Token", D6).
// Keycloak-compatible paths under /realms/{realm}; errors use the OAuth 2.0 envelope.
import formbody from '@fastify/formbody';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppDeps } from '../platform/deps.ts';
import { newErrorId } from '../platform/ids.ts';
import { KeyStore } from './keys.ts';
import { authenticateClient, OAuthError } from './service.ts';
import { authBaseUrl, issueAccessToken, issuerFor } from './tokens.ts';

const TokenResponse = Type.Object({
  access_token: Type.String(),
  expires_in: Type.Integer(),
  refresh_expires_in: Type.Integer(),
  token_type: Type.Literal('Bearer'),
  'not-before-policy': Type.Integer(),
  scope: Type.String(),
});
const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.String() });
const RealmParams = Type.Object({ realm: Type.String() });

export function registerAuthRoutes(app: App, deps: AppDeps): void {
  const keys = new KeyStore(deps);
  app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
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
    scope.setErrorHandler((error: Error, request, reply) => sendOAuthError(request, reply, error));

    scope.addHook('onRequest', async (request, reply) => {
      const { realm } = request.params as { realm?: string };
      if (realm !== deps.config.authRealm) {
        return reply.code(404).send({ error: 'Realm does not exist' });
      }
    });

    scope.post(
      '/realms/:realm/protocol/openid-connect/token',
      {
        schema: {
          tags: ['authentication'],
          summary: 'Obtain an access token (OAuth 2.0 client credentials)',
          description:
            'Form-encoded `grant_type=client_credentials`, `client_id`, `client_secret` (or HTTP Basic).',
          params: RealmParams,
          consumes: ['application/x-www-form-urlencoded'],
          response: { 200: TokenResponse, 400: OAuthErrorBody, 401: OAuthErrorBody },
        },
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        const client = await authenticateClient(deps, request.body, request.headers.authorization);
        const issuer = issuerFor(authBaseUrl(deps, request), deps.config.authRealm);
        const token = await issueAccessToken(deps, keys, issuer, client);
        return {
          access_token: token.access_token,
          expires_in: token.expires_in,
          refresh_expires_in: 0,
          token_type: 'Bearer' as const,
          'not-before-policy': 0,
          scope: client.scopes.join(' '),
        };
      },
    );

    scope.get(
      '/realms/:realm/protocol/openid-connect/certs',
      {
        schema: { tags: ['authentication'], summary: 'JSON Web Key Set of the issuer', params: RealmParams },
      },
      async () => keys.jwks(),
    );

    scope.get(
      '/realms/:realm/.well-known/openid-configuration',
      {
        schema: {
          tags: ['authentication'],
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
          scopes_supported: deps.config.authIssuer ? [] : undefined,
        };
      },
    );
  });
}

function sendOAuthError(request: FastifyRequest, reply: FastifyReply, error: Error): FastifyReply {
  const errorId = newErrorId();
  reply.header('Cache-Control', 'no-store');
  if (error instanceof OAuthError) {
    request.log.info({ error_id: errorId, oauth_error: error.error }, error.description);
    if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
    return reply.code(error.statusCode).send({ error: error.error, error_description: error.description });
  }
  const status = (error as { statusCode?: number }).statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    request.log.info({ error_id: errorId, err: error }, 'malformed token request');
    return reply
      .code(400)
      .send({ error: 'invalid_request', error_description: 'The token request is malformed' });
  }
  request.log.error({ error_id: errorId, err: error }, 'token endpoint failed');
  return reply.code(500).send({
    error: 'server_error',
    error_description: `Unexpected internal error (${errorId}); retry with backoff`,
  });
}
