// Rotating SECRETS_ENCRYPTION_KEY (D13) while the service runs. Every process holds the new key and the
// previous ones (SECRETS_ENCRYPTION_KEYS_PREVIOUS): what a previous key sealed still opens, and what it
// hashed still verifies. A re-seal moves every sealed value to the new key, a page at a time; a client
// secret's hash moves on the client's next token request, since a hash cannot be re-keyed without the
// secret. The status shows when nothing names a previous key any more, so that it can be dropped.
import { withTransaction } from '../db/pool.ts';
import type { SealedColumn } from '../platform/area.ts';
import type { AppDeps } from '../platform/deps.ts';
import * as repo from './repository.ts';

/** The platform's own sealed columns; areas declare theirs (Area.sealedColumns). */
const PLATFORM_SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'signing_keys', key: ['kid'], column: 'private_key_sealed' },
  { table: 'idempotency_keys', key: ['organisation_id', 'key'], column: 'response_body' },
];

/** Values re-sealed per transaction. */
const PAGE_SIZE = 200;

type KeyRole = 'current' | 'previous' | 'not_configured';

export interface SecretsStatus {
  key_id: string;
  previous_key_ids: string[];
  sealed: Array<{
    table: string;
    column: string;
    /** Null for values sealed before values named their key; those are opened by trying each key. */
    key_id: string | null;
    key: KeyRole | 'unlabelled';
    count: number;
  }>;
  client_secrets: Array<{
    /** Null for the unkeyed scheme (scrypt), which any key verifies. */
    key_id: string | null;
    key: KeyRole | 'scrypt';
    count: number;
    /** Up to 100 of these clients, when their hash does not name the current key. */
    client_ids?: string[];
  }>;
}

export interface ResealResult {
  key_id: string;
  /** Values now sealed under the current key. */
  resealed: number;
  /** Values sealed under a key this process does not hold, left as they are. */
  unreadable: number;
  /** Every sealed column was read to its end: nothing readable is left under another key. */
  done: boolean;
}

function sealedColumns(deps: AppDeps): SealedColumn[] {
  return [...PLATFORM_SEALED_COLUMNS, ...deps.areas.flatMap((area) => area.sealedColumns ?? [])];
}

export async function secretsStatus(deps: AppDeps): Promise<SecretsStatus> {
  const box = deps.secretBox;
  const sealed: SecretsStatus['sealed'] = [];
  for (const column of sealedColumns(deps)) {
    for (const { key_id, count } of await repo.countSealedByKey(deps.pool, column)) {
      const unlabelled = key_id === 'v1';
      sealed.push({
        table: column.table,
        column: column.column,
        key_id: unlabelled ? null : key_id,
        key: unlabelled ? 'unlabelled' : box.keyRole(key_id),
        count,
      });
    }
  }
  const clientSecrets = (await repo.countClientHashesByKey(deps.pool)).map(
    ({ key_id, count, client_ids }) => {
      const key: KeyRole | 'scrypt' = key_id === 'scrypt' ? 'scrypt' : box.keyRole(key_id);
      return {
        key_id: key === 'scrypt' ? null : key_id,
        key,
        count,
        ...(key === 'current' ? {} : { client_ids }),
      };
    },
  );
  return {
    key_id: box.keyId,
    previous_key_ids: [...box.previousKeyIds],
    sealed,
    client_secrets: clientSecrets,
  };
}

/**
 * Re-seals under the current key up to `limit` values sealed under another one, column by column. Each
 * page commits on its own, and a value changed since it was read (a signing secret rotated meanwhile) is
 * left to its writer, who sealed it under the current key.
 */
export async function resealSecrets(deps: AppDeps, limit: number): Promise<ResealResult> {
  const box = deps.secretBox;
  let budget = limit;
  let resealed = 0;
  let unreadable = 0;
  let done = true;
  for (const column of sealedColumns(deps)) {
    let after: string[] | null = null;
    for (;;) {
      if (budget === 0) {
        done = false;
        break;
      }
      const size = Math.min(budget, PAGE_SIZE);
      const page = await repo.sealedValuesToReseal(deps.pool, column, box.sealedPrefix, after, size);
      budget -= page.length;
      const replacements: Array<{ row: repo.SealedValue; resealed: string }> = [];
      for (const row of page) {
        try {
          replacements.push({ row, resealed: box.encrypt(box.decrypt(row.sealed)) });
        } catch {
          unreadable += 1;
        }
      }
      resealed += await withTransaction(
        deps.pool,
        async (tx) => {
          let replaced = 0;
          for (const { row, resealed: value } of replacements) {
            if (await repo.replaceSealedValue(tx, column, row, value)) replaced += 1;
          }
          return replaced;
        },
        { retries: 2 },
      );
      if (page.length < size) break;
      after = page.at(-1)!.key;
    }
  }
  return { key_id: box.keyId, resealed, unreadable, done };
}
