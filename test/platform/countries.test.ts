// Country codes (D14): the assigned ISO 3166-1 alpha-2 codes, upper-case, from Node's CLDR region data.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countryCodes, countryName, isCountryCode } from '../../src/platform/countries.ts';

describe('ISO 3166-1 alpha-2 country codes (D14)', () => {
  it('knows the 249 assigned codes', () => {
    const codes = countryCodes();
    assert.equal(codes.length, 249);
    assert.deepEqual(codes.slice(0, 5), ['AD', 'AE', 'AF', 'AG', 'AI']);
    for (const code of ['DE', 'FR', 'ES', 'GB', 'IN', 'MX', 'NG', 'PH', 'KE', 'US', 'SS', 'AQ', 'BQ']) {
      assert.equal(isCountryCode(code), true, code);
    }
    assert.equal(countryName('KE'), 'Kenya');
  });

  it('refuses codes CLDR names that ISO 3166-1 does not assign, lower case and other lengths', () => {
    for (const code of [
      'UK',
      'EU',
      'UN',
      'XK',
      'ZZ',
      'SU',
      'YU',
      'AC',
      'IC',
      'QO',
      'de',
      'De',
      'DEU',
      'D',
      '',
      '276',
    ]) {
      assert.equal(isCountryCode(code), false, code);
    }
  });
});
