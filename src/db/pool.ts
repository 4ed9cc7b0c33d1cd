// The PostgreSQL pool (D2). The same driver serves the embedded and the external server.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

// bigint identity ids and count(*) come back as JavaScript numbers; ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

export interface DatabaseTimeouts {
  /**
   * Bound on opening one connection: TCP, startup and authentication. Not on waiting for a connection of a
   * busy pool, which queues as long as it must. 0: none.
   */
  connectTimeoutMs?: number;
  /**
   * Bound on one statement's answer, counted from when it is sent. Past it the statement fails with
   * StatementTimeoutError and its connection is closed, never reused. 0: none.
   */
  statementTimeoutMs?: number;
}

/** A statement that got no answer within the pool's bound; its connection is closed. */
export class StatementTimeoutError extends Error {
  readonly code = 'STATEMENT_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`the database did not answer a statement within ${timeoutMs} ms; the connection was closed`);
    this.name = 'StatementTimeoutError';
  }
}

/**
 * Work whose statements may rightly run longer than the statement bound: migrations (one waits for another
 * process's migrations; an index build on a large table) and the loading of whole sanctions lists.
 */
export const unboundedStatements = new AsyncLocalStorage<true>();

type Settling = { once?(event: string, listener: () => void): unknown };

/**
 * The pool's clients, with the bounds. A stalled server (it accepts connections and answers nothing; a
 * network that drops the packets of a live connection) otherwise leaves a connect or a statement waiting
 * for ever: every request then waits with it, the connections it holds never come back, and a pool full of
 * them stays stuck after the database is back. The statement bound is enforced here, by closing the
 * connection, rather than with PostgreSQL's statement_timeout, which a server that does not answer never
 * applies; and rather than with pg's query_timeout, which leaves the connection busy with the unanswered
 * statement and hands it back to the pool.
 */
function boundedClient(timeouts: DatabaseTimeouts): typeof pg.Client {
  const connectTimeoutMs = timeouts.connectTimeoutMs ?? 0;
  const statementTimeoutMs = timeouts.statementTimeoutMs ?? 0;
  return class BoundedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({
        ...(typeof config === 'string' ? { connectionString: config } : config),
        connectionTimeoutMillis: connectTimeoutMs,
      });
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's query has many overloads; each is passed on as it is.
    override query(...args: any[]): any {
      // biome-ignore lint/suspicious/noExplicitAny: as above.
      const run = (super.query as (...a: any[]) => any).bind(this);
      if (statementTimeoutMs <= 0 || unboundedStatements.getStore()) return run(...args);
      let timer: NodeJS.Timeout | undefined;
      const settle = () => clearTimeout(timer);
      const last = args.length - 1;
      const submittable = typeof (args[0] as { submit?: unknown } | undefined)?.submit === 'function';
      if (!submittable && typeof args[last] === 'function') {
        const callback = args[last] as (...results: unknown[]) => void;
        args[last] = (...results: unknown[]) => {
          settle();
          callback(...results);
        };
      }
      const result = run(...args);
      if (submittable) {
        const events = result as Settling;
        if (typeof events.once !== 'function') return result;
        events.once('end', settle);
        events.once('error', settle);
      } else if (typeof (result as Promise<unknown> | undefined)?.then === 'function') {
        (result as Promise<unknown>).then(settle, settle);
      }
      timer = setTimeout(() => {
        // The running statement and any queued behind it reject with this error, the client emits 'error',
        // and the pool (or withTransaction) discards it.
        (
          this as unknown as { connection: { stream: { destroy(error: Error): void } } }
        ).connection.stream.destroy(new StatementTimeoutError(statementTimeoutMs));
      }, statementTimeoutMs);
      timer.unref();
      return result;
    }
  };
}

