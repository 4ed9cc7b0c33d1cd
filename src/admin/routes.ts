// The operator API (D7) under /admin/v1: Bearer ADMIN_API_KEY, platform error envelope.
// With ADMIN_API_KEY unset the routes do not exist (404).
import { Type } from '@sinclair/typebox';
import { keyStoreFor } from '../auth/keys.ts';
import { bearerKeyMatches } from '../platform/bearer-key.ts';
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

export function registerAdminRoutes(app: App, deps: AppDeps): void {
  const adminKey = deps.config.adminApiKey;
  if (adminKey === undefined) return;
  app.register(
    async (admin) => {
      admin.addHook('onRequest', async (request) => {
        if (!bearerKeyMatches(request.headers.authorization, adminKey)) {
          throw new AppError(
            'UNAUTHORIZED',
            'A valid operator key is required: Authorization: Bearer <ADMIN_API_KEY>',
          );
        }
      });

      registerOperatorRoutes(admin, (scope) => registerCredentialRoutes(scope, deps));
      registerOperatorRoutes(admin, (scope) => registerSecretsRoutes(scope, deps));

      for (const area of deps.areas) area.adminRoutes?.(admin, deps);
    },
    { prefix: '/admin/v1' },
  );
}

/**
 * The credentials of D7: organisations, their clients (the secret is in the answer only, never in the
 * action's log line) and the token signing key.
 */
function registerCredentialRoutes(scope: App, deps: AppDeps): void {
  scope.post(
    '/organisations',
    {
      config: { operatorAction: 'organisation.create' },
      schema: {
        tags: ['operator'],
        operationId: 'adminCreateOrganisation',
        summary: 'Create an organisation',
        body: CreateOrganisationRequest,
        response: { 201: Organisation },
      },
    },
    async (request, reply) => {
      const organisation = await service.createOrganisation(deps, (request.body as { name: string }).name);
      operatorTarget(request, { organisation_id: organisation.id });
      return reply.code(201).send(organisation);
    },
  );

  scope.post(
    '/clients',
    {
      config: { operatorAction: 'client.create' },
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
    async (request, reply) => {
      const input = request.body as Parameters<typeof service.createClient>[1];
      // The organisation is named also when the issue is refused (an unknown organisation).
      operatorTarget(request, { organisation_id: input.organisation_id });
      const client = await service.createClient(deps, input);
      operatorTarget(request, { client_id: client.client_id, scopes: client.scopes });
      return reply.code(201).send(client);
    },
  );

  scope.delete(
    '/clients/:client_id',
    {
      config: { operatorAction: 'client.delete' },
      schema: {
        tags: ['operator'],
        operationId: 'adminDeleteClient',
        summary: 'Delete a client: it can get no new token and its tokens stop working',
        params: Type.Object({ client_id: Type.String({ maxLength: 128 }) }),
        response: { 200: Client },
      },
    },
    async (request) => {
      const client = await service.deleteClient(deps, (request.params as { client_id: string }).client_id);
      operatorTarget(request, { organisation_id: client.organisation_id });
      return client;
    },
  );

  scope.post(
    '/signing-keys/rotate',
    {
      config: { operatorAction: 'signing_key.rotate' },
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
    async (request) => {
      const kid = await keyStoreFor(deps).rotate();
      operatorTarget(request, { realm: deps.config.authRealm, kid });
      return { kid };
    },
  );
}

const SecretsStatus = component(
  'SecretsStatus',
  Type.Object({
    key_id: Type.String({ description: 'The id of SECRETS_ENCRYPTION_KEY, which seals and hashes.' }),
    previous_key_ids: Type.Array(Type.String(), {
      description: 'The ids of SECRETS_ENCRYPTION_KEYS_PREVIOUS, which only open and verify.',
    }),
    client_secrets: Type.Array(
      Type.Object({
        key_id: Type.Union([Type.String(), Type.Null()]),
        key: Type.Union(
          ['current', 'previous', 'not_configured', 'scrypt'].map((role) => Type.Literal(role)),
        ),
        count: Type.Integer(),
        client_ids: Type.Optional(Type.Array(Type.String())),
      }),
      { description: "The clients that can get a token, by the key their secret's hash names." },
    ),
  }),
);
const ResealResult = component(
  'ResealResult',
  Type.Object({
    key_id: Type.String(),
    visited: Type.Integer({ description: 'Sealed values read by this call.' }),
    resealed: Type.Integer({
      description:
        'Values a previous key sealed, or event payloads stored in clear, now sealed under the current key.',
    }),
    unreadable: Type.Integer({
      description:
        'Values no configured key opens (a key that is not configured, or damaged), left as they are.',
    }),
    unreadable_rows: Type.Array(
      Type.Object({ table: Type.String(), column: Type.String(), key: Type.Array(Type.String()) }),
      { description: "Up to 100 of the unreadable values: the table, the column and the row's primary key." },
    ),
    next: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `after` to go on; null once every sealed value has been read.',
    }),
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
        summary: 'The encryption keys, and the key each client-secret hash names',
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
        summary: 'Seal again under SECRETS_ENCRYPTION_KEY what a previous key sealed',
        description:
          'Reads up to `limit` sealed values (default 10,000) from where `after` left off and seals again ' +
          'under the current key each one a previous key sealed, and each event payload stored in clear. ' +
          'Call again with `after` = `next` until `next` is null.',
        querystring: Type.Object(
          {
            limit: Type.Optional(
              Type.String({
                pattern: '^(?:[1-9][0-9]{0,4}|100000)$',
                description: 'At most this many sealed values (1..100000, default 10000).',
              }),
            ),
            after: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ResealResult },
      },
    },
    async (request) => {
      const query = request.query as { limit?: string; after?: string };
      const result = await secrets.resealSecrets(deps, Number(query.limit ?? 10_000), query.after);
      operatorTarget(request, {
        visited: result.visited,
        resealed: result.resealed,
        unreadable: result.unreadable,
      });
      return result;
    },
  );
}
