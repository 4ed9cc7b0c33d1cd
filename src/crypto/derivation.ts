// Deposit addresses from account public keys (D22): the key at `<account path>/0/<index>` (BIP44's
// external chain, one non-hardened index per address), written in its network's address format.
// Everything cryptographic is done by audited libraries (@scure/bip32 for BIP32 public derivation,
// @noble/curves for the secp256k1 point, @noble/hashes for keccak-256 and SHA-256, @scure/base for
// base58check, @scure/btc-signer for P2WPKH bech32); this file only strings them together per format.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { createBase58check } from '@scure/base';
import { HDKey } from '@scure/bip32';
import { NETWORK, p2wpkh, TEST_NETWORK } from '@scure/btc-signer';
import type { AccountKey } from './keys.ts';
import type { KeyFamily } from './networks.ts';

/** BIP32's last non-hardened index: indexes at and above 2^31 are hardened, which public keys cannot derive. */
export const MAX_INDEX = 0x7fffffff;

/** The external chain (`/0`) of each account key, derived once per process. */
const externalChains = new Map<string, HDKey>();

function externalChain(key: AccountKey): HDKey {
  let chain = externalChains.get(key.canonicalKey);
  if (chain === undefined) {
    chain = HDKey.fromExtendedKey(key.canonicalKey).deriveChild(0);
    externalChains.set(key.canonicalKey, chain);
  }
  return chain;
}

export interface DerivedAddress {
  address: string;
  derivationPath: string;
  index: number;
}

/** The address at `index` of the key's external chain. */
export function deriveAddress(key: AccountKey, index: number): DerivedAddress {
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
    throw new RangeError(`derivation index ${index} is outside 0..${MAX_INDEX}`);
  }
  const publicKey = externalChain(key).deriveChild(index).publicKey!;
  return {
    address: encodeAddress(key.family, publicKey, key.testnet),
    derivationPath: `${key.accountPath}/0/${index}`,
    index,
  };
}

/** A compressed secp256k1 public key written as its family's address. */
export function encodeAddress(family: KeyFamily, publicKey: Uint8Array, testnet: boolean): string {
  switch (family) {
    case 'evm':
      return toChecksumAddress(bytesToHex(accountId(publicKey)));
    case 'tron':
      return tronAddress(accountId(publicKey));
    case 'bitcoin':
      return p2wpkh(publicKey, testnet ? TEST_NETWORK : NETWORK).address!;
  }
}

/**
 * Ethereum's (and Tron's) 20-byte account id: the last 20 bytes of keccak-256 over the uncompressed
 * public key without its 0x04 prefix (Ethereum yellow paper, appendix F).
 */
function accountId(publicKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return keccak_256(uncompressed.subarray(1)).subarray(12);
}

/**
 * EIP-55 mixed-case checksum: a hex letter is upper-case where the same position of
 * keccak-256(lower-case hex address as ASCII) is 8 or more.
 */
export function toChecksumAddress(hex: string): string {
  const lower = hex.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{40}$/.test(lower)) throw new RangeError('an EVM address is 20 bytes of hex');
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  }
  return out;
}

const base58check = createBase58check(sha256);

/** Tron: base58check (double SHA-256 checksum) of 0x41 followed by the 20-byte account id: `T...`. */
function tronAddress(id: Uint8Array): string {
  const payload = new Uint8Array(21);
  payload[0] = 0x41;
  payload.set(id, 1);
  return base58check.encode(payload);
}

/**
 * The form addresses are compared in: EVM hex and bech32 are case-insensitive (lower-cased here), Tron's
 * base58 is case-sensitive (kept as given). Surrounding whitespace never belongs to an address.
 */
export function addressLookupKey(family: KeyFamily, address: string): string {
  const trimmed = address.trim();
  return family === 'tron' ? trimmed : trimmed.toLowerCase();
}