export function createPool(
  connectionString: string,
  max: number,
  applicationName: string,
  timeouts: DatabaseTimeouts = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: applicationName,
    idleTimeoutMillis: 30_000,
    // Not connectionTimeoutMillis: pg-pool would also apply it to a request waiting for a busy pool's
    // connection, and fail the queue that forms under load.
    Client: boundedClient(timeouts),
  });
  // An idle client losing its connection (a database restart) must not crash the process;
  // the pool discards it and the next query reconnects.
  pool.on('error', () => {});
  // A client between two owners (handed from one checkout to a waiting one, or checked out with no query
  // running) has no error listener of pg-pool's; a server-side disconnect arriving then would be an
  // unhandled 'error' event and kill the process. Every client keeps a listener for its whole life: a
  // running query still rejects, withTransaction still discards a broken client, and pg-pool still
  // removes a broken idle one.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/**
 * Work that must commit with whatever transaction the current request commits: the idempotency key's
 * "this operation took effect" mark (D14) goes into the operation's own transaction, so a crash can
 * never leave the operation done and the key free to run it again. Set per request with `run`.
 */
export const beforeCommit = new AsyncLocalStorage<(tx: pg.PoolClient) => Promise<void>>();

/**
 * Runs `work` in one transaction: commit on success, rollback on any error.
 * While a client is checked out pg-pool does not listen for its errors, so a connection cut by the
 * server (a restart: 57P01) would be an unhandled 'error' event and kill the process. We listen for
 * the whole checkout; the failed statement rejects as usual, and the broken client is destroyed on
 * release instead of going back to the pool.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (tx: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await runTransaction(pool, work);
    } catch (error) {
      if (attempt >= (options.retries ?? 0) || !isRetryable(error)) throw error;
      // A little apart, so that two victims of one deadlock do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * (attempt + 1)));
    }
  }
}

export interface TransactionOptions {
  /**
   * How many times to run `work` again, from the start in a new transaction, when PostgreSQL aborted the
   * transaction as a deadlock's victim or a serialization failure: for work that only reads and writes the
   * database, so that running it again is running it once. Default 0.
   */
  retries?: number;
}

/**
 * For a request that settles money an organisation's transaction groups may hold (a payout's outcome, a
 * deposit's, a review that moves a transfer): it locks the resource, then the balance, the other way from
 * a group, so PostgreSQL may abort it as a deadlock's victim; it then runs again.
 */
export const LOCK_ORDER_RETRIES: TransactionOptions = { retries: 2 };

/**
 * deadlock_detected and serialization_failure: the transaction may run again ("Serialization Failure
 * Handling" in PostgreSQL's manual).
 */
export const isRetryable = (error: unknown): boolean => ['40P01', '40001'].includes(pgErrorCode(error) ?? '');

async function runTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await beforeCommit.getStore()?.(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!broken) await client.query('ROLLBACK').catch((rollbackError: Error) => onError(rollbackError));
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * Runs a write of one statement on its own, unless a commit mark is due (a request with an
 * Idempotency-Key, see beforeCommit): then in a transaction, so that the mark commits with it.
 */
export function withOneStatement<T>(pool: pg.Pool, work: (db: Queryable) => Promise<T>): Promise<T> {
  return beforeCommit.getStore() === undefined ? work(pool) : withTransaction(pool, work);
}

/** PostgreSQL error codes the services react to. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_RAISE_EXCEPTION = 'P0001';

export function pgErrorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** Network errors of a connection to the database that a later attempt may not meet. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The database could not be reached, stopped answering, or is shutting down or full: nothing in the
 * request is at fault and a later attempt may succeed. PostgreSQL's class 08 (connection exception),
 * 57P01-57P03 (shut down, crashed, starting) and 53300 (too many connections); node-postgres's own
 * connection errors; and the pool's statement bound.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (error instanceof StatementTimeoutError) return true;
  const code = pgErrorCode(error);
  if (code !== undefined) {
    return (
      code.startsWith('08') ||
      ['57P01', '57P02', '57P03', '53300'].includes(code) ||
      UNREACHABLE_CODES.has(code)
    );
  }
  const message = error instanceof Error ? error.message : '';
  return (
    message.startsWith('Connection terminated') ||
    message === 'Client has encountered a connection error and is not queryable' ||
    message === 'timeout exceeded when trying to connect'
  );
}

export function pgConstraint(error: unknown): string | undefined {
  return typeof error === 'object' &&
    error !== null &&
    'constraint' in error &&
    typeof error.constraint === 'string'
    ? error.constraint
    : undefined;
}
