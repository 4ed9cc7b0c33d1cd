// The beneficiaries area (D19): who payouts go to. Field sets per destination (requirements.ts) drive the
// requirements endpoint and validation; names are screened through the sanctions area; payments find a
// payout's destination through payoutDestination, and a screening review moves a beneficiary in review.
import type { Area, EventType } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { registerBeneficiaryRoutes } from './routes.ts';
import { blockPayee, onScreeningReviewed, payoutDestination } from './service.ts';

export const BENEFICIARY_EVENT_TYPES: readonly EventType[] = [
  { code: 'beneficiary.created', description: 'A beneficiary was created.' },
  { code: 'beneficiary.updated', description: 'A beneficiary was updated.' },
  { code: 'beneficiary.in_review', description: 'A beneficiary is held for compliance review.' },
  { code: 'beneficiary.activated', description: 'A beneficiary became active and can receive payouts.' },
  { code: 'beneficiary.blocked', description: 'A beneficiary was blocked.' },
  { code: 'beneficiary.deleted', description: 'A beneficiary was deleted.' },
];

export const beneficiariesArea: Area = {
  name: 'beneficiaries',
  scopes: [PAYMENT_SCOPES.beneficiariesRead, PAYMENT_SCOPES.beneficiariesWrite],
  eventTypes: BENEFICIARY_EVENT_TYPES,
  routes: registerBeneficiaryRoutes,
  payoutDestination,
  onScreeningReviewed,
  blockPayee,
  sealedColumns: [{ table: 'beneficiaries', key: ['id'], column: 'account_sealed' }],
};
