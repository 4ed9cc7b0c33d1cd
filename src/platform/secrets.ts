// Secret handling, all keyed by SECRETS_ENCRYPTION_KEY (D13): encryption at rest, and salted keyed
// hashes of client secrets (D6); previous keys open and verify what they sealed and hashed.
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
 * - `match-outdated`: it matches a hash of the slow scheme (scrypt) or one keyed with a previous key;
 *   store hashClientSecret() instead;
 * - `mismatch`: it does not match;
 * - `other-key`: the hash was keyed with a key this process does not hold, so no secret can match it here.
 */
export type ClientSecretCheck = 'match' | 'match-outdated' | 'mismatch' | 'other-key';

/** One SECRETS_ENCRYPTION_KEY and what is derived from it. */
interface Key {
  /** Names the key in client-secret hashes and in the operator's status; reveals nothing about the key. */
  id: string;
  aes: Buffer;
  /** The client-secret HMAC key, a KeyObject built once: Node turns raw bytes into a new key on every HMAC otherwise. */
  clientSecret: KeyObject;
}

function deriveKey(hexKey: string): Key {
  const aes = Buffer.from(hexKey, 'hex');
  if (aes.length !== 32) throw new Error('the encryption key must be 32 bytes');
  const clientSecret = createSecretKey(
    Buffer.from(hkdfSync('sha256', aes, Buffer.alloc(0), CLIENT_SECRET_KEY_INFO, 32)),
  );
  const id = createHmac('sha256', clientSecret).update('key id').digest('base64url').slice(0, 8);
  return { id, aes, clientSecret };
}

// A sealed value is `v1.<nonce>.<tag>.<ciphertext>` whatever key sealed it, so that every release reads
// what any other release wrote (a rolling deploy or a rollback). The keys are tried in turn, the current
// one first: GCM's 128-bit tag rejects every key but the one that sealed the value, as with Laravel's
// APP_PREVIOUS_KEYS. Only values sealed under a previous key, during a rotation, cost a failed try.
const SEALED_VERSION = 'v1';

/**
 * AES-256-GCM with a random 96-bit nonce, base64url parts; and HMAC-SHA-256 of client secrets with a
 * sub-key derived from the same key (HKDF-SHA-256). The current key seals and hashes; previous keys
 * (SECRETS_ENCRYPTION_KEYS_PREVIOUS) only open and verify, so that the key can be rotated while the
 * service runs (operator guide, "Rotating SECRETS_ENCRYPTION_KEY").
 */
export class SecretBox {
  readonly #current: Key;
  /** The current key first. */
  readonly #keys: readonly Key[];
  readonly #byId: ReadonlyMap<string, Key>;
  /** The current key's id, as client-secret hashes name it. */
  readonly keyId: string;
  /** The previous keys' ids, in the order configured. */
  readonly previousKeyIds: readonly string[];

  constructor(hexKey: string, previousHexKeys: readonly string[] = []) {
    this.#current = deriveKey(hexKey);
    const previous = previousHexKeys.map(deriveKey);
    this.#keys = [this.#current, ...previous];
    this.#byId = new Map(this.#keys.map((key) => [key.id, key]));
    if (this.#byId.size !== this.#keys.length)
      throw new Error('the encryption keys must differ from each other');
    this.keyId = this.#current.id;
    this.previousKeyIds = previous.map((key) => key.id);
  }

  /**
   * A client secret's stored form: `hmac-sha256$<key id>$<salt>$<mac>` (base64url), the MAC taken
   * over a random salt followed by the secret. Microseconds, where scrypt took tens of milliseconds:
   * the secrets are 256 random bits, which no hash speed makes guessable (see the operator guide).
   */
  hashClientSecret(secret: string): string {
    const salt = randomBytes(SALT_BYTES);
    return `${HMAC_SCHEME}$${this.keyId}$${salt.toString('base64url')}$${mac(this.#current, salt, secret).toString('base64url')}`;
  }

  /** Compares a presented client secret with its stored hash in constant time (either scheme). */
  async checkClientSecret(secret: string, stored: string): Promise<ClientSecretCheck> {
    const parts = stored.split('$');
    if (parts[0] === HMAC_SCHEME && parts.length === 4) {
      const [, keyId, salt, expected] = parts as [string, string, string, string];
      const key = this.#byId.get(keyId);
      if (!key) return 'other-key';
      const expectedBytes = Buffer.from(expected, 'base64url');
      const actual = mac(key, Buffer.from(salt, 'base64url'), secret);
      if (actual.length !== expectedBytes.length || !timingSafeEqual(actual, expectedBytes))
        return 'mismatch';
      return key === this.#current ? 'match' : 'match-outdated';
    }
    return (await verifyScrypt(secret, stored)) ? 'match-outdated' : 'mismatch';
  }

  encrypt(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#current.aes, nonce);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      SEALED_VERSION,
      ...[nonce, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')),
    ].join('.');
  }

  decrypt(sealed: string): string {
    return this.#open(sealed).plaintext;
  }

  /**
   * `sealed` sealed again under the current key, or null when the current key sealed it. Throws when no
   * key this process holds opens it.
   */
  reseal(sealed: string): string | null {
    const { key, plaintext } = this.#open(sealed);
    return key === this.#current ? null : this.encrypt(plaintext);
  }

  #open(sealed: string): { key: Key; plaintext: string } {
    const parts = sealed.split('.');
    if (parts[0] !== SEALED_VERSION || parts.length !== 4) throw new Error('unrecognised sealed secret');
    const [, nonce, tag, ciphertext] = parts as [string, string, string, string];
    for (const key of this.#keys) {
      try {
        return { key, plaintext: open(key, nonce, tag, ciphertext) };
      } catch {
        // Another key's value, or a damaged one: try the next key.
      }
    }
    throw new Error('sealed under a key that is not configured, or damaged');
  }

  /** Whether `keyId` names the current key, a previous one, or a key this process does not hold. */
  keyRole(keyId: string): 'current' | 'previous' | 'not_configured' {
    if (keyId === this.keyId) return 'current';
    return this.#byId.has(keyId) ? 'previous' : 'not_configured';
  }
}

function mac(key: Key, salt: Buffer, secret: string): Buffer {
  return createHmac('sha256', key.clientSecret).update(salt).update(secret, 'utf8').digest();
}

function open(key: Key, nonce: string, tag: string, ciphertext: string): string {
  // A full 16-byte tag: Node accepts shorter ones unless told, and a short tag is easier to forge.
  const decipher = createDecipheriv('aes-256-gcm', key.aes, Buffer.from(nonce, 'base64url'), {
    authTagLength: 16,
  });
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
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
