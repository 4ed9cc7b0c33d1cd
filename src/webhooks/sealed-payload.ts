// Event payloads at rest (D13, D19). An envelope carries resources as their GET returns them, beneficiaries'
// account identifiers included, so webhook_events.payload holds it sealed with SECRETS_ENCRYPTION_KEY
// (publishEvent seals it). It is opened where it is sent (the delivery engine signs and sends the opened
// text byte for byte, D10) and where it is read (the events API).
import type { SecretBox } from '../platform/secrets.ts';

/**
 * Whether a stored payload is in clear: the envelope's JSON text, which starts with `{` (a sealed value
 * starts with `v1.`). Such a payload is read as it is, and the re-seal sweep seals it.
 */
export const isPlainPayload = (stored: string): boolean => stored.startsWith('{');

/**
 * The envelope as published, from its stored form (sealed, or in clear). Throws when no configured key
 * opens a sealed payload, or the stored value is damaged; the error names nothing of the payload.
 */
export function openPayload(secretBox: Pick<SecretBox, 'decrypt'>, stored: string): string {
  return isPlainPayload(stored) ? stored : secretBox.decrypt(stored);
}
