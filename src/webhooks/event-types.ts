// Event types of the payment areas (D8), published in the catalogue ahead of the areas that emit them:
// integrators can subscribe before the first such event exists. Each area's codes move to its own
// module (its `eventTypes`) when the area lands; the catalogue is gathered from every area (src/areas.ts).
// `webhook.ping` (the D9 health probe) is sent by the platform but is not listed and cannot be
// subscribed to.
import type { EventType } from '../platform/area.ts';

export const PAYMENT_EVENT_TYPES: readonly EventType[] = [
  { code: 'beneficiary.created', description: 'A beneficiary was created.' },
  { code: 'beneficiary.updated', description: 'A beneficiary was updated.' },
  { code: 'beneficiary.in_review', description: 'A beneficiary is held for compliance review.' },
  { code: 'beneficiary.activated', description: 'A beneficiary became active and can receive payouts.' },
  { code: 'beneficiary.blocked', description: 'A beneficiary was blocked.' },
  { code: 'beneficiary.deleted', description: 'A beneficiary was deleted.' },
];
