// Crypto deposit addresses (D22): the networks on offer, addresses derived from the operator's account
// public keys (src/config.ts reads and checks the keys), and inbound funds to them, recorded as deposits of
// the payments area (inbound.ts). A crypto deposit or transfer gets an address of its own through
// `allocateDepositAddress`.
import { railAccount } from '../payments/payouts.ts';
import type { Area, CliCommand } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { SANDBOX_CONFIRM_KIND, sandboxConfirm } from './inbound.ts';
import { registerInboundAdminRoutes, registerInboundSandboxRoutes } from './inbound-routes.ts';
import { NETWORK_CODES } from './networks.ts';
import { registerCryptoAdminRoutes, registerCryptoRoutes } from './routes.ts';
import { depositNetwork, openDepositAddress } from './service.ts';

const accountKeysCommand: CliCommand = {
  name: 'crypto-keys',
  usage:
    'crypto-keys [--count <1..100>]   the account keys and their first addresses, to check in the wallet',
  options: { count: { type: 'string' } },
  async requests(_positionals, values) {
    const count = values.count;
    if (count !== undefined && (typeof count !== 'string' || !/^\d{1,3}$/.test(count)))
      throw new Error('--count must be a whole number from 1 to 100');
    return [{ method: 'GET', path: `/admin/v1/crypto/account-keys${count ? `?count=${count}` : ''}` }];
  },
};

export const cryptoArea: Area = {
  name: 'crypto',
  scopes: [PAYMENT_SCOPES.cryptoRead, PAYMENT_SCOPES.cryptoWrite],
  // Chain deposits come in through each network's rail (a payments deposit of method crypto).
  platformAccounts: () => NETWORK_CODES.map((network) => railAccount(network, 'crypto')),
  eventTypes: [
    { code: 'deposit_address.created', description: 'A crypto deposit address was created.' },
    { code: 'deposit_address.disabled', description: 'A crypto deposit address was disabled.' },
  ],
  routes: registerCryptoRoutes,
  adminRoutes: (admin, deps) => {
    registerCryptoAdminRoutes(admin, deps);
    registerInboundAdminRoutes(admin, deps);
  },
  sandboxRoutes: registerInboundSandboxRoutes,
  cliCommands: [accountKeysCommand],
  jobs: { [SANDBOX_CONFIRM_KIND]: (tx, payload, deps) => sandboxConfirm(tx, deps, payload) },
  async allocateDepositAddress(tx, deps, organisationId, network, asset) {
    const row = await openDepositAddress(tx, deps, organisationId, {
      network: depositNetwork(deps, network, asset),
      asset,
      label: 'deposit',
      externalId: null,
    });
    return { address: row.address, network: row.network };
  },
};
