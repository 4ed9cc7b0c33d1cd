// Event payloads as tests read them from storage. webhook_events.payload is sealed at rest (D13, D19), so a
// test that reads it with SQL opens it here, with the service's SecretBox. Only the sealed form is taken: a
// payload stored in clear fails the test.
import assert from 'node:assert/strict';
import type { SecretBox } from '../../src/platform/secrets.ts';

/** The envelope text a stored payload seals (the exact bytes every attempt sends, D10). */
export function openStoredPayload(deps: { secretBox: Pick<SecretBox, 'decrypt'> }, stored: string): string {
  assert.match(stored, /^v1\./, 'webhook_events.payload is sealed');
  return deps.secretBox.decrypt(stored);
}

/** The envelope a stored payload seals, parsed. */
export function storedEnvelope<T = { id: string; type: string; created_at: string; data: unknown }>(
  deps: { secretBox: Pick<SecretBox, 'decrypt'> },
  stored: string,
): T {
  return JSON.parse(openStoredPayload(deps, stored)) as T;
}
