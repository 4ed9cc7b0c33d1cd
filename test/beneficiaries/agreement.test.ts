// The requirements and the validation cannot disagree (D19): for every field set, a random or mutated value of
// each account field is accepted exactly when its normalised form keeps the rule the requirements publish
// (pattern, lengths, allowed values) and, for a code, the banks area's validator holds with the destination
// country. Property-based (fast-check), on validateFields with a directory that knows no bank.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { validateCode } from '../../src/banks/validation.ts';
import { type FieldSpec, fieldSetFor, publicField } from '../../src/beneficiaries/requirements.ts';
import { normalise, validateFields } from '../../src/beneficiaries/validation.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { AppError } from '../../src/platform/errors.ts';
import { bodyOf, type FieldSetKey, VALID } from './fixtures.ts';

/** The directory look-ups find nothing: bank resolution is not what this test is about. */
const emptyDirectory = { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Queryable;

/** What the published rule of `spec` says about a normalised value. */
function keepsPublishedRule(spec: FieldSpec, value: string): boolean {
  const rule = publicField(spec);
  if (rule.pattern !== undefined && !new RegExp(rule.pattern, 'u').test(value)) return false;
  if (rule.min_length !== undefined && value.length < rule.min_length) return false;
  if (rule.max_length !== undefined && value.length > rule.max_length) return false;
  if (rule.allowed_values !== undefined && !rule.allowed_values.includes(value)) return false;
  return true;
}

/** A value near the valid one: a character replaced, one added or removed, spaces and case changed. */
const mutated = (valid: string) =>
  fc.oneof(
    fc.constant(valid),
    fc
      .tuple(fc.nat(valid.length - 1), fc.constantFrom(...'0123456789ABZaz -+'))
      .map(([at, char]) => valid.slice(0, at) + char + valid.slice(at + 1)),
    fc.nat(valid.length - 1).map((at) => valid.slice(0, at) + valid.slice(at + 1)),
    fc.constantFrom(...'0123456789').map((digit) => valid + digit),
    fc.constant(valid.toLowerCase()),
    fc.constant(` ${valid.replace(/(.{4})/g, '$1 ')} `),
    fc.stringMatching(/^[0-9A-Z+ -]{0,30}$/),
  );

const KEYS = Object.keys(VALID) as FieldSetKey[];

describe('requirements and validation agree', () => {
  for (const key of KEYS) {
    it(`${key}: every account field is accepted exactly when it keeps its published rule`, async () => {
      const valid = VALID[key];
      const set = fieldSetFor(valid.destination_country, valid.payout_method)!;
      const accepted = await validateFields(emptyDirectory, set, valid.destination_country, bodyOf(key));
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...set.account)
            .chain((spec) =>
              fc.tuple(
                fc.constant(spec),
                mutated(accepted.account[spec.name.slice('account.'.length)] ?? 'COBADEFFXXX'),
              ),
            ),
          async ([spec, raw]) => {
            const field = spec.name.slice('account.'.length);
            const body = bodyOf(key, { account: { [field]: raw } });
            let refusedField: string | undefined;
            try {
              await validateFields(emptyDirectory, set, valid.destination_country, body);
            } catch (error) {
              assert.ok(error instanceof AppError, String(error));
              assert.equal(error.code, 'VALIDATION_FAILED');
              refusedField = error.field;
            }
            const value = normalise(raw, spec.normalise);
            const optionalAndEmpty = !spec.required && raw.trim() === '';
            let keeps = optionalAndEmpty || keepsPublishedRule(spec, value);
            if (keeps && !optionalAndEmpty && spec.code) {
              const bankCode = spec.bankCodeField ? accepted.account.bank_code : undefined;
              keeps = validateCode({
                code_type: spec.code,
                code: value,
                country: valid.destination_country,
                ...(bankCode !== undefined ? { bank_code: bankCode } : {}),
              }).valid;
            }
            // A NUBAN's bank code is checked by the account number's check digit too.
            const names =
              spec.name === 'account.bank_code' ? [spec.name, 'account.account_number'] : [spec.name];
            if (keeps && spec.name !== 'account.bank_code')
              assert.equal(refusedField, undefined, `${spec.name} ${raw}`);
            if (!keeps)
              assert.ok(names.includes(refusedField ?? ''), `${spec.name} ${raw} refused as ${refusedField}`);
          },
        ),
        { numRuns: 150 },
      );
    });
  }
});
