// Operator rules (D7): organisations and the API clients issued to them; sandbox seeding (D1).
import { randomBytes } from 'node:crypto';
import * as clients from '../auth/repository.ts';
import { type PoolClient, withTransaction } from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import { notFound, validationFailed } from '../platform/errors.ts';
import { isUuid, newUuid } from '../platform/ids.ts';
import { generateClientSecret } from '../platform/secrets.ts';
import { toIso } from '../platform/time.ts';
import * as organisations from './repository.ts';

/** The fixed id of the sandbox organisation, so that seeding is idempotent across restarts. */
export const SANDBOX_ORGANISATION_ID = '00000000-0000-7000-8000-000000000001';

export interface OrganisationView {
  id: string;
  name: string;
  created_at: string;
}

export interface ClientView {
  client_id: string;
  client_secret?: string;
  organisation_id: string;
  realm: string;
  name: string | null;
  scopes: string[];
  created_at: string;
  deleted_at?: string | null;
}

const organisationView = (row: organisations.OrganisationRow): OrganisationView => ({
  id: row.id,
  name: row.name,
  created_at: toIso(row.created_at),
});

/** In sandbox every new organisation also gets the areas' sandbox data (D24: opening balances). */
export async function createOrganisation(deps: AppDeps, name: string): Promise<OrganisationView> {
  return withTransaction(deps.pool, async (tx) => {
    const row = await organisations.insertOrganisation(tx, newUuid(), name);
    await seedOrganisation(deps, tx, row.id);
    return organisationView(row);
  });
}

async function seedOrganisation(deps: AppDeps, tx: PoolClient, organisationId: string): Promise<void> {
  if (deps.config.appEnv !== 'sandbox') return;
  for (const area of deps.areas) await area.seedOrganisation?.(tx, organisationId, deps);
}

export async function createClient(
  deps: AppDeps,
  input: { organisation_id: string; scopes?: string[]; name?: string },
): Promise<ClientView> {
  if (
    !isUuid(input.organisation_id) ||
    !(await organisations.findOrganisation(deps.pool, input.organisation_id))
  ) {
    throw notFound('No organisation matches organisation_id');
  }
  const allScopes = deps.catalogue.scopes;
  const scopes = input.scopes ?? [...allScopes];
  scopes.forEach((scope, index) => {
    if (!allScopes.includes(scope)) throw validationFailed(`scopes[${index}]`, `Unknown scope ${scope}`);
  });
  const clientId = `client_${randomBytes(12).toString('hex')}`;
  const secret = generateClientSecret();
  const row = await clients.insertClient(deps.pool, {
    client_id: clientId,
    organisation_id: input.organisation_id,
    realm: deps.config.authRealm,
    name: input.name ?? null,
    secret_hash: deps.secretBox.hashClientSecret(secret),
    scopes: [...new Set(scopes)],
  });
  // The secret is returned here and never again (D7).
  return { ...clientView(row), client_secret: secret };
}

export async function deleteClient(deps: AppDeps, clientId: string): Promise<ClientView> {
  const row = await clients.markClientDeleted(deps.pool, clientId);
  if (!row) throw notFound('No client matches the id');
  return clientView(row);
}

function clientView(row: clients.ClientRow): ClientView {
  return {
    client_id: row.client_id,
    organisation_id: row.organisation_id,
    realm: row.realm,
    name: row.name,
    scopes: row.scopes,
    created_at: toIso(row.created_at),
    deleted_at: toIso(row.deleted_at),
  };
}

/**
 * Sandbox (D1, D24): the sandbox organisation, the shared test credentials with every scope, and the
 * areas' reference data; run on every sandbox start, so every step is idempotent. A sandbox client
 * seeded before an area added its scopes is given them here. SANDBOX_CLIENT_SECRET is configuration, so
 * on every start the stored hash is brought in line with it: re-hashed when it is scrypt, a configured
 * secret that changed, or keyed with another SECRETS_ENCRYPTION_KEY. The credentials the start-up banner
 * prints therefore always work.
 */
export async function seedSandbox(deps: AppDeps): Promise<{ clientId: string; clientSecret: string }> {
  const { sandboxClientId, sandboxClientSecret, authRealm } = deps.config;
  const allScopes = [...deps.catalogue.scopes];
  await withTransaction(deps.pool, async (tx) => {
    await organisations.insertOrganisation(tx, SANDBOX_ORGANISATION_ID, 'Sandbox organisation');
    await seedOrganisation(deps, tx, SANDBOX_ORGANISATION_ID);
  });
  const existing = await clients.findClient(deps.pool, sandboxClientId);
  const hash = deps.secretBox.hashClientSecret(sandboxClientSecret);
  if (!existing) {
    await clients
      .insertClient(deps.pool, {
        client_id: sandboxClientId,
        organisation_id: SANDBOX_ORGANISATION_ID,
        realm: authRealm,
        name: 'Sandbox shared test credentials',
        secret_hash: hash,
        scopes: allScopes,
      })
      .catch((error: unknown) => {
        // Another process seeded it at the same moment.
        if ((error as { code?: string }).code !== '23505') throw error;
      });
  } else {
    if (allScopes.some((scope) => !existing.scopes.includes(scope))) {
      await clients.setClientScopes(deps.pool, sandboxClientId, allScopes);
    }
    if ((await deps.secretBox.checkClientSecret(sandboxClientSecret, existing.secret_hash)) !== 'match') {
      // Conditional on the hash read above: processes starting together write it once.
      await clients.replaceSecretHash(deps.pool, sandboxClientId, existing.secret_hash, hash);
    }
  }
  for (const area of deps.areas) await area.seedSandbox?.(deps);
  return { clientId: sandboxClientId, clientSecret: sandboxClientSecret };
}
