// Crypto networks and deposit addresses (D22): rules and transactions. An address takes its key's next
// index in the creating transaction and is derived from the operator's account public key; the service
// holds no private key.
import {
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  type Queryable,
  withTransaction,
} from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, conflict, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { type Page, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { publishResourceEvent } from '../webhooks/publish.ts';
import { addressLookupKey, deriveAddress } from './derivation.ts';
import { KEY_VARIABLES } from './keys.ts';
import {
  type CryptoAsset,
  carries,
  isNetworkCode,
  KEY_FAMILIES,
  NETWORK_CODES,
  NETWORKS,
  NETWORKS_IN_D22_ORDER,
  type NetworkCode,
} from './networks.ts';
import * as repo from './repository.ts';
import type {
  AccountKeyView,
  CreateDepositAddressInput,
  CryptoNetworkView,
  DepositAddressSearchInput,
  DepositAddressView,
} from './schemas.ts';

/** The prefix of deposit address ids (D14). */
export const DEPOSIT_ADDRESS_PREFIX = 'dad';
/** `source_object_type` of its events (D14). */
const SOURCE_OBJECT_TYPE = 'deposit_address';

export function depositAddressView(row: repo.DepositAddressRow): DepositAddressView {
  return {
    id: row.id,
    network: row.network as DepositAddressView['network'],
    asset: row.asset as DepositAddressView['asset'],
    address: row.address,
    derivation_path: row.derivation_path,
    status: row.status,
    label: row.label,
    external_id: row.external_id,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    disabled_at: toIso(row.disabled_at),
  };
}

/** The networks on offer: those whose key family has a configured key, sorted by code. */
export function listNetworks(deps: AppDeps): CryptoNetworkView[] {
  return NETWORK_CODES.filter((code) => deps.config.cryptoKeys[NETWORKS[code].family] !== undefined).map(
    (code) => ({
      code,
      name: NETWORKS[code].name,
      assets: [...NETWORKS[code].assets],
      confirmations_required: deps.config.cryptoConfirmations[code],
      address_format: NETWORKS[code].addressFormat,
    }),
  );
}

const addressNotFound = (): AppError => notFound('No deposit address matches the id');
const duplicateExternalId = (): AppError =>
  conflict('The organisation already has a deposit address with this external_id');

export async function createDepositAddress(
  deps: AppDeps,
  organisationId: string,
  input: CreateDepositAddressInput,
): Promise<DepositAddressView> {
  return withTransaction(deps.pool, async (tx) =>
    depositAddressView(
      await openDepositAddress(tx, deps, organisationId, {
        network: input.network,
        asset: input.asset,
        label: input.label ?? null,
        externalId: input.external_id ?? null,
      }),
    ),
  );
}

/** 400 CORRIDOR_UNAVAILABLE: the network's key family has no configured key (D22). */
const networkNotOffered = (network: NetworkCode): AppError =>
  new AppError(
    'CORRIDOR_UNAVAILABLE',
    `Deposit addresses on ${network} are not offered: see GET /api/v1/crypto/networks`,
  );

/**
 * The network a deposit of `asset` is to arrive on, where the asset is given (a deposit's currency, a
 * transfer's source currency): the client's choice, else the first offered network of D22's order that
 * carries the asset (D20's confirm body has no network). 422 on `network` when it is unknown or does not
 * carry the asset; 400 CORRIDOR_UNAVAILABLE when its key is not configured, or, without a choice, no
 * offered network carries the asset.
 */
export function depositNetwork(deps: AppDeps, network: string | undefined, asset: string): NetworkCode {
  if (network === undefined) {
    const offered = NETWORKS_IN_D22_ORDER.find(
      (code) => carries(code, asset) && deps.config.cryptoKeys[NETWORKS[code].family] !== undefined,
    );
    if (offered === undefined) {
      throw new AppError(
        'CORRIDOR_UNAVAILABLE',
        `Deposits of ${asset} are not offered on any network: see GET /api/v1/crypto/networks`,
      );
    }
    return offered;
  }
  if (!isNetworkCode(network)) throw validationFailed('network', `Unknown network ${network}`);
  const { assets, family } = NETWORKS[network];
  if (!carries(network, asset)) {
    throw validationFailed('network', `${network} does not carry ${asset}; it carries ${assets.join(', ')}`);
  }
  if (deps.config.cryptoKeys[family] === undefined) throw networkNotOffered(network);
  return network;
}

/**
 * A new address of the organisation's own, in the caller's transaction (a crypto deposit's own address
 * is made this way, D20/D22): 422 on `asset` when the network does not carry it, 400
 * CORRIDOR_UNAVAILABLE when the network's key is not configured. Publishes deposit_address.created.
 */
export async function openDepositAddress(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string,
  input: { network: NetworkCode; asset: string; label: string | null; externalId: string | null },
): Promise<repo.DepositAddressRow> {
  const network = NETWORKS[input.network];
  if (!carries(input.network, input.asset)) {
    throw validationFailed(
      'asset',
      `asset ${input.asset} is not offered on ${network.code}; it offers ${network.assets.join(', ')}`,
    );
  }
  const key = deps.config.cryptoKeys[network.family];
  if (key === undefined) throw networkNotOffered(network.code);
  const externalId = input.externalId;
  // Checked before the key's index is taken, so that a refused create holds the key's row lock for no
  // time; a concurrent create with the same external_id is stopped by the unique index instead.
  if (externalId !== null && (await repo.findByExternalId(tx, organisationId, externalId))) {
    throw duplicateExternalId();
  }
  const { keyId, index } = await repo.takeNextIndex(tx, key.family, key.canonicalKey, key.accountPath);
  const derived = deriveAddress(key, index);
  const row = await repo
    .insertDepositAddress(tx, {
      id: newPublicId(DEPOSIT_ADDRESS_PREFIX),
      organisationId,
      network: network.code,
      family: network.family,
      asset: input.asset as CryptoAsset,
      address: derived.address,
      addressLookup: addressLookupKey(network.family, derived.address),
      accountKeyId: keyId,
      derivationIndex: index,
      derivationPath: derived.derivationPath,
      label: input.label,
      externalId,
    })
    .catch((error: unknown) => {
      if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === repo.EXTERNAL_ID_UNIQUE_INDEX)
        throw duplicateExternalId();
      throw error;
    });
  await publishResourceEvent(tx, deps, {
    organisationId,
    sourceObjectType: SOURCE_OBJECT_TYPE,
    object: depositAddressView(row),
    action: 'created',
    previousStatus: null,
  });
  return row;
}

