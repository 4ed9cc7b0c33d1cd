// Account keys and address derivation (D22): the sandbox's committed keys re-derived from the test
// mnemonic, published vectors (BIP84, BIP44 Ethereum and Tron of the test mnemonic, EIP-55), and the
// start-up checks of CRYPTO_XPUB_EVM, CRYPTO_XPUB_TRON, CRYPTO_ZPUB_BTC and CRYPTO_CONFIRMATIONS.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { deriveAddress, encodeAddress, toChecksumAddress } from '../../src/crypto/derivation.ts';
import {
  type AccountKey,
  parseAccountKey,
  SANDBOX_ACCOUNT_KEYS,
  TEST_MNEMONIC_COIN_FINGERPRINTS,
} from '../../src/crypto/keys.ts';
import { testEnv } from '../helpers/app.ts';

const TEST_MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const seed = mnemonicToSeedSync(TEST_MNEMONIC);
const root = HDKey.fromMasterSeed(seed);
/** Stands for an operator's own wallet (a BIP39 test vector mnemonic other than the sandbox's). */
const ownWallet = HDKey.fromMasterSeed(
  mnemonicToSeedSync('legal winner thank year wave sausage worth useful legal winner thank yellow'),
);
/** BIP84 testnet serialisation (SLIP-132 vpub / vprv). */
const VPUB = { public: 0x045f1cf6, private: 0x045f18bc };

/** The published BIP84 account key of the test mnemonic (m/84'/0'/0'). */
const BIP84_ZPUB =
  'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

const production = (overrides: Record<string, string>) =>
  loadConfig(testEnv({ APP_ENV: 'production', AUTH_REALM: 'production', ...overrides }));

function configError(env: Record<string, string>, variable: string): ConfigError {
  try {
    loadConfig(testEnv(env));
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.variable, variable);
    assert.match(error.message, new RegExp(`^Invalid configuration: ${variable} `));
    for (const value of Object.values(env))
      if (value.length > 20) assert.ok(!error.message.includes(value), 'the message never repeats a key');
    return error;
  }
  assert.fail(`loading ${JSON.stringify(env)} should fail on ${variable}`);
}

describe('sandbox account keys', () => {
  it("are the account keys of the test mnemonic at m/44'/60'/0', m/44'/195'/0' and m/84'/1'/0'", () => {
    assert.equal(SANDBOX_ACCOUNT_KEYS.evm, root.derive("m/44'/60'/0'").publicExtendedKey);
    assert.equal(SANDBOX_ACCOUNT_KEYS.tron, root.derive("m/44'/195'/0'").publicExtendedKey);
    assert.equal(
      SANDBOX_ACCOUNT_KEYS.bitcoin,
      HDKey.fromMasterSeed(seed, VPUB).derive("m/84'/1'/0'").publicExtendedKey,
    );
  });

  it('are what the sandbox configuration uses when no key is set, with their account paths', () => {
    const config = loadConfig(testEnv());
    assert.equal(config.cryptoKeys.evm?.extendedKey, SANDBOX_ACCOUNT_KEYS.evm);
    assert.equal(config.cryptoKeys.evm?.accountPath, "m/44'/60'/0'");
    assert.equal(config.cryptoKeys.tron?.accountPath, "m/44'/195'/0'");
    assert.equal(config.cryptoKeys.bitcoin?.accountPath, "m/84'/1'/0'");
    assert.equal(config.cryptoKeys.bitcoin?.testnet, true);
  });
});

