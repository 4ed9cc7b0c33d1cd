// The crypto networks deposit addresses are offered on (D22), and the key family that derives each one's
// addresses. `ethereum` and `polygon` share the EVM family: one account key, one index sequence, and an
// address valid on both chains.
export const KEY_FAMILIES = ['evm', 'tron', 'bitcoin'] as const;
export type KeyFamily = (typeof KEY_FAMILIES)[number];

export const NETWORK_CODES = ['bitcoin', 'ethereum', 'polygon', 'tron'] as const;
export type NetworkCode = (typeof NETWORK_CODES)[number];

export const CRYPTO_ASSETS = ['BTC', 'USDC', 'USDT'] as const;
export type CryptoAsset = (typeof CRYPTO_ASSETS)[number];

/** How a network writes its addresses: EIP-55 mixed-case hex, Tron base58check, BIP84 bech32 (P2WPKH). */
export const ADDRESS_FORMATS = ['eip55', 'base58check', 'bech32'] as const;
export type AddressFormat = (typeof ADDRESS_FORMATS)[number];

export interface Network {
  code: NetworkCode;
  name: string;
  family: KeyFamily;
  assets: readonly CryptoAsset[];
  addressFormat: AddressFormat;
  /**
   * Confirmations after which a deposit counts as received, unless CRYPTO_CONFIRMATIONS says otherwise.
   * Ethereum: 12 blocks (about 2.5 minutes), the figure exchanges long used; finality takes two epochs
   * (64 blocks, about 13 minutes) for an operator who wants to wait for it;
   * Polygon PoS: 128 blocks (about 4.5 minutes), a depth custodians commonly use on that chain;
   * Tron: 19 blocks, when a block is solidified (confirmed by 2/3 of its 27 super representatives);
   * Bitcoin: 3 blocks (about 30 minutes), as most custodial services credit BTC deposits.
   */
  defaultConfirmations: number;
}

export const NETWORKS: Readonly<Record<NetworkCode, Network>> = {
  bitcoin: {
    code: 'bitcoin',
    name: 'Bitcoin',
    family: 'bitcoin',
    assets: ['BTC'],
    addressFormat: 'bech32',
    defaultConfirmations: 3,
  },
  ethereum: {
    code: 'ethereum',
    name: 'Ethereum',
    family: 'evm',
    assets: ['USDC', 'USDT'],
    addressFormat: 'eip55',
    defaultConfirmations: 12,
  },
  polygon: {
    code: 'polygon',
    name: 'Polygon PoS',
    family: 'evm',
    assets: ['USDC', 'USDT'],
    addressFormat: 'eip55',
    defaultConfirmations: 128,
  },
  tron: {
    code: 'tron',
    name: 'Tron',
    family: 'tron',
    assets: ['USDT', 'USDC'],
    addressFormat: 'base58check',
    defaultConfirmations: 19,
  },
};

/**
 * The networks in the order D22 lists them: where a deposit names no network, the first of them that fits
 * is taken (the default network of an asset, the network a sandbox deposit's address is looked up on).
 */
export const NETWORKS_IN_D22_ORDER: readonly NetworkCode[] = ['ethereum', 'polygon', 'tron', 'bitcoin'];

export const isNetworkCode = (value: string): value is NetworkCode =>
  (NETWORK_CODES as readonly string[]).includes(value);

/** Whether the network carries the asset (BTC on bitcoin; USDC and USDT on the others). */
export const carries = (network: NetworkCode, asset: string): boolean =>
  (NETWORKS[network].assets as readonly string[]).includes(asset);
