// Valid beneficiary create bodies, one per field set of D19 (real published identifiers whose banks the
// sandbox directory holds), as plain data: the API tests (fixtures.ts) and the whole-process tour use them.

const address = (country: string, city: string) => ({
  line1: '1 Main Street',
  city,
  postal_code: '10117',
  country,
});

const person = (name: string, country: string, city: string) => ({
  entity_type: 'individual',
  name,
  address: address(country, city),
});

/** One valid body per field set, the account as an integrator might type it (spaces, hyphens). */
export const VALID = {
  DE: {
    destination_country: 'DE',
    destination_currency: 'EUR',
    payout_method: 'bank_account',
    ...person('Anna Schmidt', 'DE', 'Berlin'),
    account: { iban: 'de89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' },
  },
  FR: {
    destination_country: 'FR',
    destination_currency: 'EUR',
    payout_method: 'bank_account',
    ...person('Claire Martin', 'FR', 'Paris'),
    account: { iban: 'FR1420041010050500013M02606' },
  },
  ES: {
    destination_country: 'ES',
    destination_currency: 'EUR',
    payout_method: 'bank_account',
    ...person('Lucia Garcia', 'ES', 'Barcelona'),
    account: { iban: 'ES9121000418450200051332' },
  },
  GB: {
    destination_country: 'GB',
    destination_currency: 'GBP',
    payout_method: 'bank_account',
    ...person('Oliver Smith', 'GB', 'London'),
    account: { account_number: '31926819', sort_code: '60-16-13' },
  },
  US: {
    destination_country: 'US',
    destination_currency: 'USD',
    payout_method: 'bank_account',
    entity_type: 'business',
    name: 'Acme Widgets LLC',
    address: address('US', 'New York'),
    account: { account_number: '000123456789', routing_number: '021000021', account_type: 'checking' },
  },
  IN: {
    destination_country: 'IN',
    destination_currency: 'INR',
    payout_method: 'bank_account',
    ...person('Priya Sharma', 'IN', 'New Delhi'),
    account: { account_number: '123456789012', ifsc: 'sbin0001707' },
  },
  MX: {
    destination_country: 'MX',
    destination_currency: 'MXN',
    payout_method: 'bank_account',
    ...person('Jose Hernandez', 'MX', 'Mexico City'),
    account: { clabe: '002180000118359710' },
  },
  NG: {
    destination_country: 'NG',
    destination_currency: 'NGN',
    payout_method: 'bank_account',
    ...person('Chinedu Okafor', 'NG', 'Lagos'),
    account: { bank_code: '011', account_number: '0000014579' },
  },
  PH: {
    destination_country: 'PH',
    destination_currency: 'PHP',
    payout_method: 'bank_account',
    ...person('Maria Santos', 'PH', 'Manila'),
    account: { account_number: '1234567890', bic: 'BNORPHMM' },
  },
  KE: {
    destination_country: 'KE',
    destination_currency: 'KES',
    payout_method: 'mobile_wallet',
    ...person('Wanjiru Kamau', 'KE', 'Nairobi'),
    account: { mobile_number: '+254 712 345 678', provider: 'mpesa' },
  },
} as const;

export type FieldSetKey = keyof typeof VALID;

/** A copy of a valid body with changes: `account` and `address` keys merged, `undefined` deletes a key. */
export function bodyOf(
  key: FieldSetKey,
  changes: {
    account?: Record<string, string | undefined>;
    address?: Record<string, string | undefined>;
  } & Record<string, unknown> = {},
): Record<string, unknown> {
  const base = structuredClone(VALID[key]) as Record<string, unknown>;
  const { account, address: addressChanges, ...top } = changes;
  const merge = (target: Record<string, unknown>, patch: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(patch)) {
      if (value === undefined) delete target[name];
      else target[name] = value;
    }
  };
  merge(base, top);
  if (account) merge(base.account as Record<string, unknown>, account);
  if (addressChanges) merge(base.address as Record<string, unknown>, addressChanges);
  return base;
}
