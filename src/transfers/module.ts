// Quotes and transfers (D20): pricing a corridor, and a transfer from confirmation to payout.
import type { Area } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { EXPIRE_QUOTE_KIND, expireQuoteJob } from './quotes.ts';
import { registerTransferRoutes, registerTransferSandboxRoutes } from './routes.ts';

export const transfersArea: Area = {
  name: 'transfers',
  scopes: [PAYMENT_SCOPES.transfersRead, PAYMENT_SCOPES.transfersWrite],
  routes: registerTransferRoutes,
  sandboxRoutes: registerTransferSandboxRoutes,
  jobs: {
    [EXPIRE_QUOTE_KIND]: (tx, payload) => expireQuoteJob(tx, String(payload.quote_id)),
  },
};
