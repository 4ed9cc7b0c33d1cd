// Field sets of D19 over HTTP: GET /api/v1/beneficiaries/requirements per destination, and create judged by
// the same definition: for every field set a valid beneficiary, every required field the requirements name
// left out, every checksum broken (422 naming the dotted field), a foreign IBAN or BIC, unknown account keys,
// the common fields' rules, destinations no corridor serves.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import {
  BENEFICIARIES,
  type BeneficiaryJson,
  bodyOf,
  createBeneficiary,
  expectError,
  type FieldSetKey,
  REQUIREMENTS,
  VALID,
} from './fixtures.ts';

interface FieldJson {
  name: string;
  required: boolean;
  type: string;
  pattern?: string;
  min_length?: number;
  max_length?: number;
  allowed_values?: string[];
  description: string;
}

interface RequirementsJson {
  destination_country: string;
  destination_currency: string;
  payout_method: string;
  entity_types: string[];
  fields: FieldJson[];
}

const COMMON = [
  ['entity_type', true],
  ['name', true],
  ['address.line1', true],
  ['address.city', true],
  ['address.postal_code', false],
  ['address.country', true],
  ['date_of_birth', false],
  ['email', false],
] as const;

/** The account fields of each field set (D19), with whether each is required. */
const ACCOUNT_FIELDS: Record<FieldSetKey, [string, boolean][]> = {
  DE: [
    ['account.iban', true],
    ['account.bic', false],
  ],
  FR: [
    ['account.iban', true],
    ['account.bic', false],
  ],
  ES: [
    ['account.iban', true],
    ['account.bic', false],
  ],
  GB: [
    ['account.account_number', true],
    ['account.sort_code', true],
  ],
  US: [
    ['account.account_number', true],
    ['account.routing_number', true],
    ['account.account_type', true],
  ],
  IN: [
    ['account.account_number', true],
    ['account.ifsc', true],
  ],
  MX: [['account.clabe', true]],
  NG: [
    ['account.bank_code', true],
    ['account.account_number', true],
  ],
  PH: [
    ['account.account_number', true],
    ['account.bic', true],
  ],
  KE: [
    ['account.mobile_number', true],
    ['account.provider', true],
  ],
};

