// The operator's account-level extended public keys (D22), one per key family: read from
// CRYPTO_XPUB_EVM, CRYPTO_XPUB_TRON and CRYPTO_ZPUB_BTC at start and checked here, so that a key that
// cannot derive the addresses its family needs stops the start-up. The service holds no private key:
// an extended private key is refused.
//
// Serialisation (BIP32): base58check of 78 bytes, starting with 4 version bytes that say public or private,
// mainnet or testnet, and (SLIP-132) the script type a wallet meant: xpub/tpub (any), zpub/vpub (BIP84
// native segwit), ypub/upub (BIP49 wrapped segwit).
import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';
import { HARDENED_OFFSET, HDKey } from '@scure/bip32';
import type { KeyFamily } from './networks.ts';

export const KEY_VARIABLES: Readonly<Record<KeyFamily, string>> = {
  evm: 'CRYPTO_XPUB_EVM',
  tron: 'CRYPTO_XPUB_TRON',
  bitcoin: 'CRYPTO_ZPUB_BTC',
};

/**
 * The sandbox's keys (D22): the account keys of the public test mnemonic `abandon` ×11 `about` at
 * m/44'/60'/0' (EVM), m/44'/195'/0' (Tron) and m/84'/1'/0' (Bitcoin testnet, BIP84), so that anyone can
 * re-derive the sandbox's addresses with standard tools. test/crypto/keys.test.ts re-derives them.
 */
export const SANDBOX_ACCOUNT_KEYS: Readonly<Record<KeyFamily, string>> = {
  evm: 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt',
  tron: 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd',
  bitcoin:
    'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc',
};

/**
 * Fingerprints of the test mnemonic's coin-type nodes (m/44'/60', m/44'/195', m/84'/0'): the parent of every
 * account key of that mnemonic in each family, the sandbox's and any other account's alike. The mnemonic is
 * published, so anyone can spend what such keys' addresses receive; production refuses them (src/config.ts).
 * test/crypto/keys.test.ts derives them again from the mnemonic.
 */
export const TEST_MNEMONIC_COIN_FINGERPRINTS: Readonly<Record<KeyFamily, number>> = {
  evm: 0xd32e4508,
  tron: 0xb7e5906e,
  bitcoin: 0x7ef32bdb,
};

/** BIP32 / SLIP-132 version bytes: public, its private counterpart, and what they mean. */
interface KeyVersion {
  prefix: string;
  public: number;
  private: number;
  testnet: boolean;
}
const VERSIONS: readonly KeyVersion[] = [
  { prefix: 'xpub', public: 0x0488b21e, private: 0x0488ade4, testnet: false },
  { prefix: 'tpub', public: 0x043587cf, private: 0x04358394, testnet: true },
  { prefix: 'ypub', public: 0x049d7cb2, private: 0x049d7878, testnet: false },
  { prefix: 'upub', public: 0x044a5262, private: 0x044a4e28, testnet: true },
  { prefix: 'zpub', public: 0x04b24746, private: 0x04b2430c, testnet: false },
  { prefix: 'vpub', public: 0x045f1cf6, private: 0x045f18bc, testnet: true },
];
const XPUB = VERSIONS[0]!;

/** What each family accepts: EVM and Tron keys are plain xpubs; Bitcoin BIP84 keys zpub/xpub (vpub/tpub). */
function acceptedPrefixes(family: KeyFamily, testnet: boolean): readonly string[] {
  if (family !== 'bitcoin') return ['xpub'];
  return testnet ? ['vpub', 'tpub'] : ['zpub', 'xpub'];
}

/** BIP44 / BIP84 purpose and coin type of each family's account path (SLIP-44 coin types). */
function purposeAndCoin(family: KeyFamily, testnet: boolean): [number, number] {
  switch (family) {
    case 'evm':
      return [44, 60];
    case 'tron':
      return [44, 195];
    case 'bitcoin':
      return [84, testnet ? 1 : 0];
  }
}

