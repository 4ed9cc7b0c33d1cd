// The operator API (D7) under /admin/v1: Bearer ADMIN_API_KEY, platform error envelope.
// With ADMIN_API_KEY unset the routes do not exist (404).
import { timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { keyStoreFor } from '../auth/keys.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { AppError } from '../platform/errors.ts';
import { component } from '../platform/openapi.ts';
import { StoredText } from '../webhooks/api-schemas.ts';
import { operatorTarget, registerOperatorRoutes } from './operator-log.ts';
import * as secrets from './secrets.ts';
import * as service from './service.ts';

const Organisation = component(
  'Organisation',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    created_at: Type.String(),
  }),
);
const Client = component(
  'ApiClient',
  Type.Object({
    client_id: Type.String(),
    client_secret: Type.Optional(Type.String({ description: 'Returned only when the client is created.' })),
    organisation_id: Type.String(),
    realm: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Type.String()),
    created_at: Type.String(),
    deleted_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
);

const CreateOrganisationRequest = component(
  'CreateOrganisationRequest',
  Type.Object({ name: StoredText({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
);
const SigningKeyRotation = component(
  'SigningKeyRotation',
  Type.Object({ kid: Type.String({ description: 'The key id (JWT `kid`) of the new signing key.' }) }),
);

function keyMatches(header: string | undefined, key: string): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice(7));
  const expected = Buffer.from(key);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function registerAdminRoutes(app: App, deps: AppDeps): void {
  const adminKey = deps.config.adminApiKey;
  if (adminKey === undefined) return;
  app.register(
    async (admin) => {
      admin.addHook('onRequest', async (request) => {
        if (!keyMatches(request.headers.authorization, adminKey)) {
          throw new AppError(
            'UNAUTHORIZED',
            'A valid operator key is required: Authorization: Bearer <ADMIN_API_KEY>',
          );
        }
      });

      admin.post(
        '/organisations',
        {
          schema: {
            tags: ['operator'],
            operationId: 'adminCreateOrganisation',
            summary: 'Create an organisation',
            body: CreateOrganisationRequest,
            response: { 201: Organisation },
          },
        },
        async (request, reply) =>
          reply
            .code(201)
            .send(await service.createOrganisation(deps, (request.body as { name: string }).name)),
      );

      admin.post(
        '/clients',
        {
          schema: {
            tags: ['operator'],
            operationId: 'adminCreateClient',
            summary: 'Issue API credentials to an organisation (the secret is returned only here)',
            body: Type.Object(
              {
                organisation_id: Type.String({ maxLength: 64 }),
                scopes: Type.Optional(
                  Type.Array(Type.Union(deps.catalogue.scopes.map((scope) => Type.Literal(scope))), {
                    maxItems: 32,
                  }),
                ),
                name: Type.Optional(StoredText({ minLength: 1, maxLength: 200 })),
              },
              { additionalProperties: false },
            ),
            response: { 201: Client },
          },
        },
        async (request, reply) =>
          reply
            .code(201)
            .send(
              await service.createClient(deps, request.body as Parameters<typeof service.createClient>[1]),
            ),
      );

      admin.delete(
        '/clients/:client_id',
        {
          schema: {
            tags: ['operator'],
            operationId: 'adminDeleteClient',
            summary: 'Delete a client: it can get no new token and its tokens stop working',
            params: Type.Object({ client_id: Type.String({ maxLength: 128 }) }),
            response: { 200: Client },
          },
        },
        async (request) => service.deleteClient(deps, (request.params as { client_id: string }).client_id),
      );

      admin.post(
        '/signing-keys/rotate',
        {
          schema: {
            tags: ['operator'],
            operationId: 'adminRotateSigningKey',
            summary: 'Rotate the token signing key of AUTH_REALM',
            description:
              'A new RS256 key signs every token from now on; the previous key stays published in the JWKS ' +
              'until the tokens it signed have expired, so no issued token stops working (D6).',
            response: { 200: SigningKeyRotation },
          },
        },
        async () => ({ kid: await keyStoreFor(deps).rotate() }),
      );

      registerOperatorRoutes(admin, (scope) => registerSecretsRoutes(scope, deps));

      for (const area of deps.areas) area.adminRoutes?.(admin, deps);
    },
    { prefix: '/admin/v1' },
  );
}

const KeyRole = ['current', 'previous', 'not_configured'] as const;
const SecretsStatus = component(
  'SecretsStatus',
  Type.Object({
    key_id: Type.String({ description: 'The id of SECRETS_ENCRYPTION_KEY, which seals and hashes.' }),
    previous_key_ids: Type.Array(Type.String(), {
      description: 'The ids of SECRETS_ENCRYPTION_KEYS_PREVIOUS, which only open and verify.',
    }),
    sealed: Type.Array(
      Type.Object({
        table: Type.String(),
        column: Type.String(),
        key_id: Type.Union([Type.String(), Type.Null()]),
        key: Type.Union([...KeyRole, 'unlabelled'].map((role) => Type.Literal(role))),
        count: Type.Integer(),
      }),
    ),
    client_secrets: Type.Array(
      Type.Object({
        key_id: Type.Union([Type.String(), Type.Null()]),
        key: Type.Union([...KeyRole, 'scrypt'].map((role) => Type.Literal(role))),
        count: Type.Integer(),
        client_ids: Type.Optional(Type.Array(Type.String())),
      }),
    ),
  }),
);
const ResealResult = component(
  'ResealResult',
  Type.Object({
    key_id: Type.String(),
    resealed: Type.Integer({ description: 'Values now sealed under the current key.' }),
    unreadable: Type.Integer({
      description: 'Values sealed under a key that is not configured, left as they are.',
    }),
    done: Type.Boolean({ description: 'Nothing readable is left sealed under another key.' }),
  }),
);

/** Rotating SECRETS_ENCRYPTION_KEY (operator guide, authentication.md). */
function registerSecretsRoutes(scope: App, deps: AppDeps): void {
  scope.get(
    '/secrets',
    {
      schema: {
        tags: ['operator'],
        operationId: 'adminSecretsStatus',
        summary: 'Which key each sealed value and client-secret hash names',
        description:
          'Drop a key from SECRETS_ENCRYPTION_KEYS_PREVIOUS once nothing here names it: sealed values move with ' +
          '`POST /admin/v1/secrets/reseal`, a client secret on its next token request.',
        response: { 200: SecretsStatus },
      },
    },
    async () => secrets.secretsStatus(deps),
  );
  scope.post(
    '/secrets/reseal',
    {
      config: { operatorAction: 'secrets.reseal' },
      schema: {
        tags: ['operator'],
        operationId: 'adminResealSecrets',
        summary: 'Re-seal values sealed under a previous key with SECRETS_ENCRYPTION_KEY',
        description:
          'Visits up to `limit` values not sealed under the current key (default 10,000) and re-seals each ' +
          'one it can open. Call again until `done` is true.',
        body: Type.Optional(
          Type.Object(
            { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })) },
            { additionalProperties: false },
          ),
        ),
        response: { 200: ResealResult },
      },
    },
    async (request) => {
      const result = await secrets.resealSecrets(
        deps,
        (request.body as { limit?: number } | undefined)?.limit ?? 10_000,
      );
      operatorTarget(request, { resealed: result.resealed, unreadable: result.unreadable });
      return result;
    },
  );
}
