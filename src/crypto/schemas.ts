// Request and response schemas of crypto networks and deposit addresses (D22).
import { type Static, Type } from '@sinclair/typebox';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { StoredText, StringEnum } from '../webhooks/api-schemas.ts';
import { ADDRESS_FORMATS, CRYPTO_ASSETS, KEY_FAMILIES, NETWORK_CODES } from './networks.ts';

export const DEPOSIT_ADDRESS_STATUSES = ['active', 'disabled'] as const;
export type DepositAddressStatus = (typeof DEPOSIT_ADDRESS_STATUSES)[number];

const NetworkCode = StringEnum(NETWORK_CODES, {
  description: 'A network code of GET /api/v1/crypto/networks.',
});
const Asset = StringEnum(CRYPTO_ASSETS, { description: 'A crypto asset the network offers.' });

export const CryptoNetwork = component(
  'CryptoNetwork',
  Type.Object(
    {
      code: NetworkCode,
      name: Type.String(),
      assets: Type.Array(Asset, { description: 'Assets a deposit address on this network may receive.' }),
      confirmations_required: Type.Integer({
        minimum: 1,
        description: 'Block confirmations after which a deposit is received and credited.',
      }),
      address_format: StringEnum(ADDRESS_FORMATS, {
        description:
          '`eip55`: 0x + 40 hex digits with the EIP-55 mixed-case checksum; `base58check`: Tron `T...`; ' +
          '`bech32`: BIP84 native segwit, `bc1q...` (`tb1q...` in the sandbox, Bitcoin testnet).',
      }),
    },
    {
      description: 'A network deposit addresses are offered on (D22).',
      examples: [
        {
          code: 'ethereum',
          name: 'Ethereum',
          assets: ['USDC', 'USDT'],
          confirmations_required: 12,
          address_format: 'eip55',
        },
      ],
    },
  ),
);
export type CryptoNetworkView = Static<typeof CryptoNetwork>;

export const CryptoNetworkList = Type.Array(CryptoNetwork, {
  description: 'The networks on offer, sorted by code; a network without a configured key is absent.',
});

const ExternalId = StoredText({
  minLength: 1,
  maxLength: 128,
  description: 'Your reference, unique per organisation among deposit addresses (a second use is 409).',
});
const Label = StoredText({ minLength: 1, maxLength: 200, description: 'Free text, searchable.' });

export const CreateDepositAddressBody = component(
  'CreateCryptoDepositAddressRequest',
  Type.Object(
    {
      network: NetworkCode,
      asset: Asset,
      label: Type.Optional(Label),
      external_id: Type.Optional(ExternalId),
    },
    {
      additionalProperties: false,
      examples: [
        { network: 'ethereum', asset: 'USDC', label: 'Customer 4411', external_id: 'cust-4411-usdc' },
      ],
    },
  ),
);
export type CreateDepositAddressInput = Static<typeof CreateDepositAddressBody>;

const exampleAddress = {
  id: 'dad_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  network: 'ethereum',
  asset: 'USDC',
  address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
  derivation_path: "m/44'/60'/0'/0/0",
  status: 'active',
  label: 'Customer 4411',
  external_id: 'cust-4411-usdc',
  created_at: '2026-11-23T09:30:00.000Z',
  updated_at: '2026-11-23T09:30:00.000Z',
  disabled_at: null,
};

export const DepositAddress = component(
  'CryptoDepositAddress',
  Type.Object(
    {
      id: Type.String({ description: 'dad_ + ULID.' }),
      network: NetworkCode,
      asset: Asset,
      address: Type.String({ description: 'Where to send the asset, in the network address format.' }),
      derivation_path: Type.String({
        description:
          "BIP32 path of the address's key from the operator's wallet seed: `<account path>/0/<index>`.",
      }),
      status: StringEnum(DEPOSIT_ADDRESS_STATUSES, {
        description:
          '`active`, or `disabled` (not to be handed out again; funds sent to it are still credited).',
      }),
      label: Type.Union([Type.String(), Type.Null()]),
      external_id: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
      disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    },
    { description: 'A crypto deposit address of the organisation (D22).', examples: [exampleAddress] },
  ),
);
export type DepositAddressView = Static<typeof DepositAddress>;

export const DEPOSIT_ADDRESS_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;

export const DepositAddressSearchBody = component(
  'CryptoDepositAddressSearchRequest',
  searchBodySchema(
    {
      network: FilterList(NetworkCode),
      asset: FilterList(Asset),
      status: FilterList(StringEnum(DEPOSIT_ADDRESS_STATUSES)),
      external_id: FilterList(StoredText({ minLength: 1, maxLength: 128 })),
    },
    DEPOSIT_ADDRESS_SORT_KEYS,
  ),
);
export type DepositAddressSearchInput = Static<typeof DepositAddressSearchBody>;

export const DepositAddressPage = component('CryptoDepositAddressPage', pageSchema(DepositAddress));

export const DepositAddressIdParams = Type.Object({
  deposit_address_id: Type.String({
    description: 'The deposit address id (dad_...). Anything else, or another organisation’s id, is 404.',
    examples: [exampleAddress.id],
  }),
});

// Operator API: the configured keys and their first addresses, to check against the wallet.

export const AccountKeysQuery = Type.Object(
  {
    count: Type.Optional(
      Type.String({
        pattern: '^(?:[1-9]|[1-9][0-9]|100)$',
        description: 'Addresses to show per key, from index 0 (1..100, default 5).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AccountKey = component(
  'CryptoAccountKey',
  Type.Object({
    family: StringEnum(KEY_FAMILIES),
    variable: Type.String({ description: 'The environment variable the key comes from.' }),
    networks: Type.Array(NetworkCode),
    configured: Type.Boolean({ description: 'False: the family is not offered (no key).' }),
    extended_key: Type.Union([Type.String(), Type.Null()], { description: 'As configured (public).' }),
    account_path: Type.Union([Type.String(), Type.Null()]),
    next_index: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The index the next address will take (0 before the first).',
    }),
    first_addresses: Type.Array(
      Type.Object({ index: Type.Integer(), derivation_path: Type.String(), address: Type.String() }),
      { description: 'The addresses at indexes 0, 1, ...: compare them with the wallet before going live.' },
    ),
  }),
);
export const AccountKeyList = Type.Array(AccountKey);
export type AccountKeyView = Static<typeof AccountKey>;
