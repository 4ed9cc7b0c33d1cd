// A dedicated LISTEN connection on one channel (architecture guide): a transaction that queues work
// NOTIFYs at commit, so workers start on it at once instead of polling (webhook deliveries, D10; timers,
// D21). The connection is re-opened after any error with a capped backoff; every (re)connect also wakes
// the listener, since notifications sent while it was down are lost.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Pool } from './pool.ts';

/** How long closing waits for the database to acknowledge the end of the session. */
const CLOSE_GRACE_MS = 1_000;

export interface Listener {
  close(): Promise<void>;
}

export function listenOnChannel(
  pool: Pool,
  log: Logger,
  onWake: () => void,
  channel: string,
  options: { applicationName?: string } = {},
): Listener {
  let closed = false;
  let current: pg.Client | undefined;
  let stopWaiting: (() => void) | undefined;
  let stopSleeping: (() => void) | undefined;

  const run = async () => {
    let backoffMs = 250;
    while (!closed) {
      // The pool's own client class, with its bound on opening a connection: a database that does not
      // answer fails the attempt, which is retried, instead of holding it for ever.
      const client = new (pool as Pool & { Client: typeof pg.Client }).Client({
        ...pool.options,
        application_name:
          options.applicationName ?? `${pool.options.application_name ?? 'payment-service'}:listen`,
        keepAlive: true,
      });
      current = client;
      // A lost connection must not crash the process: it ends this session and the loop reconnects.
      const ended = new Promise<void>((resolve) => {
        stopWaiting = resolve;
        client.on('error', (error) => {
          if (!closed) log.warn({ err: error }, `LISTEN ${channel} connection lost; reconnecting`);
          resolve();
        });
        client.on('end', () => resolve());
      });
      try {
        await client.connect();
        client.on('notification', () => onWake());
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
        backoffMs = 250;
        onWake();
        await ended;
      } catch (error) {
        if (!closed) log.warn({ err: error }, `LISTEN ${channel} connection failed; retrying`);
      } finally {
        current = undefined;
        client.removeAllListeners('notification');
        await client.end().catch(() => {});
      }
      if (closed) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffMs);
        stopSleeping = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      backoffMs = Math.min(backoffMs * 2, 10_000);
    }
  };
  const running = run();

  return {
    async close() {
      closed = true;
      stopWaiting?.();
      stopSleeping?.();
      const client = current;
      if (client) {
        // The goodbye is acknowledged at once by a database that answers; one that does not answer never
        // acknowledges it, and the connection is then dropped rather than waited on for ever.
        const ended = client.end().catch(() => {});
        const grace = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
        if ((await Promise.race([ended.then(() => true), grace.then(() => false)])) === false) {
          (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        }
      }
      await running;
    },
  };
}
