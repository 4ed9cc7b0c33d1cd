// Countries (D14): ISO 3166-1 alpha-2 codes, upper-case. The list comes from the CLDR region data that
// Node's ICU ships (Intl.DisplayNames), not a hand-typed table. CLDR also names regions that ISO 3166-1
// does not assign as countries; those are removed below, which leaves the 249 officially assigned codes.
import { Type } from '@sinclair/typebox';

/**
 * CLDR region codes that are not officially assigned ISO 3166-1 alpha-2 codes: exceptionally reserved
 * (AC, CP, CQ, DG, EA, EU, EZ, FX, IC, TA, UK, UN), transitionally reserved former countries (AN, BU, CS,
 * DD, DY, HV, NH, RH, SU, TP, VD, YD, YU, ZR) and user-assigned codes (QO, XA, XB, XK, ZZ).
 */
const NOT_ASSIGNED = new Set([
  'AC',
  'AN',
  'BU',
  'CP',
  'CQ',
  'CS',
  'DD',
  'DG',
  'DY',
  'EA',
  'EU',
  'EZ',
  'FX',
  'HV',
  'IC',
  'NH',
  'QO',
  'RH',
  'SU',
  'TA',
  'TP',
  'UK',
  'UN',
  'VD',
  'XA',
  'XB',
  'XK',
  'YD',
  'YU',
  'ZR',
  'ZZ',
]);

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

function assignedCodes(): ReadonlyMap<string, string> {
  const codes = new Map<string, string>();
  const A = 'A'.charCodeAt(0);
  for (let first = 0; first < 26; first++) {
    for (let second = 0; second < 26; second++) {
      const code = String.fromCharCode(A + first, A + second);
      if (NOT_ASSIGNED.has(code)) continue;
      const name = regionNames.of(code);
      if (name !== undefined) codes.set(code, name);
    }
  }
  return codes;
}

const COUNTRIES = assignedCodes();

/** True for an assigned ISO 3166-1 alpha-2 code, upper-case (`DE`; not `de`, `UK` or `EU`). */
export const isCountryCode = (value: string): boolean => COUNTRIES.has(value);

/** The English short name of a country code, or undefined. */
export const countryName = (code: string): string | undefined => COUNTRIES.get(code);

/** Every assigned code, sorted. */
export const countryCodes = (): string[] => [...COUNTRIES.keys()];

/** A country in a request or a filter: the code's form, upper-case (whether it is assigned is the service's check). */
export const CountryCode = (description = 'ISO 3166-1 alpha-2, upper-case.') =>
  Type.String({ pattern: '^[A-Z]{2}$', description, examples: ['DE'] });
