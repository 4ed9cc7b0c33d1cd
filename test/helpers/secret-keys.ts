// What the operator guide (authentication.md) says is derived from SECRETS_ENCRYPTION_KEY, computed here
// rather than by the code under test.
import { createHmac, hkdfSync } from 'node:crypto';

/** The client-secret HMAC key: HKDF-SHA-256 of the key, empty salt, its own info string. */
export const clientSecretSubKey = (hexKey: string): Buffer =>
  Buffer.from(
    hkdfSync(
      'sha256',
      Buffer.from(hexKey, 'hex'),
      Buffer.alloc(0),
      'payment-service client-secret HMAC-SHA-256 v1',
      32,
    ),
  );

/** The key id that sealed values and client-secret hashes name. */
export const keyIdOf = (hexKey: string): string =>
  createHmac('sha256', clientSecretSubKey(hexKey)).update('key id').digest('base64url').slice(0, 8);
