// The scopes of the payment areas (D14). Several areas require the same scope (`reference:read` covers
// currencies, rates, corridors and banks), so the names live here; each area lists the ones it uses.
export const PAYMENT_SCOPES = {
  referenceRead: 'reference:read',
  beneficiariesRead: 'beneficiaries:read',
  beneficiariesWrite: 'beneficiaries:write',
  sanctionsRead: 'sanctions:read',
  sanctionsWrite: 'sanctions:write',
  transfersRead: 'transfers:read',
  transfersWrite: 'transfers:write',
  paymentsRead: 'payments:read',
  paymentsWrite: 'payments:write',
  cryptoRead: 'crypto:read',
  cryptoWrite: 'crypto:write',
} as const;
