// The code validators (D17) on published examples, and every single-character corruption of them rejected
// with the right reason: a wrong digit where the scheme has a check digit (checksum), a character of the
// wrong kind (format), one character missing or extra (length), a country that does not exist or is not the
// expected one (country).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type CodeCheck,
  clabeControlDigit,
  nubanCheckDigit,
  validateAba,
  validateBic,
  validateClabe,
  validateCode,
  validateIban,
  validateIfsc,
  validateNuban,
  validateSortCode,
} from '../../src/banks/validation.ts';

const DIGITS = '0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

const validAs = (code: string, country: string): CodeCheck => ({ valid: true, code, reason: null, country });
const invalid = (code: string, reason: CodeCheck['reason'], country: string | null): CodeCheck => ({
  valid: false,
  code,
  reason,
  country,
});

const replaceAt = (code: string, index: number, character: string) =>
  `${code.slice(0, index)}${character}${code.slice(index + 1)}`;

/** Every code one character away from `code` by substitution with a character of `alphabet`. */
function* substitutions(code: string, alphabet: string): Generator<{ index: number; corrupted: string }> {
  for (let index = 0; index < code.length; index++) {
    for (const character of alphabet) {
      if (character !== code[index]) yield { index, corrupted: replaceAt(code, index, character) };
    }
  }
}

/** The code with one character removed, and with one character inserted, at every position. */
function* lengthCorruptions(code: string, filler: string): Generator<string> {
  for (let index = 0; index < code.length; index++) {
    yield `${code.slice(0, index)}${code.slice(index + 1)}`;
    yield `${code.slice(0, index)}${filler}${code.slice(index)}`;
  }
}

describe('IBAN (ISO 13616, via ibantools)', () => {
  // The IBAN registry's example of each country (SWIFT, IBAN Registry release 99).
  const EXAMPLES: Record<string, string> = {
    DE: 'DE89370400440532013000',
    GB: 'GB29NWBK60161331926819',
    FR: 'FR1420041010050500013M02606',
    ES: 'ES9121000418450200051332',
    NL: 'NL91ABNA0417164300',
    IT: 'IT60X0542811101000000123456',
  };

  it('accepts the registry examples, normalised from paper format', () => {
    for (const [country, iban] of Object.entries(EXAMPLES)) {
      assert.deepEqual(validateIban(iban), validAs(iban, country));
    }
    assert.deepEqual(validateIban('de89 3704 0044 0532 0130 00'), validAs(EXAMPLES.DE!, 'DE'));
    assert.deepEqual(validateIban(' GB29 NWBK 6016 1331 9268 19 '), validAs(EXAMPLES.GB!, 'GB'));
  });

  it('rejects every other digit anywhere in DE89370400440532013000 as checksum, and any letter as format', () => {
    const iban = EXAMPLES.DE!;
    let checked = 0;
    for (const { index, corrupted } of substitutions(iban.slice(2), DIGITS + LETTERS)) {
      const code = `DE${corrupted}`;
      const expected = /[0-9]/.test(corrupted[index]!) ? 'checksum' : 'format';
      assert.deepEqual(validateIban(code), invalid(code, expected, 'DE'), code);
      checked++;
    }
    assert.equal(checked, 20 * 35);
  });

  it('rejects every substitution in the GB and FR examples with the reason their BBAN format gives', () => {
    // Positions after the check digits: GB letters then digits; FR digits, 11 alphanumerics, 2 digits.
    const classes: Record<string, string> = {
      GB: `${'A'.repeat(4)}${'9'.repeat(14)}`,
      FR: `${'9'.repeat(10)}${'X'.repeat(11)}${'9'.repeat(2)}`,
    };
    for (const country of ['GB', 'FR'] as const) {
      const iban = EXAMPLES[country]!;
      for (const { index, corrupted } of substitutions(iban.slice(4), DIGITS + LETTERS)) {
        const code = `${iban.slice(0, 4)}${corrupted}`;
        const kind = classes[country]![index]!;
        const character = corrupted[index]!;
        const fits = kind === 'X' || (kind === '9' ? /[0-9]/.test(character) : /[A-Z]/.test(character));
        assert.deepEqual(validateIban(code), invalid(code, fits ? 'checksum' : 'format', country), code);
      }
    }
  });

  it('rejects a wrong check-digit pair as checksum, and a country without IBANs as country', () => {
    assert.deepEqual(
      validateIban('DE88370400440532013000'),
      invalid('DE88370400440532013000', 'checksum', 'DE'),
    );
    for (const country of ['DX', 'US', 'ZZ']) {
      const code = `${country}89370400440532013000`;
      assert.deepEqual(validateIban(code), invalid(code, 'country', null), code);
    }
  });

  it('rejects a character missing or added as length', () => {
    for (const code of lengthCorruptions(EXAMPLES.DE!.slice(4), '0')) {
      const iban = `DE89${code}`;
      assert.deepEqual(validateIban(iban), invalid(iban, 'length', 'DE'), iban);
    }
  });

  it('rejects characters outside A-Z and 0-9, and a start that is not CC99, as format', () => {
    assert.equal(validateIban('DE89-3704-0044-0532-0130-00').reason, 'format');
    assert.equal(validateIban('DE8937040044053201300Ä').reason, 'format');
    assert.equal(validateIban('8937040044053201300000').reason, 'format');
    assert.equal(validateIban('DEX9370400440532013000').reason, 'format');
    assert.deepEqual(validateIban('   '), invalid('', 'length', null));
  });

  it('checks the national check digits ibantools knows (the ES DC) as checksum', () => {
    // ES91 2100 0418 45 0200051332: the 45 is the DC; changing it and re-computing mod-97 leaves only the DC wrong.
    const bban = '21000418460200051332';
    const check = 98n - (BigInt(`${bban}142800`) % 97n);
    const code = `ES${String(check).padStart(2, '0')}${bban}`;
    assert.deepEqual(validateIban(code), invalid(code, 'checksum', 'ES'));
  });
});

