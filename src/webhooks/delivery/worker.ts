// The delivery worker (D10). Built in the delivery engine issue.
import type { Logger } from 'pino';
import type { AppDeps } from '../../platform/deps.ts';

export interface DeliveryWorker {
  /** Stops claiming, finishes or releases in-flight work. */
  stop(): Promise<void>;
}

export function startDeliveryWorker(_deps: AppDeps, log: Logger): DeliveryWorker {
  log.info('delivery worker: nothing to deliver yet (engine not built)');
  return { stop: async () => {} };
}
