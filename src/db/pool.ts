// The PostgreSQL pool (D2). The same driver serves the embedded and the external server.
import pg from 'pg';

// bigint identity ids and count(*) come back as JavaScript numbers; ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

export function createPool(connectionString: string, max: number, applicationName: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: applicationName,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (a database restart) must not crash the process;
  // the pool discards it and the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** Runs `work` in one transaction: commit on success, rollback on any error. */
export async function withTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** PostgreSQL error codes the services react to. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_RAISE_EXCEPTION = 'P0001';

export function pgErrorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

export function pgConstraint(error: unknown): string | undefined {
  return typeof error === 'object' &&
    error !== null &&
    'constraint' in error &&
    typeof error.constraint === 'string'
    ? error.constraint
    : undefined;
}