describe('BIC (ISO 9362, via ibantools)', () => {
  it('accepts published BICs of 8 and 11 characters, any case', () => {
    for (const [bic, country] of [
      ['DEUTDEFF', 'DE'],
      ['DEUTDEFF500', 'DE'],
      ['COBADEFFXXX', 'DE'],
      ['NWBKGB2L', 'GB'],
      ['PSSTFRPPXXX', 'FR'],
      ['BNORPHMM', 'PH'],
    ] as const) {
      assert.deepEqual(validateBic(bic), validAs(bic, country));
    }
    assert.deepEqual(validateBic('cobadeff xxx'), validAs('COBADEFFXXX', 'DE'));
  });

  it('rejects a digit in the institution or country part as format', () => {
    for (let index = 0; index < 6; index++) {
      const code = replaceAt('COBADEFFXXX', index, '7');
      assert.deepEqual(validateBic(code), invalid(code, 'format', null), code);
    }
  });

  it('rejects a character missing or added as length', () => {
    for (const code of lengthCorruptions('COBADEFF', 'X')) {
      assert.deepEqual(validateBic(code), invalid(code, 'length', null), code);
    }
    assert.deepEqual(validateBic('COBADEFFXX'), invalid('COBADEFFXX', 'length', null));
  });

  it('rejects a country letter changed to no country as country', () => {
    for (const code of ['COBAXEFFXXX', 'COBADXFFXXX', 'NWBKGX2L']) {
      assert.deepEqual(validateBic(code), invalid(code, 'country', null), code);
    }
  });
});

