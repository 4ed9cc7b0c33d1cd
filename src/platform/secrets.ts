// Secret handling: encryption at rest (D13) and salted hashes of client secrets (D6).
import { createCipheriv, createDecipheriv, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** AES-256-GCM with a random 96-bit nonce. Stored as `v1.<nonce>.<tag>.<ciphertext>` in base64url. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(hexKey: string) {
    this.#key = Buffer.from(hexKey, 'hex');
    if (this.#key.length !== 32) throw new Error('the encryption key must be 32 bytes');
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

/** A client secret handed out by the operator API: 32 random bytes, base64url. */
export const generateClientSecret = (): string => randomBytes(32).toString('base64url');

const SCRYPT_KEY_LENGTH = 32;

/** Salted scrypt hash: `scrypt$<salt>$<hash>` (base64url). */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(secret, salt, SCRYPT_KEY_LENGTH);
  return `scrypt$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Constant-time comparison of a presented secret with a stored hash. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, salt, expected] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const expectedBytes = Buffer.from(expected, 'base64url');
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), expectedBytes.length);
  return actual.length === expectedBytes.length && timingSafeEqual(actual, expectedBytes);
}