export async function getDepositAddress(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<DepositAddressView> {
  if (!isPublicId(DEPOSIT_ADDRESS_PREFIX, id)) throw addressNotFound();
  const row = await repo.findDepositAddress(deps.pool, organisationId, id);
  if (!row) throw addressNotFound();
  return depositAddressView(row);
}

/** Disables an address; repeatable: an address already disabled is answered as it is, with no new event. */
export async function disableDepositAddress(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<DepositAddressView> {
  if (!isPublicId(DEPOSIT_ADDRESS_PREFIX, id)) throw addressNotFound();
  return withTransaction(deps.pool, async (tx) => {
    const current = await repo.findDepositAddress(tx, organisationId, id, { forUpdate: true });
    if (!current) throw addressNotFound();
    if (current.status === 'disabled') return depositAddressView(current);
    const view = depositAddressView(await repo.disableDepositAddress(tx, id));
    await publishResourceEvent(tx, deps, {
      organisationId,
      sourceObjectType: SOURCE_OBJECT_TYPE,
      object: view,
      action: 'disabled',
      previousStatus: current.status,
    });
    return view;
  });
}

export async function searchDepositAddresses(
  deps: AppDeps,
  organisationId: string,
  body: DepositAddressSearchInput,
): Promise<Page<DepositAddressView>> {
  const query = toSearchQuery<repo.DepositAddressFilters, string>(body);
  // NUL cannot be stored in text, so a search holding it matches nothing (PostgreSQL would refuse it).
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const { rows, total } = await repo.searchDepositAddresses(
    deps.pool,
    organisationId,
    query.filters,
    query.search,
    query.sortBy,
    query.sortDirection,
    query.pageSize,
    query.offset,
  );
  return toPage(query, rows.map(depositAddressView), total);
}

export interface DepositAddressMatch {
  organisationId: string;
  /** The address as GET returns it; its `network` may be the other EVM network than the one asked. */
  depositAddress: DepositAddressView;
}

/**
 * Which organisation and deposit address an inbound chain notification's `address` belongs to, whatever
 * the address's status (a deposit to a disabled address is still credited, D22). EVM addresses compare
 * case-insensitively and bech32 ones too; Tron's base58 exactly. `ethereum` and `polygon` share the
 * EVM key, so an address created for one is found when asked for the other: the caller decides what a
 * deposit on the other network means. Undefined for an unknown network or address.
 */
export async function findAddressByNetworkAndAddress(
  db: Queryable,
  network: string,
  address: string,
): Promise<DepositAddressMatch | undefined> {
  if (!isNetworkCode(network)) return undefined;
  const family = NETWORKS[network].family;
  const row = await repo.findByLookup(db, family, addressLookupKey(family, address));
  return row ? { organisationId: row.organisation_id, depositAddress: depositAddressView(row) } : undefined;
}

/** Operator: each key family, its key, its next index and its first addresses (checked against a wallet). */
export async function describeAccountKeys(deps: AppDeps, count: number): Promise<AccountKeyView[]> {
  const next = await repo.nextIndexes(deps.pool);
  return KEY_FAMILIES.map((family) => {
    const key = deps.config.cryptoKeys[family];
    const networks = NETWORK_CODES.filter((code) => NETWORKS[code].family === family) as NetworkCode[];
    if (key === undefined) {
      return {
        family,
        variable: KEY_VARIABLES[family],
        networks,
        configured: false,
        extended_key: null,
        account_path: null,
        next_index: null,
        first_addresses: [],
      };
    }
    return {
      family,
      variable: key.variable,
      networks,
      configured: true,
      extended_key: key.extendedKey,
      account_path: key.accountPath,
      next_index: next.get(`${family}:${key.canonicalKey}`) ?? 0,
      first_addresses: Array.from({ length: count }, (_, index) => {
        const derived = deriveAddress(key, index);
        return { index, derivation_path: derived.derivationPath, address: derived.address };
      }),
    };
  });
}