describe('ABA routing number (3-7-1 checksum, via abavalidator)', () => {
  // 011000015 is the Federal Reserve Bank of Boston; the others are the main routing numbers of JPMorgan
  // Chase (NY), Bank of America (NY), Wells Fargo (CA), Citibank (NY).
  const PUBLISHED = ['011000015', '021000021', '026009593', '121000248', '021000089'];

  it('accepts published routing numbers', () => {
    for (const code of PUBLISHED) assert.deepEqual(validateAba(code), validAs(code, 'US'));
    assert.deepEqual(validateAba(' 0210 00021 '), validAs('021000021', 'US'));
  });

  it('rejects every single-digit substitution as checksum, a letter as format, a digit missing or added as length', () => {
    for (const routing of PUBLISHED) {
      for (const { corrupted } of substitutions(routing, DIGITS)) {
        assert.deepEqual(validateAba(corrupted), invalid(corrupted, 'checksum', 'US'), corrupted);
      }
      for (const { corrupted } of substitutions(routing, 'AZ')) {
        assert.deepEqual(validateAba(corrupted), invalid(corrupted, 'format', 'US'), corrupted);
      }
      for (const corrupted of lengthCorruptions(routing, '5')) {
        assert.deepEqual(validateAba(corrupted), invalid(corrupted, 'length', 'US'), corrupted);
      }
    }
    assert.deepEqual(validateAba('000000000'), invalid('000000000', 'checksum', 'US'));
  });
});

describe('UK sort code', () => {
  it('accepts 60-16-13 (the GB IBAN example) written with hyphens, spaces or neither', () => {
    for (const written of ['60-16-13', '60 16 13', '601613']) {
      assert.deepEqual(validateSortCode(written), validAs('601613', 'GB'));
    }
  });

  it('rejects a letter as format and a digit missing or added as length (a sort code has no check digit)', () => {
    for (const { corrupted } of substitutions('601613', 'AZ')) {
      assert.deepEqual(validateSortCode(corrupted), invalid(corrupted, 'format', 'GB'), corrupted);
    }
    for (const corrupted of lengthCorruptions('601613', '1')) {
      assert.deepEqual(validateSortCode(corrupted), invalid(corrupted, 'length', 'GB'), corrupted);
    }
  });
});

describe('IFSC (RBI format)', () => {
  // SBIN0001707: SBI Parliament Street, New Delhi; HSBC0400002: HSBC Main Branch Mumbai; ABNA0NEFT02 (letters
  // in the branch part): all in Razorpay's list of IFSCs.
  const PUBLISHED = ['SBIN0001707', 'HSBC0400002', 'ABNA0NEFT02'];

  it('accepts published IFSCs, any case', () => {
    for (const code of PUBLISHED) assert.deepEqual(validateIfsc(code), validAs(code, 'IN'));
    assert.deepEqual(validateIfsc('sbin0001707'), validAs('SBIN0001707', 'IN'));
  });

  it('rejects a digit in the bank part or anything but 0 as the fifth character as format', () => {
    for (const code of PUBLISHED) {
      for (const { index, corrupted } of substitutions(code.slice(0, 5), `${DIGITS}AZ`)) {
        const whole = `${corrupted}${code.slice(5)}`;
        const expected = index < 4 && /[A-Z]/.test(corrupted[index]!) ? null : 'format';
        if (expected === null) {
          // Another bank's code: still a well-formed IFSC.
          assert.equal(validateIfsc(whole).valid, true, whole);
        } else {
          assert.deepEqual(validateIfsc(whole), invalid(whole, 'format', 'IN'), whole);
        }
      }
    }
  });

  it('rejects a character missing or added as length', () => {
    for (const code of PUBLISHED) {
      for (const corrupted of lengthCorruptions(code, '0')) {
        assert.deepEqual(validateIfsc(corrupted), invalid(corrupted, 'length', 'IN'), corrupted);
      }
    }
  });
});

