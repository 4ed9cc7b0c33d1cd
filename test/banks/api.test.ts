// The bank directory over HTTP (D17) on the sandbox directory (D24): validate with the look-ups that fill
// `bank` and `branch`, search filters, free text, sorting and paging (D4), reads, and the errors (D5).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clabeControlDigit, nubanCheckDigit } from '../../src/banks/validation.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { type Client, client } from '../webhooks/fixtures.ts';

interface BankJson {
  id: string;
  name: string;
  country: string;
  bic: string | null;
  national_code_type: string | null;
  national_code: string | null;
  created_at: string;
  updated_at: string;
}
interface BranchJson {
  id: string;
  bank_id: string;
  name: string | null;
  country: string;
  city: string | null;
  address: string | null;
  bic: string | null;
  code_type: string | null;
  code: string | null;
  created_at: string;
  updated_at: string;
}
interface ValidateJson {
  valid: boolean;
  code_type: string;
  code: string;
  reason: string | null;
  country: string | null;
  bank: BankJson | null;
  branch: BranchJson | null;
}
interface PageJson<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectError(
  response: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
) {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code);
  assert.equal(body.field, field, `field of ${response.body}`);
  return body;
}

describe('bank directory API', () => {
  let t: TestApp;
  let api: Client;
  before(async () => {
    t = await startTestApp();
    api = client(t, await t.tenant());
  });
  after(() => t.close());

  const validate = async (body: Record<string, unknown>): Promise<ValidateJson> => {
    const response = await api.post('/api/v1/banks/validate', body);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as ValidateJson;
  };
  const searchBanks = async (body: unknown): Promise<PageJson<BankJson>> => {
    const response = await api.post('/api/v1/banks/search', body);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as PageJson<BankJson>;
  };
  const searchBranches = async (body: unknown): Promise<PageJson<BranchJson>> => {
    const response = await api.post('/api/v1/bank-branches/search', body);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as PageJson<BranchJson>;
  };

  describe('POST /api/v1/banks/validate', () => {
    it('fills bank and branch for the IBAN registry example of Germany (BLZ 37040044: Commerzbank Köln)', async () => {
      const result = await validate({ code_type: 'iban', code: 'de89 3704 0044 0532 0130 00' });
      assert.deepEqual(Object.keys(result), [
        'valid',
        'code_type',
        'code',
        'reason',
        'country',
        'bank',
        'branch',
      ]);
      assert.equal(result.valid, true);
      assert.equal(result.code, 'DE89370400440532013000');
      assert.equal(result.reason, null);
      assert.equal(result.country, 'DE');
      assert.equal(result.bank?.name, 'Commerzbank');
      assert.equal(result.bank?.bic, 'COBADEFF');
      assert.equal(result.bank?.national_code_type, 'blz');
      assert.equal(result.bank?.national_code, '37040044');
      assert.match(result.bank!.id, /^bnk_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.match(result.bank!.created_at, ISO);
      assert.equal(result.branch?.code, '37040044');
      assert.equal(result.branch?.city, 'Köln');
      assert.equal(result.branch?.bank_id, result.bank?.id);
      assert.match(result.branch!.id, /^brn_[0-9A-HJKMNP-TV-Z]{26}$/);
    });

    it('finds NatWest and its sort code 60-16-13 from the GB example, and La Banque Postale from the FR one', async () => {
      const gb = await validate({ code_type: 'iban', code: 'GB29NWBK60161331926819' });
      assert.equal(gb.bank?.bic, 'NWBKGB2L');
      assert.equal(gb.branch?.code_type, 'sort_code');
      assert.equal(gb.branch?.code, '601613');
      assert.equal(gb.branch?.bank_id, gb.bank?.id);
      const fr = await validate({ code_type: 'iban', code: 'FR1420041010050500013M02606', country: 'FR' });
      assert.equal(fr.valid, true);
      assert.equal(fr.bank?.name, 'La Banque Postale');
      assert.equal(fr.bank?.bic, 'PSSTFRPP');
      assert.equal(fr.bank?.national_code, '20041');
      assert.equal(fr.branch, null);
      const es = await validate({ code_type: 'iban', code: 'ES9121000418450200051332' });
      assert.equal(es.bank?.name, 'CaixaBank');
      assert.equal(es.bank?.national_code_type, 'es_bank');
    });

    it('answers a valid IBAN the directory does not know as valid with bank and branch null', async () => {
      const result = await validate({ code_type: 'iban', code: 'NL91ABNA0417164300' });
      assert.deepEqual(
        { ...result },
        {
          valid: true,
          code_type: 'iban',
          code: 'NL91ABNA0417164300',
          reason: null,
          country: 'NL',
          bank: null,
          branch: null,
        },
      );
    });

    it('finds a bank by the first 8 characters of a BIC, and the branch by the BIC11 (XXX for a BIC8)', async () => {
      const commerzbank = await validate({ code_type: 'bic', code: 'COBADEFFXXX' });
      assert.equal(commerzbank.bank?.name, 'Commerzbank');
      assert.equal(commerzbank.branch?.bic, 'COBADEFFXXX');
      const eight = await validate({ code_type: 'bic', code: 'cobadeff' });
      assert.equal(eight.code, 'COBADEFF');
      assert.equal(eight.branch?.bic, 'COBADEFFXXX');
      const natwest = await validate({ code_type: 'bic', code: 'NWBKGB2L' });
      assert.equal(natwest.bank?.name, 'National Westminster Bank (NatWest)');
      assert.equal(natwest.branch, null);
      const postale = await validate({ code_type: 'bic', code: 'PSSTFRPPXXX' });
      assert.equal(postale.bank?.name, 'La Banque Postale');
      const otherOffice = await validate({ code_type: 'bic', code: 'COBADEFF123' });
      assert.equal(otherOffice.bank?.name, 'Commerzbank');
      assert.equal(otherOffice.branch, null);
    });

    it('finds US branches and banks by routing number', async () => {
      const chase = await validate({ code_type: 'aba', code: '021000021' });
      assert.equal(chase.country, 'US');
      assert.equal(chase.bank?.name, 'JPMorgan Chase Bank');
      assert.equal(chase.branch?.code, '021000021');
      assert.equal(chase.branch?.city, 'New York');
      const california = await validate({ code_type: 'aba', code: '121000358' });
      assert.equal(california.bank?.name, 'Bank of America');
      assert.equal(california.branch?.code, '121000358');
      const boston = await validate({ code_type: 'aba', code: '011000015' });
      assert.equal(boston.valid, true);
      assert.equal(boston.bank, null);
      assert.equal(boston.branch, null);
    });

    it('finds a sort code written with hyphens, and an IFSC branch or, for an unknown branch, its bank', async () => {
      const monzo = await validate({ code_type: 'sort_code', code: '04-00-04' });
      assert.equal(monzo.code, '040004');
      assert.equal(monzo.bank?.name, 'Monzo Bank');
      assert.equal(monzo.branch?.code, '040004');
      const parliamentStreet = await validate({ code_type: 'ifsc', code: 'sbin0001707' });
      assert.equal(parliamentStreet.code, 'SBIN0001707');
      assert.equal(parliamentStreet.bank?.name, 'State Bank of India');
      assert.equal(parliamentStreet.branch?.name, 'Parliament Street');
      assert.equal(parliamentStreet.branch?.city, 'New Delhi');
      const unknownBranch = await validate({ code_type: 'ifsc', code: 'SBIN0000001' });
      assert.equal(unknownBranch.valid, true);
      assert.equal(unknownBranch.bank?.national_code, 'SBIN');
      assert.equal(unknownBranch.branch, null);
    });

    it('finds the bank of a CLABE by its first 3 digits and of a NUBAN by the CBN bank code given', async () => {
      const first17 = '01218000012345678';
      const clabe = await validate({ code_type: 'clabe', code: `${first17}${clabeControlDigit(first17)}` });
      assert.equal(clabe.valid, true);
      assert.equal(clabe.country, 'MX');
      assert.equal(clabe.bank?.name, 'BBVA México');
      assert.equal(clabe.branch, null);
      const nuban = await validate({ code_type: 'nuban', code: '0000014579', bank_code: '011' });
      assert.equal(nuban.valid, true);
      assert.equal(nuban.bank?.name, 'First Bank of Nigeria');
      const serial = '123456789';
      const unknownBank = await validate({
        code_type: 'nuban',
        code: `${serial}${nubanCheckDigit('999', serial)}`,
        bank_code: '999',
      });
      assert.equal(unknownBank.valid, true);
      assert.equal(unknownBank.bank, null);
    });

    it('answers an invalid code with 200, valid false, its reason, and no look-up', async () => {
      const cases: [Record<string, unknown>, string, string | null][] = [
        [{ code_type: 'iban', code: 'DE89370400440532013001' }, 'checksum', 'DE'],
        [{ code_type: 'iban', code: 'DE8937040044053201300' }, 'length', 'DE'],
        [{ code_type: 'iban', code: 'DE89370400440532013000', country: 'FR' }, 'country', 'DE'],
        [{ code_type: 'bic', code: 'C0BADEFF' }, 'format', null],
        [{ code_type: 'aba', code: '021000022' }, 'checksum', 'US'],
        [{ code_type: 'sort_code', code: '60-16-1' }, 'length', 'GB'],
        [{ code_type: 'ifsc', code: 'SBIN1001707' }, 'format', 'IN'],
        [{ code_type: 'clabe', code: '032180000118359718' }, 'checksum', 'MX'],
        [{ code_type: 'nuban', code: '0000014578', bank_code: '011' }, 'checksum', 'NG'],
      ];
      for (const [body, reason, country] of cases) {
        const result = await validate(body);
        assert.equal(result.valid, false, JSON.stringify(body));
        assert.equal(result.reason, reason, JSON.stringify(body));
        assert.equal(result.country, country, JSON.stringify(body));
        assert.equal(result.bank, null);
        assert.equal(result.branch, null);
      }
    });

    it('refuses a request it cannot judge with 422 naming the field', async () => {
      const post = (body: unknown) => api.post('/api/v1/banks/validate', body);
      expectError(
        await post({ code_type: 'nuban', code: '0000014579' }),
        422,
        'VALIDATION_FAILED',
        'bank_code',
      );
      expectError(
        await post({ code_type: 'iban', code: 'DE89370400440532013000', bank_code: '011' }),
        422,
        'VALIDATION_FAILED',
        'bank_code',
      );
      expectError(
        await post({ code_type: 'nuban', code: '0000014579', bank_code: '11' }),
        422,
        'VALIDATION_FAILED',
        'bank_code',
      );
      expectError(await post({ code_type: 'swift', code: 'X' }), 422, 'VALIDATION_FAILED', 'code_type');
      expectError(await post({ code_type: 'iban' }), 422, 'VALIDATION_FAILED', 'code');
      expectError(await post({ code_type: 'iban', code: '' }), 422, 'VALIDATION_FAILED', 'code');
      expectError(await post({ code_type: 'iban', code: 'x'.repeat(65) }), 422, 'VALIDATION_FAILED', 'code');
      expectError(
        await post({ code_type: 'iban', code: 'DE89370400440532013000', country: 'de' }),
        422,
        'VALIDATION_FAILED',
        'country',
      );
      expectError(
        await post({ code_type: 'bic', code: 'NWBKGB2L', extra: 1 }),
        422,
        'VALIDATION_FAILED',
        'extra',
      );
    });
  });

  describe('banks search and read', () => {
    it('filters by country, and pages with the true total', async () => {
      const all = await searchBanks({ filters: { country: ['DE'] }, sort_by: 'id', sort_direction: 'asc' });
      assert.deepEqual(all.items.map((bank) => bank.name).sort(), [
        'Berliner Sparkasse',
        'Commerzbank',
        'Deutsche Bank',
      ]);
      assert.equal(all.total, 3);
      assert.deepEqual(
        all.items.map((bank) => bank.id),
        all.items.map((bank) => bank.id).toSorted(),
      );
      const second = await searchBanks({
        filters: { country: ['DE'] },
        sort_by: 'id',
        sort_direction: 'asc',
        page: 2,
        page_size: 2,
      });
      assert.deepEqual(
        second.items.map((bank) => bank.id),
        [all.items[2]!.id],
      );
      assert.equal(second.total, 3);
      assert.equal(second.page, 2);
      assert.equal(second.page_size, 2);
      const past = await searchBanks({ filters: { country: ['DE'] }, page: 9, page_size: 2 });
      assert.deepEqual(past.items, []);
      assert.equal(past.total, 3);
      const descending = await searchBanks({ filters: { country: ['DE'] } });
      assert.deepEqual(
        descending.items.map((bank) => bank.id),
        all.items.map((bank) => bank.id).toReversed(),
      );
    });

    it('filters by bic (a BIC11 by its first 8), national_code_type and national_code (as stored)', async () => {
      const byBic = await searchBanks({ filters: { bic: ['cobadeffxxx', 'NWBKGB2L'] } });
      assert.deepEqual(byBic.items.map((bank) => bank.bic).sort(), ['COBADEFF', 'NWBKGB2L']);
      const nuban = await searchBanks({ filters: { national_code_type: ['nuban'] } });
      assert.equal(nuban.total, 5);
      assert.ok(nuban.items.every((bank) => bank.country === 'NG'));
      const byCode = await searchBanks({ filters: { national_code: ['20041', ' 2100 '] } });
      assert.deepEqual(byCode.items.map((bank) => bank.name).sort(), ['CaixaBank', 'La Banque Postale']);
      const combined = await searchBanks({
        filters: { country: ['FR'], national_code_type: ['fr_bank'], national_code: ['30004', '2100'] },
      });
      assert.deepEqual(
        combined.items.map((bank) => bank.name),
        ['BNP Paribas'],
      );
    });

    it('matches free text against the name or the BIC, case-insensitively, as a substring', async () => {
      const santander = await searchBanks({ search: 'SANTANDER' });
      assert.deepEqual(santander.items.map((bank) => bank.name).sort(), [
        'Banco Santander',
        'Banco Santander México',
      ]);
      const bic = await searchBanks({ search: 'psstfr' });
      assert.deepEqual(
        bic.items.map((bank) => bank.name),
        ['La Banque Postale'],
      );
      const pattern = await searchBanks({ search: '100%_' });
      assert.equal(pattern.total, 0, 'LIKE wildcards in the text match themselves');
    });

    it('reads a bank by id; a malformed or unknown id is 404', async () => {
      const [bank] = (await searchBanks({ filters: { bic: ['DEUTDEFF'] } })).items;
      const response = await api.get(`/api/v1/banks/${bank!.id}`);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), bank);
      expectError(await api.get('/api/v1/banks/bnk_00000000000000000000000000'), 404, 'NOT_FOUND');
      expectError(await api.get('/api/v1/banks/123'), 404, 'NOT_FOUND');
      expectError(await api.get(`/api/v1/banks/${bank!.id.replace('bnk_', 'brn_')}`), 404, 'NOT_FOUND');
    });

    it('refuses a malformed search with 422 naming the field (D4)', async () => {
      const post = (body: unknown) => api.post('/api/v1/banks/search', body);
      expectError(await post({ filters: { country: 'DE' } }), 422, 'VALIDATION_FAILED', 'filters.country');
      expectError(await post({ filters: { country: [] } }), 422, 'VALIDATION_FAILED', 'filters.country');
      expectError(await post({ filters: { name: ['x'] } }), 422, 'VALIDATION_FAILED', 'filters.name');
      expectError(
        await post({ filters: { national_code_type: ['iban'] } }),
        422,
        'VALIDATION_FAILED',
        'filters.national_code_type[0]',
      );
      expectError(await post({ sort_by: 'name' }), 422, 'VALIDATION_FAILED', 'sort_by');
      expectError(await post({ page_size: 101 }), 422, 'VALIDATION_FAILED', 'page_size');
      const empty = await api.request('POST', '/api/v1/banks/search');
      assert.equal(empty.statusCode, 200);
      assert.equal((empty.json() as PageJson<BankJson>).page_size, 20);
    });
  });

  describe('branches search and read', () => {
    it('filters by bank_id, country, city (any case), code_type and code (hyphens and spaces ignored)', async () => {
      const boa = (await searchBanks({ filters: { bic: ['BOFAUS3N'] } })).items[0]!;
      const ofBoa = await searchBranches({ filters: { bank_id: [boa.id] } });
      assert.deepEqual(ofBoa.items.map((branch) => branch.code).sort(), ['026009593', '121000358']);
      const newYork = await searchBranches({ filters: { country: ['US'], city: ['new york'] } });
      assert.deepEqual(newYork.items.map((branch) => branch.code).sort(), [
        '021000021',
        '021000089',
        '026009593',
      ]);
      const sortCodes = await searchBranches({ filters: { code_type: ['sort_code'] } });
      assert.equal(sortCodes.total, 3);
      const byCode = await searchBranches({ filters: { code: ['60-16-13', 'sbin 0001707'] } });
      assert.deepEqual(byCode.items.map((branch) => branch.code).sort(), ['601613', 'SBIN0001707']);
      const none = await searchBranches({ filters: { bank_id: ['bnk_nothing'] } });
      assert.equal(none.total, 0);
    });

    it('matches free text against the name, the city or the code', async () => {
      const byCity = await searchBranches({ search: 'mumbai' });
      assert.deepEqual(byCity.items.map((branch) => branch.code).sort(), ['HSBC0400002', 'SBIN0000353']);
      const byName = await searchBranches({ search: 'parliament' });
      assert.deepEqual(
        byName.items.map((branch) => branch.code),
        ['SBIN0001707'],
      );
      const byCode = await searchBranches({ search: '0400002' });
      assert.deepEqual(
        byCode.items.map((branch) => branch.code),
        ['HSBC0400002'],
      );
      const many = await searchBranches({ search: 'new york', page_size: 1 });
      assert.equal(many.total, 3);
      assert.equal(many.items.length, 1);
      // The separator between the three in the stored text matches nothing, so no match spans two of them.
      assert.equal((await searchBranches({ search: 'mumbai\u001fhsbc0400002' })).total, 0);
      assert.equal((await searchBranches({ search: '\u001f' })).total, 0);
    });

    it('reads a branch by id; a malformed or unknown id is 404', async () => {
      const [branch] = (await searchBranches({ filters: { code: ['HSBC0400002'] } })).items;
      const response = await api.get(`/api/v1/bank-branches/${branch!.id}`);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), branch);
      assert.equal(branch!.address, '52/60 M G Road, Mumbai 400001');
      expectError(await api.get('/api/v1/bank-branches/brn_00000000000000000000000000'), 404, 'NOT_FOUND');
      expectError(await api.get('/api/v1/bank-branches/x'), 404, 'NOT_FOUND');
    });

    it('refuses an unknown filter or code_type with 422', async () => {
      const post = (body: unknown) => api.post('/api/v1/bank-branches/search', body);
      expectError(await post({ filters: { name: ['x'] } }), 422, 'VALIDATION_FAILED', 'filters.name');
      expectError(
        await post({ filters: { code_type: ['clabe'] } }),
        422,
        'VALIDATION_FAILED',
        'filters.code_type[0]',
      );
      expectError(await post({ filters: { city: 'Berlin' } }), 422, 'VALIDATION_FAILED', 'filters.city');
    });
  });

  describe('OpenAPI', () => {
    it('documents every bank endpoint with its tag, security, body and responses', async () => {
      const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
        paths: Record<
          string,
          Record<
            string,
            {
              tags?: string[];
              security?: unknown[];
              requestBody?: { content: Record<string, unknown> };
              responses: Record<string, unknown>;
            }
          >
        >;
      };
      for (const [method, path, body] of [
        ['post', '/api/v1/banks/search', true],
        ['post', '/api/v1/banks/validate', true],
        ['get', '/api/v1/banks/{bank_id}', false],
        ['post', '/api/v1/bank-branches/search', true],
        ['get', '/api/v1/bank-branches/{branch_id}', false],
      ] as const) {
        const operation = document.paths[path]?.[method];
        assert.ok(operation, `${method} ${path}`);
        assert.deepEqual(operation.tags, ['banks']);
        assert.deepEqual(operation.security, [{ bearer: [] }]);
        assert.equal(operation.requestBody !== undefined, body, `${method} ${path} body`);
        assert.ok(operation.responses['200'] && operation.responses['401'] && operation.responses['403']);
      }
      const importOperation = document.paths['/admin/v1/banks/import']?.post;
      assert.deepEqual(Object.keys(importOperation?.requestBody?.content ?? {}), ['text/csv']);
    });
  });

  describe('access', () => {
    it('needs a token (401) and the reference:read scope (403)', async () => {
      const anonymous = await t.app.inject({ method: 'POST', url: '/api/v1/banks/search', payload: {} });
      assert.equal(anonymous.statusCode, 401);
      assert.deepEqual(anonymous.json(), { message: 'Unauthorized' });
      const webhooksOnly = client(t, await t.tenant(['webhooks:read']));
      for (const [method, url] of [
        ['POST', '/api/v1/banks/search'],
        ['POST', '/api/v1/banks/validate'],
        ['POST', '/api/v1/bank-branches/search'],
        ['GET', '/api/v1/banks/bnk_00000000000000000000000000'],
        ['GET', '/api/v1/bank-branches/brn_00000000000000000000000000'],
      ] as const) {
        const response = await webhooksOnly.request(method, url, method === 'POST' ? {} : undefined);
        expectError(response, 403, 'AUTHORIZATION_FAILED');
      }
    });
  });
});
