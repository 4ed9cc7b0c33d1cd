// A dedicated LISTEN connection on the delivery channel (D10, architecture guide): publishing transactions
// NOTIFY at commit, so workers start on new deliveries at once instead of polling. The connection is
// re-opened after any error with a capped backoff; every (re)connect also wakes the worker, since
// notifications sent while it was down are lost.
import pg from 'pg';
import type { Logger } from 'pino';
import type { Pool } from '../../db/pool.ts';
import { DELIVERY_CHANNEL } from '../publish-repository.ts';

export interface Listener {
  close(): Promise<void>;
}

export function listenForDeliveries(
  pool: Pool,
  log: Logger,
  onWake: () => void,
  options: { channel?: string; applicationName?: string } = {},
): Listener {
  const channel = options.channel ?? DELIVERY_CHANNEL;
  let closed = false;
  let current: pg.Client | undefined;
  let stopWaiting: (() => void) | undefined;
  let stopSleeping: (() => void) | undefined;

  const run = async () => {
    let backoffMs = 250;
    while (!closed) {
      const client = new pg.Client({
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
          if (!closed) log.warn({ err: error }, 'delivery LISTEN connection lost; reconnecting');
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
        if (!closed) log.warn({ err: error }, 'delivery LISTEN connection failed; retrying');
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
      await current?.end().catch(() => {});
      await running;
    },
  };
}