describe('address derivation: published vectors', () => {
  const sandbox = loadConfig(testEnv()).cryptoKeys;

  it("EVM: m/44'/60'/0'/0/i of the test mnemonic (BIP44, EIP-55), as MetaMask shows them", () => {
    const expected = [
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
      '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0',
      '0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A',
    ];
    expected.forEach((address, index) => {
      assert.deepEqual(deriveAddress(sandbox.evm!, index), {
        address,
        derivationPath: `m/44'/60'/0'/0/${index}`,
        index,
      });
    });
  });

  it("Tron: m/44'/195'/0'/0/i of the test mnemonic (base58check, 0x41 prefix)", () => {
    assert.equal(deriveAddress(sandbox.tron!, 0).address, 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    assert.equal(deriveAddress(sandbox.tron!, 1).address, 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK');
    assert.equal(deriveAddress(sandbox.tron!, 0).derivationPath, "m/44'/195'/0'/0/0");
  });

  it("Bitcoin testnet: m/84'/1'/0'/0/0 of the test mnemonic is tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", () => {
    assert.deepEqual(deriveAddress(sandbox.bitcoin!, 0), {
      address: 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl',
      derivationPath: "m/84'/1'/0'/0/0",
      index: 0,
    });
  });

  it('Bitcoin mainnet: the BIP84 test vector zpub gives bc1qcr8te4... and bc1qnjg0jd... at /0/0 and /0/1', () => {
    // Parsed as production parses it; production then refuses the test mnemonic's keys (see below).
    const key = parseAccountKey('bitcoin', BIP84_ZPUB, false);
    assert.equal(key.accountPath, "m/84'/0'/0'");
    assert.equal(key.testnet, false);
    assert.deepEqual(deriveAddress(key, 0), {
      address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu',
      derivationPath: "m/84'/0'/0'/0/0",
      index: 0,
    });
    assert.equal(deriveAddress(key, 1).address, 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
  });

  it('derives from the public key what the wallet derives from the seed at the same full path', () => {
    // Public (xpub) derivation against private derivation from the seed, for 25 indexes of each family.
    const checks: [AccountKey, string][] = [
      [sandbox.evm!, "m/44'/60'/0'"],
      [sandbox.tron!, "m/44'/195'/0'"],
      [sandbox.bitcoin!, "m/84'/1'/0'"],
    ];
    for (const [key, account] of checks) {
      for (let index = 0; index < 25; index++) {
        const fromSeed = root.derive(`${account}/0/${index}`).publicKey!;
        assert.equal(
          deriveAddress(key, index).address,
          encodeAddress(key.family, fromSeed, key.testnet),
          `${account}/0/${index}`,
        );
      }
    }
  });

  it('EIP-55: the checksum examples of the EIP', () => {
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '0xde709f2102306220921060314715629080e2fb77',
    ]) {
      assert.equal(toChecksumAddress(address.toLowerCase()), address);
    }
  });

  it('refuses an index outside the non-hardened range', () => {
    assert.throws(() => deriveAddress(sandbox.evm!, 2 ** 31), RangeError);
    assert.throws(() => deriveAddress(sandbox.evm!, -1), RangeError);
  });
});

describe('key configuration', () => {
  it('production offers no family without its key', () => {
    const config = production({});
    assert.deepEqual(config.cryptoKeys, {});
    const evmOnly = production({ CRYPTO_XPUB_EVM: ownWallet.derive("m/44'/60'/1'").publicExtendedKey });
    assert.deepEqual(Object.keys(evmOnly.cryptoKeys), ['evm']);
  });

  it("knows the test mnemonic's coin-type nodes: the parents of its account keys", () => {
    assert.deepEqual(TEST_MNEMONIC_COIN_FINGERPRINTS, {
      evm: root.derive("m/44'/60'").fingerprint,
      tron: root.derive("m/44'/195'").fingerprint,
      bitcoin: root.derive("m/84'/0'").fingerprint,
    });
  });

  it("production refuses every account key of the sandbox's published mnemonic, naming the variable", () => {
    for (const [variable, key] of [
      ['CRYPTO_XPUB_EVM', SANDBOX_ACCOUNT_KEYS.evm],
      ['CRYPTO_XPUB_EVM', root.derive("m/44'/60'/1'").publicExtendedKey],
      ['CRYPTO_XPUB_TRON', SANDBOX_ACCOUNT_KEYS.tron],
      ['CRYPTO_XPUB_TRON', root.derive("m/44'/195'/7'").publicExtendedKey],
      // The BIP84 test vector, as a zpub and as the same key written as an xpub.
      ['CRYPTO_ZPUB_BTC', BIP84_ZPUB],
      ['CRYPTO_ZPUB_BTC', root.derive("m/84'/0'/0'").publicExtendedKey],
      ['CRYPTO_ZPUB_BTC', root.derive("m/84'/0'/2'").publicExtendedKey],
    ] as const) {
      const error = configError(
        testEnv({ APP_ENV: 'production', AUTH_REALM: 'production', [variable]: key }),
        variable,
      );
      assert.match(error.message, /account key of the sandbox's published test mnemonic/);
    }
    // Another wallet's keys start.
    const config = production({
      CRYPTO_XPUB_EVM: ownWallet.derive("m/44'/60'/0'").publicExtendedKey,
      CRYPTO_XPUB_TRON: ownWallet.derive("m/44'/195'/0'").publicExtendedKey,
      CRYPTO_ZPUB_BTC: ownWallet.derive("m/84'/0'/0'").publicExtendedKey,
    });
    assert.deepEqual(Object.keys(config.cryptoKeys).sort(), ['bitcoin', 'evm', 'tron']);
  });

  it('a zpub and the xpub of the same key are one key (one index sequence)', () => {
    const xpub = root.derive("m/84'/0'/0'").publicExtendedKey;
    const fromZpub = parseAccountKey('bitcoin', BIP84_ZPUB, false);
    const fromXpub = parseAccountKey('bitcoin', xpub, false);
    assert.equal(fromZpub.canonicalKey, xpub);
    assert.equal(fromXpub.canonicalKey, xpub);
    assert.equal(deriveAddress(fromXpub, 0).address, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
  });

  it('an account other than 0 gives its own account path', () => {
    const key = parseAccountKey('evm', root.derive("m/44'/60'/3'").publicExtendedKey, false);
    assert.equal(key.accountPath, "m/44'/60'/3'");
    assert.equal(
      deriveAddress(key, 2).address,
      encodeAddress('evm', root.derive("m/44'/60'/3'/0/2").publicKey!, false),
    );
  });

  it('stops start-up on a key that is not base58check, naming the variable', () => {
    const error = configError({ CRYPTO_XPUB_EVM: 'not-a-key' }, 'CRYPTO_XPUB_EVM');
    assert.match(error.message, /base58check/);
    const flipped = `${SANDBOX_ACCOUNT_KEYS.tron.slice(0, -1)}${SANDBOX_ACCOUNT_KEYS.tron.endsWith('d') ? 'e' : 'd'}`;
    assert.match(configError({ CRYPTO_XPUB_TRON: flipped }, 'CRYPTO_XPUB_TRON').message, /checksum/);
  });

  it('refuses an extended private key without repeating it', () => {
    const xprv = root.derive("m/44'/60'/0'").privateExtendedKey;
    const error = configError({ CRYPTO_XPUB_EVM: xprv }, 'CRYPTO_XPUB_EVM');
    assert.match(error.message, /PRIVATE key \(xprv\)/);
    const vprv = HDKey.fromMasterSeed(seed, VPUB).derive("m/84'/1'/0'").privateExtendedKey;
    assert.match(configError({ CRYPTO_ZPUB_BTC: vprv }, 'CRYPTO_ZPUB_BTC').message, /PRIVATE key \(vprv\)/);
  });

  it('refuses a key that is not at account level', () => {
    const master = root.publicExtendedKey;
    assert.match(configError({ CRYPTO_XPUB_EVM: master }, 'CRYPTO_XPUB_EVM').message, /depth 3.*depth 0/);
    const chain = root.derive("m/44'/195'/0'/0").publicExtendedKey;
    assert.match(configError({ CRYPTO_XPUB_TRON: chain }, 'CRYPTO_XPUB_TRON').message, /depth 4/);
  });

  it('refuses a Bitcoin key of the other network, and a BIP49 key', () => {
    // Production needs a mainnet zpub or xpub; the sandbox a testnet vpub or tpub.
    const error = configError(
      { APP_ENV: 'production', AUTH_REALM: 'production', CRYPTO_ZPUB_BTC: SANDBOX_ACCOUNT_KEYS.bitcoin },
      'CRYPTO_ZPUB_BTC',
    );
    assert.match(error.message, /testnet key where APP_ENV=production needs an account-level zpub or xpub/);
    assert.match(configError({ CRYPTO_ZPUB_BTC: BIP84_ZPUB }, 'CRYPTO_ZPUB_BTC').message, /mainnet key/);
    const ypub = HDKey.fromMasterSeed(seed, { public: 0x049d7cb2, private: 0x049d7878 }).derive(
      "m/49'/0'/0'",
    ).publicExtendedKey;
    assert.match(
      configError(
        { APP_ENV: 'production', AUTH_REALM: 'production', CRYPTO_ZPUB_BTC: ypub },
        'CRYPTO_ZPUB_BTC',
      ).message,
      /a ypub where an account-level zpub or xpub is needed/,
    );
  });

  it('refuses a zpub for the EVM key', () => {
    assert.match(
      configError(
        { APP_ENV: 'production', AUTH_REALM: 'production', CRYPTO_XPUB_EVM: BIP84_ZPUB },
        'CRYPTO_XPUB_EVM',
      ).message,
      /a zpub where an account-level xpub is needed/,
    );
  });

  it('CRYPTO_CONFIRMATIONS overrides the networks named and keeps the other defaults', () => {
    assert.deepEqual(loadConfig(testEnv()).cryptoConfirmations, {
      bitcoin: 3,
      ethereum: 12,
      polygon: 128,
      tron: 19,
    });
    assert.deepEqual(
      loadConfig(testEnv({ CRYPTO_CONFIRMATIONS: 'bitcoin:6, polygon:256' })).cryptoConfirmations,
      {
        bitcoin: 6,
        ethereum: 12,
        polygon: 256,
        tron: 19,
      },
    );
    assert.match(
      configError({ CRYPTO_CONFIRMATIONS: 'solana:3' }, 'CRYPTO_CONFIRMATIONS').message,
      /"solana:3" is not one/,
    );
    configError({ CRYPTO_CONFIRMATIONS: 'bitcoin:0' }, 'CRYPTO_CONFIRMATIONS');
  });
});