/** What each valid body is stored as: normalised account and the directory's bank. */
const EXPECTED: Record<FieldSetKey, { account: Record<string, string>; bank: string | null }> = {
  DE: { account: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' }, bank: 'Commerzbank' },
  FR: { account: { iban: 'FR1420041010050500013M02606' }, bank: 'La Banque Postale' },
  ES: { account: { iban: 'ES9121000418450200051332' }, bank: 'CaixaBank' },
  GB: {
    account: { account_number: '31926819', sort_code: '601613' },
    bank: 'National Westminster Bank (NatWest)',
  },
  US: {
    account: { account_number: '000123456789', routing_number: '021000021', account_type: 'checking' },
    bank: 'JPMorgan Chase Bank',
  },
  IN: { account: { account_number: '123456789012', ifsc: 'SBIN0001707' }, bank: 'State Bank of India' },
  MX: { account: { clabe: '002180000118359710' }, bank: 'Banamex (Banco Nacional de México)' },
  NG: { account: { account_number: '0000014579', bank_code: '011' }, bank: 'First Bank of Nigeria' },
  PH: { account: { account_number: '1234567890', bic: 'BNORPHMM' }, bank: 'BDO Unibank' },
  KE: { account: { mobile_number: '+254712345678', provider: 'mpesa' }, bank: null },
};

/** One broken check digit (or, where the scheme has none, a broken format) per field set. */
const BROKEN: Record<FieldSetKey, [string, Record<string, string>][]> = {
  DE: [
    ['account.iban', { iban: 'DE89370400440532013001' }],
    ['account.bic', { bic: 'COBA1EFF' }],
  ],
  FR: [['account.iban', { iban: 'FR1420041010050500013M02607' }]],
  ES: [['account.iban', { iban: 'ES9121000418450200051333' }]],
  GB: [
    ['account.sort_code', { sort_code: '60-16-1' }],
    ['account.account_number', { account_number: '3192681' }],
  ],
  US: [
    ['account.routing_number', { routing_number: '021000022' }],
    ['account.account_number', { account_number: '123' }],
    ['account.account_type', { account_type: 'brokerage' }],
  ],
  IN: [
    ['account.ifsc', { ifsc: 'SBIN1001707' }],
    ['account.account_number', { account_number: '12345678' }],
  ],
  MX: [['account.clabe', { clabe: '002180000118359711' }]],
  NG: [
    ['account.account_number', { account_number: '0000014578' }],
    ['account.bank_code', { bank_code: '11' }],
  ],
  PH: [
    ['account.bic', { bic: 'BNOR1HMM' }],
    ['account.account_number', { account_number: '123456789' }],
  ],
  KE: [
    ['account.mobile_number', { mobile_number: '+255712345678' }],
    ['account.provider', { provider: 'mtn' }],
  ],
};

const KEYS = Object.keys(VALID) as FieldSetKey[];

const requirementsUrl = (country: string, currency: string, method: string) =>
  `${REQUIREMENTS}?destination_country=${country}&destination_currency=${currency}&payout_method=${method}`;

describe('beneficiary field sets', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp();
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  const requirementsOf = async (key: FieldSetKey): Promise<RequirementsJson> => {
    const body = VALID[key];
    const response = await api.get(
      requirementsUrl(body.destination_country, body.destination_currency, body.payout_method),
    );
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as RequirementsJson;
  };

  for (const key of KEYS) {
    describe(`${key} (${VALID[key].payout_method})`, () => {
      it('the requirements list the common fields, then the account fields of the set', async () => {
        const requirements = await requirementsOf(key);
        assert.equal(requirements.destination_country, VALID[key].destination_country);
        assert.equal(requirements.destination_currency, VALID[key].destination_currency);
        assert.equal(requirements.payout_method, VALID[key].payout_method);
        assert.deepEqual(requirements.entity_types, ['individual', 'business']);
        assert.deepEqual(
          requirements.fields.map((field) => [field.name, field.required]),
          [...COMMON, ...ACCOUNT_FIELDS[key]],
        );
        for (const field of requirements.fields) {
          assert.ok(field.description.length > 0, field.name);
          assert.deepEqual(Object.keys(field).at(-1), 'description');
        }
      });

      it('a valid beneficiary is created with its account normalised and its bank resolved', async () => {
        const created = await createBeneficiary(api, bodyOf(key));
        assert.match(created.id, /^ben_[0-9A-HJKMNP-TV-Z]{26}$/);
        assert.equal(created.status, 'active');
        assert.deepEqual(created.account, EXPECTED[key].account);
        assert.equal(created.bank?.name ?? null, EXPECTED[key].bank);
        const read = await api.get(`${BENEFICIARIES}/${created.id}`);
        assert.equal(read.statusCode, 200);
        assert.deepEqual(read.json(), created);
      });

      it('each required field the requirements name, left out: 422 naming it', async () => {
        const requirements = await requirementsOf(key);
        const required = requirements.fields.filter((field) => field.required);
        assert.ok(required.length >= 6);
        for (const field of required) {
          const [group, name] = field.name.split('.') as [string, string | undefined];
          const body =
            name === undefined
              ? bodyOf(key, { [group]: undefined })
              : bodyOf(key, { [group]: { [name]: undefined } });
          const response = await api.post(BENEFICIARIES, body);
          const message = expectError(response, 422, 'VALIDATION_FAILED', field.name);
          assert.equal(message, `${field.name} is required`);
        }
      });

      it('each check digit or format broken: 422 naming the dotted field', async () => {
        for (const [field, account] of BROKEN[key]) {
          const response = await api.post(BENEFICIARIES, bodyOf(key, { account }));
          expectError(response, 422, 'VALIDATION_FAILED', field);
        }
      });

      it('an account key the set does not have: 422 naming it', async () => {
        const response = await api.post(BENEFICIARIES, bodyOf(key, { account: { swift_code: 'X' } }));
        const message = expectError(response, 422, 'VALIDATION_FAILED', 'account.swift_code');
        assert.match(message, /is not a field of the \w+ (bank_account|mobile_wallet) field set/);
      });
    });
  }

  describe('check digits and countries', () => {
    it('names the failed rule without repeating the value', async () => {
      const checksum = await api.post(
        BENEFICIARIES,
        bodyOf('DE', { account: { iban: 'DE89370400440532013001' } }),
      );
      assert.equal(
        expectError(checksum, 422, 'VALIDATION_FAILED', 'account.iban'),
        'account.iban is not a valid IBAN: its check digits do not hold',
      );
      const aba = await api.post(BENEFICIARIES, bodyOf('US', { account: { routing_number: '021000022' } }));
      assert.equal(
        expectError(aba, 422, 'VALIDATION_FAILED', 'account.routing_number'),
        'account.routing_number is not a valid ABA: its check digits do not hold',
      );
      const nuban = await api.post(
        BENEFICIARIES,
        bodyOf('NG', { account: { account_number: '0000014578' } }),
      );
      assert.equal(
        expectError(nuban, 422, 'VALIDATION_FAILED', 'account.account_number'),
        'account.account_number is not a valid NUBAN: its check digits do not hold',
      );
      const clabe = await api.post(BENEFICIARIES, bodyOf('MX', { account: { clabe: '002180000118359711' } }));
      assert.equal(
        expectError(clabe, 422, 'VALIDATION_FAILED', 'account.clabe'),
        'account.clabe is not a valid CLABE: its check digits do not hold',
      );
    });

    it('a NUBAN is checked with its own bank code: valid for 011, not for 057', async () => {
      const response = await api.post(BENEFICIARIES, bodyOf('NG', { account: { bank_code: '057' } }));
      expectError(response, 422, 'VALIDATION_FAILED', 'account.account_number');
    });

    it('a foreign IBAN for a SEPA country: 422 on account.iban naming both countries', async () => {
      for (const [key, iban, country] of [
        ['DE', 'FR1420041010050500013M02606', 'FR'],
        ['FR', 'DE89370400440532013000', 'DE'],
        ['ES', 'GB29NWBK60161331926819', 'GB'],
        // A foreign IBAN whose check digits do not hold either is still refused for its country first.
        ['DE', 'FR1420041010050500013M02607', 'FR'],
      ] as const) {
        const response = await api.post(BENEFICIARIES, bodyOf(key, { account: { iban } }));
        assert.equal(
          expectError(response, 422, 'VALIDATION_FAILED', 'account.iban'),
          `account.iban is an IBAN of ${country}, not of the destination country ${VALID[key].destination_country}`,
        );
      }
    });

    it("a BIC of another country than the destination's: 422 on account.bic", async () => {
      const sepa = await api.post(BENEFICIARIES, bodyOf('DE', { account: { bic: 'BNORPHMM' } }));
      assert.equal(
        expectError(sepa, 422, 'VALIDATION_FAILED', 'account.bic'),
        'account.bic is a BIC of PH, not of the destination country DE',
      );
      const ph = await api.post(BENEFICIARIES, bodyOf('PH', { account: { bic: 'COBADEFFXXX' } }));
      expectError(ph, 422, 'VALIDATION_FAILED', 'account.bic');
    });

    it('a well-formed code the directory does not know is valid, with bank null', async () => {
      // 032 (IXE Banco) is not in the sandbox directory; the CLABE is the published example.
      const created = await createBeneficiary(
        api,
        bodyOf('MX', { account: { clabe: '032180000118359719' } }),
      );
      assert.equal(created.bank, null);
      assert.deepEqual(created.account, { clabe: '032180000118359719' });
    });

    it('a SEPA country no corridor serves (NL): 422 on destination_country', async () => {
      // NL has no sandbox corridor: no field set is served.
      const response = await api.post(BENEFICIARIES, {
        ...bodyOf('DE'),
        destination_country: 'NL',
        account: { iban: 'NL91ABNA0417164300' },
      });
      expectError(response, 422, 'VALIDATION_FAILED', 'destination_country');
    });
  });

  describe('common fields', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['name', { name: 'A' }, 'name must be 2 to 140 characters long'],
      ['name', { name: 'x'.repeat(141) }, 'name must be 2 to 140 characters long'],
      // Characters are code points, as PostgreSQL's length() counts them: one outside the BMP is one.
      ['name', { name: '\u{1D400}' }, 'name must be 2 to 140 characters long'],
      ['name', { name: '\u{20000}'.repeat(141) }, 'name must be 2 to 140 characters long'],
      ['name', { name: '  --  ' }, 'name must contain letters or digits'],
      // A line break or a bidirectional override would make the name read otherwise in a bank file or a list.
      [
        'name',
        { name: 'Ann\nSmith' },
        'name must match ^[^\\u0000-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069]*$',
      ],
      [
        'name',
        { name: 'Ann Smith\u0007' },
        'name must match ^[^\\u0000-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069]*$',
      ],
      [
        'address.line1',
        { address: { line1: 'Main St \u202E1' } },
        'address.line1 must match ^[^\\u0000-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069]*$',
      ],
      ['entity_type', { entity_type: 'company' }, 'entity_type must be one of: individual, business'],
      [
        'address.country',
        { address: { country: 'XX' } },
        'address.country must be an ISO 3166-1 alpha-2 country code',
      ],
      ['address.country', { address: { country: 'de' } }, 'address.country must match ^[A-Z]{2}$'],
      ['address.street', { address: { street: 'Main' } }, 'address.street is not a recognised field'],
      ['address.city', { address: { city: '   ' } }, 'address.city must be 1 to 100 characters long'],
      [
        'email',
        { email: 'a\u0000b@example.com' },
        'email must match ^[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+$',
      ],
      [
        'email',
        { email: 'not-an-email' },
        'email must match ^[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+$',
      ],
      [
        'date_of_birth',
        { date_of_birth: '1990-02-30' },
        'date_of_birth must be a real date (YYYY-MM-DD) after 1850',
      ],
      ['date_of_birth', { date_of_birth: '2999-01-01' }, 'date_of_birth must not be in the future'],
      ['date_of_birth', { date_of_birth: '1.2.1990' }, 'date_of_birth must be exactly 10 characters long'],
      [
        'date_of_birth',
        { entity_type: 'business', date_of_birth: '1990-01-01' },
        'date_of_birth is only for entity_type individual',
      ],
      ['account.iban', { account: { iban: 42 } }, 'account.iban must be of type string'],
      [
        'destination_country',
        { destination_country: 'de' },
        'destination_country must be an upper-case ISO 3166-1 alpha-2 country code',
      ],
      [
        'destination_currency',
        { destination_currency: 'EURO' },
        'destination_currency must be an upper-case ISO 4217 code',
      ],
      [
        'payout_method',
        { payout_method: 'cash' },
        'payout_method must be one of: bank_account, mobile_wallet',
      ],
      ['external_id', { external_id: '' }, 'external_id must NOT have fewer than 1 characters'],
      ['nickname', { nickname: 'x' }, 'nickname is not a recognised field'],
    ];
    for (const [field, change, message] of cases) {
      it(`${field}: ${message}`, async () => {
        const { address, account, ...top } = change as {
          address?: Record<string, string>;
          account?: Record<string, string>;
        };
        const body = bodyOf('DE', { ...top, ...(address ? { address } : {}) });
        if (account) body.account = { ...(body.account as object), ...account };
        const response = await api.post(BENEFICIARIES, body);
        assert.equal(expectError(response, 422, 'VALIDATION_FAILED', field), message);
      });
    }

    it('takes a name of 140 characters outside the BMP (280 UTF-16 units)', async () => {
      const name = '\u{20000}'.repeat(140);
      const created = await createBeneficiary(api, bodyOf('DE', { name }));
      assert.equal(created.name, name);
    });

    it('optional fields are stored normalised, and left out they are null', async () => {
      const created = await createBeneficiary(
        api,
        bodyOf('DE', {
          name: '  Anna Schmidt  ',
          email: ' anna@example.com ',
          date_of_birth: '1988-04-02',
          address: { postal_code: undefined },
          account: { bic: undefined },
        }),
      );
      assert.equal(created.name, 'Anna Schmidt');
      assert.equal(created.email, 'anna@example.com');
      assert.equal(created.date_of_birth, '1988-04-02');
      assert.deepEqual(created.address, {
        line1: '1 Main Street',
        city: 'Berlin',
        postal_code: null,
        country: 'DE',
      });
      assert.deepEqual(created.account, { iban: 'DE89370400440532013000' });
      const bare = await createBeneficiary(api, bodyOf('FR'));
      assert.equal(bare.email, null);
      assert.equal(bare.date_of_birth, null);
      assert.equal(bare.external_id, null);
      assert.equal(bare.deleted_at, null);
    });

    it('the address may be in another country than the destination', async () => {
      const created = await createBeneficiary(
        api,
        bodyOf('GB', { address: { country: 'IE', city: 'Dublin' } }),
      );
      assert.equal(created.address.country, 'IE');
      assert.equal(created.destination_country, 'GB');
    });
  });

  describe('destinations no active corridor serves', () => {
    it('create: 422 naming the country, currency or method no corridor accepts', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ destination_country: 'JP', destination_currency: 'JPY' }, 'destination_country'],
        [{ destination_currency: 'GBP' }, 'destination_currency'],
        [{ payout_method: 'mobile_wallet' }, 'payout_method'],
      ];
      for (const [change, field] of cases) {
        const response = await api.post(BENEFICIARIES, bodyOf('DE', change));
        const message = expectError(response, 422, 'VALIDATION_FAILED', field);
        assert.match(message, /^No active corridor pays /);
      }
      const kenyaBank = await api.post(BENEFICIARIES, bodyOf('KE', { payout_method: 'bank_account' }));
      expectError(kenyaBank, 422, 'VALIDATION_FAILED', 'payout_method');
    });

    it('requirements: 404 for a combination no active corridor serves', async () => {
      for (const [country, currency, method] of [
        ['JP', 'JPY', 'bank_account'],
        ['DE', 'GBP', 'bank_account'],
        ['KE', 'KES', 'bank_account'],
        ['GB', 'GBP', 'mobile_wallet'],
      ] as const) {
        const response = await api.get(requirementsUrl(country, currency, method));
        expectError(response, 404, 'NOT_FOUND');
      }
    });

    it('a corridor to a country D19 gives no field set: requirements 404, create 422, saying so', async () => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/corridors',
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          source_currency: 'USD',
          destination_country: 'JP',
          destination_currency: 'JPY',
          payout_method: 'bank_account',
          min_amount: '1.00',
          max_amount: '1000.00',
          fee_fixed: '1.00',
          fee_percent: '0.50',
          fx_markup_percent: '0.50',
          estimated_delivery_seconds: 3600,
        }),
      });
      assert.equal(created.statusCode, 201, created.body);
      const message = 'No beneficiary field set is defined for JPY to JP by bank_account';
      assert.equal(
        expectError(await api.get(requirementsUrl('JP', 'JPY', 'bank_account')), 404, 'NOT_FOUND'),
        message,
      );
      const response = await api.post(BENEFICIARIES, {
        ...bodyOf('DE'),
        destination_country: 'JP',
        destination_currency: 'JPY',
      });
      assert.equal(expectError(response, 422, 'VALIDATION_FAILED', 'destination_country'), message);
    });

    it('requirements: 422 for a missing or malformed parameter', async () => {
      const missing = await api.get(`${REQUIREMENTS}?destination_country=DE&destination_currency=EUR`);
      expectError(missing, 422, 'VALIDATION_FAILED', 'payout_method');
      const lower = await api.get(requirementsUrl('de', 'EUR', 'bank_account'));
      expectError(lower, 422, 'VALIDATION_FAILED', 'destination_country');
      const method = await api.get(requirementsUrl('DE', 'EUR', 'cheque'));
      expectError(method, 422, 'VALIDATION_FAILED', 'payout_method');
    });

    it('a suspended corridor serves no requirements and no new beneficiary; active again, it does', async () => {
      const corridor = '/admin/v1/corridors/cor_0000SANDBX0000000000000004';
      const setStatus = async (status: string) => {
        const response = await t.app.inject({
          method: 'PATCH',
          url: corridor,
          headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ status }),
        });
        assert.equal(response.statusCode, 200, response.body);
      };
      await setStatus('suspended');
      try {
        expectError(await api.get(requirementsUrl('GB', 'GBP', 'bank_account')), 404, 'NOT_FOUND');
        expectError(
          await api.post(BENEFICIARIES, bodyOf('GB')),
          422,
          'VALIDATION_FAILED',
          'destination_country',
        );
      } finally {
        await setStatus('active');
      }
      assert.equal((await api.get(requirementsUrl('GB', 'GBP', 'bank_account'))).statusCode, 200);
    });
  });

  it('requirements and create need the beneficiaries scopes (403)', async () => {
    const reader = apiClient(t, await t.tenant(['beneficiaries:read']));
    assert.equal((await reader.get(requirementsUrl('DE', 'EUR', 'bank_account'))).statusCode, 200);
    expectError(await reader.post(BENEFICIARIES, bodyOf('DE')), 403, 'AUTHORIZATION_FAILED');
    const other = apiClient(t, await t.tenant(['webhooks:read']));
    expectError(await other.get(requirementsUrl('DE', 'EUR', 'bank_account')), 403, 'AUTHORIZATION_FAILED');
  });

  it('the exact rule of a field: the DE IBAN and the KE mobile number', async () => {
    const de = await requirementsOf('DE');
    assert.deepEqual(
      de.fields.find((field) => field.name === 'account.iban'),
      {
        name: 'account.iban',
        required: true,
        type: 'string',
        pattern: '^DE[0-9]{2}[0-9]{18}$',
        min_length: 22,
        max_length: 22,
        description:
          'The IBAN, of DE (22 characters, ISO 13616 check digits); spaces are removed and letters upper-cased ' +
          'before it is checked.',
      },
    );
    const ke = await requirementsOf('KE');
    assert.deepEqual(
      ke.fields.find((field) => field.name === 'account.provider'),
      {
        name: 'account.provider',
        required: true,
        type: 'string',
        allowed_values: ['mpesa', 'airtel'],
        description: 'The mobile money provider.',
      },
    );
  });

  it('every valid body matches the published pattern and lengths of its fields once normalised', async () => {
    for (const key of KEYS) {
      const requirements = await requirementsOf(key);
      const created = (await createBeneficiary(api, bodyOf(key))) as BeneficiaryJson;
      for (const field of requirements.fields.filter((field) => field.name.startsWith('account.'))) {
        const value = created.account[field.name.slice('account.'.length)];
        if (value === undefined) continue;
        if (field.pattern) assert.match(value, new RegExp(field.pattern), field.name);
        if (field.min_length) assert.ok(value.length >= field.min_length, field.name);
        if (field.max_length) assert.ok(value.length <= field.max_length, field.name);
        if (field.allowed_values) assert.ok(field.allowed_values.includes(value), field.name);
      }
    }
  });
});