/** A validated account key: plain data, kept in the frozen configuration. */
export interface AccountKey {
  family: KeyFamily;
  /** The environment variable it came from. */
  variable: string;
  /** As configured (xpub, zpub, vpub, ...). */
  extendedKey: string;
  /**
   * The same key serialised with the standard xpub version bytes: one identity for the key however it
   * was written, so that re-writing a zpub as an xpub cannot restart its index sequence.
   */
  canonicalKey: string;
  /** `m/44'/60'/0'`: the path the key stands at, from its family and its own (hardened) account index. */
  accountPath: string;
  /** Bitcoin only: testnet addresses (`tb1q`), in the sandbox. */
  testnet: boolean;
  /** The fingerprint of the key's parent, the coin-type node of the wallet it comes from (BIP32). */
  parentFingerprint: number;
}

const base58check = createBase58check(sha256);

/**
 * Checks one configured key and describes it; throws an Error whose message completes
 * "<VARIABLE> ..." and never repeats the value (it might be a private key pasted by mistake).
 */
export function parseAccountKey(family: KeyFamily, raw: string, testnet: boolean): AccountKey {
  const value = raw.trim();
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(value);
  } catch {
    throw new Error('is not an extended public key: its base58check encoding or checksum is invalid');
  }
  if (bytes.length !== 78) {
    throw new Error(`is not an extended public key: it decodes to ${bytes.length} bytes instead of 78`);
  }
  const version = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
  const accepted = acceptedPrefixes(family, testnet);
  const expected = `an account-level ${accepted.join(' or ')}`;
  const privateOf = VERSIONS.find((candidate) => candidate.private === version);
  if (privateOf) {
    throw new Error(
      `holds an extended PRIVATE key (${privateOf.prefix.replace('pub', 'prv')}): configure ${expected} ` +
        'instead; the service never holds private keys. Move the funds if this key was exposed',
    );
  }
  const kind = VERSIONS.find((candidate) => candidate.public === version);
  if (!kind) {
    throw new Error(
      `has unknown version bytes 0x${version.toString(16).padStart(8, '0')}: expected ${expected}`,
    );
  }
  if (!accepted.includes(kind.prefix)) {
    const why =
      kind.testnet !== testnet
        ? `a ${kind.testnet ? 'testnet' : 'mainnet'} key where APP_ENV=${testnet ? 'sandbox' : 'production'} needs ${expected}`
        : `a ${kind.prefix} where ${expected} is needed`;
    throw new Error(`is ${why}`);
  }
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(value, { public: kind.public, private: kind.private });
  } catch (error) {
    throw new Error(`is not a valid extended public key: ${(error as Error).message}`);
  }
  const [purpose, coin] = purposeAndCoin(family, testnet);
  const shape = `m/${purpose}'/${coin}'/<account>'`;
  if (key.depth !== 3) {
    throw new Error(
      `must be an account-level key (depth 3, ${shape}); this key has depth ${key.depth}. Export the ` +
        "account's extended public key, not the wallet's master key nor an address key",
    );
  }
  if (key.index < HARDENED_OFFSET) {
    throw new Error(`must be an account-level key at a hardened account index (${shape})`);
  }
  const canonical = new HDKey({
    versions: { public: XPUB.public, private: XPUB.private },
    depth: key.depth,
    index: key.index,
    parentFingerprint: key.parentFingerprint,
    chainCode: key.chainCode!,
    publicKey: key.publicKey!,
  });
  return {
    family,
    variable: KEY_VARIABLES[family],
    extendedKey: value,
    canonicalKey: canonical.publicExtendedKey,
    accountPath: `m/${purpose}'/${coin}'/${key.index - HARDENED_OFFSET}'`,
    testnet: family === 'bitcoin' && testnet,
    parentFingerprint: key.parentFingerprint,
  };
}
