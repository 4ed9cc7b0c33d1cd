// Secret handling, all keyed by SECRETS_ENCRYPTION_KEY (D13): encryption at rest, and salted keyed
// hashes of client secrets (D6).
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

// HKDF info of the client-secret hashing key. The AES key itself never keys an HMAC: each use gets a
// sub-key of its own, so neither use can be turned against the other.
const CLIENT_SECRET_KEY_INFO = 'payment-service client-secret HMAC-SHA-256 v1';
const HMAC_SCHEME = 'hmac-sha256';
const SALT_BYTES = 16;

/**
 * What a stored client-secret hash says about a presented secret:
 * - `match`: it matches;
 * - `match-outdated`: it matches a hash of the slow scheme (scrypt); store hashClientSecret() instead;
 * - `mismatch`: it does not match;
 * - `other-key`: the hash was keyed with another SECRETS_ENCRYPTION_KEY, so no secret can match it here.
 */
export type ClientSecretCheck = 'match' | 'match-outdated' | 'mismatch' | 'other-key';

/**
 * AES-256-GCM with a random 96-bit nonce, stored as `v1.<nonce>.<tag>.<ciphertext>` in base64url; and
 * HMAC-SHA-256 of client secrets with a sub-key derived from the same key (HKDF-SHA-256).
 */
export class SecretBox {
  readonly #key: Buffer;
  readonly #clientSecretKey: KeyObject;
  /** Names the client-secret key in stored hashes, so a hash made under another key is recognised. */
  readonly clientSecretKeyId: string;

  constructor(hexKey: string) {
    this.#key = Buffer.from(hexKey, 'hex');
    if (this.#key.length !== 32) throw new Error('the encryption key must be 32 bytes');
    // A KeyObject built once: Node turns raw key bytes into a new key on every HMAC otherwise.
    this.#clientSecretKey = createSecretKey(
      Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), CLIENT_SECRET_KEY_INFO, 32)),
    );
    this.clientSecretKeyId = createHmac('sha256', this.#clientSecretKey)
      .update('key id')
      .digest('base64url')
      .slice(0, 8);
  }

  /**
   * A client secret's stored form: `hmac-sha256$<key id>$<salt>$<mac>` (base64url), the MAC taken
   * over a random salt followed by the secret. Microseconds, where scrypt took tens of milliseconds:
   * the secrets are 256 random bits, which no hash speed makes guessable (see the operator guide).
   */
  hashClientSecret(secret: string): string {
    const salt = randomBytes(SALT_BYTES);
    return `${HMAC_SCHEME}$${this.clientSecretKeyId}$${salt.toString('base64url')}$${this.#mac(salt, secret).toString('base64url')}`;
  }

  /** Compares a presented client secret with its stored hash in constant time (either scheme). */
  async checkClientSecret(secret: string, stored: string): Promise<ClientSecretCheck> {
    const parts = stored.split('$');
    if (parts[0] === HMAC_SCHEME && parts.length === 4) {
      const [, keyId, salt, expected] = parts as [string, string, string, string];
      if (keyId !== this.clientSecretKeyId) return 'other-key';
      const expectedBytes = Buffer.from(expected, 'base64url');
      const actual = this.#mac(Buffer.from(salt, 'base64url'), secret);
      return actual.length === expectedBytes.length && timingSafeEqual(actual, expectedBytes)
        ? 'match'
        : 'mismatch';
    }
    return (await verifyScrypt(secret, stored)) ? 'match-outdated' : 'mismatch';
  }

  #mac(salt: Buffer, secret: string): Buffer {
    return createHmac('sha256', this.#clientSecretKey).update(salt).update(secret, 'utf8').digest();
  }

  encrypt(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return ['v1', nonce, tag, ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  decrypt(sealed: string): string {
    const [version, nonce, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !nonce || !tag || ciphertext === undefined)
      throw new Error('unrecognised sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}

export const generateEncryptionKey = (): string => randomBytes(32).toString('hex');

/** A webhook signing secret: `whsec_` + 64 hexadecimal characters (contract section 2). */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString('hex')}`;

/** A client secret handed out by the operator API: 256 random bits, base64url (43 characters). */
export const generateClientSecret = (): string => randomBytes(32).toString('base64url');

/**
 * Salted scrypt (`scrypt$<salt>$<hash>`, base64url, Node's default cost), the slow scheme some stored
 * hashes still use: verified so that no client has to be re-issued, and re-hashed on a match.
 */
async function verifyScrypt(secret: string, stored: string): Promise<boolean> {
  const [scheme, salt, expected] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const expectedBytes = Buffer.from(expected, 'base64url');
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), expectedBytes.length);
  return actual.length === expectedBytes.length && timingSafeEqual(actual, expectedBytes);
}