describe('CLABE (ABM/Banxico control digit, written here)', () => {
  const PUBLISHED = '032180000118359719';

  it('computes the published control digit and accepts the published CLABE', () => {
    assert.equal(clabeControlDigit('03218000011835971'), 9);
    assert.deepEqual(validateClabe(PUBLISHED), validAs(PUBLISHED, 'MX'));
    assert.deepEqual(validateClabe('032 180 00011835971 9'), validAs(PUBLISHED, 'MX'));
  });

  it('rejects every single-digit substitution as checksum, a letter as format, a digit missing or added as length', () => {
    for (const { corrupted } of substitutions(PUBLISHED, DIGITS)) {
      assert.deepEqual(validateClabe(corrupted), invalid(corrupted, 'checksum', 'MX'), corrupted);
    }
    for (const { corrupted } of substitutions(PUBLISHED, 'A')) {
      assert.deepEqual(validateClabe(corrupted), invalid(corrupted, 'format', 'MX'), corrupted);
    }
    for (const corrupted of lengthCorruptions(PUBLISHED, '4')) {
      assert.deepEqual(validateClabe(corrupted), invalid(corrupted, 'length', 'MX'), corrupted);
    }
  });

  it('accepts any 17 digits with their control digit and refuses every other last digit', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{17}$/), (first17) => {
        const digit = clabeControlDigit(first17);
        assert.equal(validateClabe(`${first17}${digit}`).valid, true);
        for (const other of DIGITS) {
          if (Number(other) !== digit) assert.equal(validateClabe(`${first17}${other}`).reason, 'checksum');
        }
      }),
    );
  });
});

describe('NUBAN (CBN check digit, written here)', () => {
  it('computes the check digits of the CBN examples and accepts them with bank code 011', () => {
    assert.equal(nubanCheckDigit('011', '000001457'), 9);
    assert.equal(nubanCheckDigit('011', '000000022'), 0);
    assert.deepEqual(validateNuban('0000014579', '011'), validAs('0000014579', 'NG'));
    assert.deepEqual(validateNuban('0000000220', '011'), validAs('0000000220', 'NG'));
  });

  it('rejects every single-digit substitution as checksum, a letter as format, a digit missing or added as length', () => {
    for (const nuban of ['0000014579', '0000000220']) {
      for (const { corrupted } of substitutions(nuban, DIGITS)) {
        assert.deepEqual(validateNuban(corrupted, '011'), invalid(corrupted, 'checksum', 'NG'), corrupted);
      }
      for (const { corrupted } of substitutions(nuban, 'A')) {
        assert.deepEqual(validateNuban(corrupted, '011'), invalid(corrupted, 'format', 'NG'), corrupted);
      }
      for (const corrupted of lengthCorruptions(nuban, '3')) {
        assert.deepEqual(validateNuban(corrupted, '011'), invalid(corrupted, 'length', 'NG'), corrupted);
      }
    }
  });

  it('judges the account with its bank code: the same number at another bank fails the check', () => {
    assert.deepEqual(validateNuban('0000014579', '058'), invalid('0000014579', 'checksum', 'NG'));
    assert.deepEqual(validateNuban('0000014579', '58'), invalid('0000014579', 'format', 'NG'));
  });
});

describe('validateCode', () => {
  it('refuses a valid code of another country than the expected one as country, keeping its own country', () => {
    assert.deepEqual(
      validateCode({ code_type: 'iban', code: 'DE89370400440532013000', country: 'FR' }),
      invalid('DE89370400440532013000', 'country', 'DE'),
    );
    assert.deepEqual(
      validateCode({ code_type: 'aba', code: '021000021', country: 'GB' }),
      invalid('021000021', 'country', 'US'),
    );
    assert.deepEqual(
      validateCode({ code_type: 'bic', code: 'NWBKGB2L', country: 'GB' }),
      validAs('NWBKGB2L', 'GB'),
    );
  });

  it('reports the code’s own reason before a country mismatch', () => {
    assert.equal(
      validateCode({ code_type: 'iban', code: 'DE89370400440532013001', country: 'FR' }).reason,
      'checksum',
    );
  });
});
