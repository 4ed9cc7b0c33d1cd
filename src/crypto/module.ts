// Crypto deposit addresses (D22): the networks on offer, and addresses derived from the operator's account
// public keys (src/config.ts reads and checks the keys). Inbound deposits to these addresses belong to the
// payments area, which finds an address's organisation with findAddressByNetworkAndAddress (service.ts).
import type { Area, CliCommand } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { registerCryptoAdminRoutes, registerCryptoRoutes } from './routes.ts';

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
  eventTypes: [
    { code: 'deposit_address.created', description: 'A crypto deposit address was created.' },
    { code: 'deposit_address.disabled', description: 'A crypto deposit address was disabled.' },
  ],
  routes: registerCryptoRoutes,
  adminRoutes: registerCryptoAdminRoutes,
  cliCommands: [accountKeysCommand],
};
