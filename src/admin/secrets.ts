// Rotating SECRETS_ENCRYPTION_KEY (D13) while the service runs. Every process holds the new key and the
// previous ones (SECRETS_ENCRYPTION_KEYS_PREVIOUS): what a previous key sealed still opens, and what it
// hashed still verifies. A re-seal sweeps every sealed column, a page at a time, and seals again under the
// new key each value another key sealed, and seals a value a column holds in clear (SealedColumn.inClear); a
// client secret's hash moves on the client's next token request, since a hash cannot be re-keyed without
// the secret. The status names the clients still on another key.
import { withTransaction } from '../db/pool.ts';
import type { SealedColumn } from '../platform/area.ts';
import type { AppDeps } from '../platform/deps.ts';
import { validationFailed } from '../platform/errors.ts';
import type { SecretBox } from '../platform/secrets.ts';
import * as repo from './repository.ts';

/** The platform's own sealed columns; areas declare theirs (Area.sealedColumns). */
const PLATFORM_SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'signing_keys', key: ['kid'], column: 'private_key_sealed' },
  { table: 'idempotency_keys', key: ['organisation_id', 'key'], column: 'response_body' },
];

/** Values read and re-sealed per transaction. */
const PAGE_SIZE = 200;
/** Unreadable rows named in one answer. */
const MAX_NAMED_ROWS = 100;

type KeyRole = ReturnType<SecretBox['keyRole']>;

export interface SecretsStatus {
  key_id: string;
  previous_key_ids: string[];
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
  /** Sealed values read by this call. */
  visited: number;
  /**
   * Of those, the values sealed under a previous key, or stored in clear where a column allows it (event
   * payloads), and now sealed under the current key.
   */
  resealed: number;
  /** Of those, the values no configured key opens (a key that is not configured, or damaged), left as they are. */
  unreadable: number;
  /** Up to 100 of the unreadable values: where they are. */
  unreadable_rows: Array<{ table: string; column: string; key: string[] }>;
  /** Where the next call goes on (`after`); null once the sweep has read every sealed column to its end. */
  next: string | null;
}

function sealedColumns(deps: AppDeps): SealedColumn[] {
  return [...PLATFORM_SEALED_COLUMNS, ...deps.areas.flatMap((area) => area.sealedColumns ?? [])];
}

export async function secretsStatus(deps: AppDeps): Promise<SecretsStatus> {
  const box = deps.secretBox;
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
  return { key_id: box.keyId, previous_key_ids: [...box.previousKeyIds], client_secrets: clientSecrets };
}

/** A place in the sweep: a sealed column (`table.column`) and the last row read there, if any. */
interface Position {
  index: number;
  after: string[] | null;
}

const columnName = (column: SealedColumn): string => `${column.table}.${column.column}`;

function encodePosition(columns: readonly SealedColumn[], position: Position): string {
  return Buffer.from(JSON.stringify([columnName(columns[position.index]!), position.after])).toString(
    'base64url',
  );
}

/** The position a cursor names; by column name, so that a cursor outlives a change in the columns' order. */
function decodePosition(columns: readonly SealedColumn[], cursor: string): Position {
  const invalid = () => validationFailed('after', 'after must be a `next` this endpoint returned');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalid();
  const [name, after] = decoded as [unknown, unknown];
  const index = columns.findIndex((column) => columnName(column) === name);
  if (index < 0) throw invalid();
  if (after === null) return { index, after: null };
  const keyLength = columns[index]!.key.length;
  if (
    !Array.isArray(after) ||
    after.length !== keyLength ||
    !after.every((part) => typeof part === 'string')
  ) {
    throw invalid();
  }
  return { index, after: after as string[] };
}

/**
 * Reads up to `limit` sealed values from where `after` left off (the start when undefined) and seals again
 * under the current key each one another key sealed, or held in clear where the column allows it. Each page
 * commits on its own, and a value changed since it was read (a signing secret rotated meanwhile) is left to
 * its writer, who sealed it under the current key.
 */
export async function resealSecrets(
  deps: AppDeps,
  limit: number,
  after: string | undefined,
): Promise<ResealResult> {
  const box = deps.secretBox;
  const columns = sealedColumns(deps);
  let position: Position = after === undefined ? { index: 0, after: null } : decodePosition(columns, after);
  const result: ResealResult = {
    key_id: box.keyId,
    visited: 0,
    resealed: 0,
    unreadable: 0,
    unreadable_rows: [],
    next: null,
  };
  while (position.index < columns.length && result.visited < limit) {
    const column = columns[position.index]!;
    const size = Math.min(limit - result.visited, PAGE_SIZE);
    const page = await repo.sealedValuesAfter(deps.pool, column, position.after, size);
    result.visited += page.length;
    const replacements: Array<{ row: repo.SealedValue; resealed: string }> = [];
    for (const row of page) {
      try {
        const resealed = column.inClear?.(row.sealed) ? box.encrypt(row.sealed) : box.reseal(row.sealed);
        if (resealed !== null) replacements.push({ row, resealed });
      } catch {
        result.unreadable += 1;
        if (result.unreadable_rows.length < MAX_NAMED_ROWS) {
          result.unreadable_rows.push({ table: column.table, column: column.column, key: row.key });
        }
      }
    }
    if (replacements.length > 0) {
      result.resealed += await withTransaction(
        deps.pool,
        async (tx) => {
          let replaced = 0;
          for (const { row, resealed } of replacements) {
            if (await repo.replaceSealedValue(tx, column, row, resealed)) replaced += 1;
          }
          return replaced;
        },
        { retries: 2 },
      );
    }
    position =
      page.length < size
        ? { index: position.index + 1, after: null }
        : { index: position.index, after: page.at(-1)!.key };
  }
  result.next = position.index < columns.length ? encodePosition(columns, position) : null;
  return result;
}
