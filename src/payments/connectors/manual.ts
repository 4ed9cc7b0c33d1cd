// The manual rail (D21, production default): a payout waits in `processing` until the operator has paid it
// by hand (GET /admin/v1/payouts/{id}/destination shows where) and calls POST
// /admin/v1/payouts/{id}/complete or /fail; inbound bank deposits are recorded with
// POST /admin/v1/deposits/{id}/receive.
import type { RailConnector } from './connector.ts';

export const manualConnector: RailConnector = {
  name: 'manual',
  async submit() {
    // Nothing to send: the payout shows in the operator's list of payouts waiting.
  },
};
