// docs/integrator/sandbox.md is the integrator's reference of the sandbox (D24). Its lists are compared with
// what the code seeds and serves: the seed constants, and a started sandbox app's own answers (corridors,
// banks, branches, opening balances, the simulation routes of its OpenAPI document). A seed or route that
// changes without the page fails here, and so does a row the code no longer has.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { SANDBOX_COLLECTION_ACCOUNTS } from '../../src/config.ts';
import { deriveAddress } from '../../src/crypto/derivation.ts';
import { SANDBOX_ACCOUNT_KEYS } from '../../src/crypto/keys.ts';
import { KEY_FAMILIES, NETWORK_CODES, NETWORKS } from '../../src/crypto/networks.ts';
import { SANDBOX_RATES, SANDBOX_RATES_AS_OF } from '../../src/fx/service.ts';
import { SANDBOX_PAYOUT_ENDINGS, sandboxOutcome } from '../../src/payments/connectors/sandbox.ts';
import {
  SANDBOX_ENTRIES,
  SANDBOX_LIST,
  SANDBOX_LIST_NAME,
  SANDBOX_MAGIC_NAMES,
} from '../../src/sanctions/sandbox.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';

const PAGE = readFileSync(new URL('../../docs/integrator/sandbox.md', import.meta.url), 'utf8');

/** The text under a `## ` or `### ` heading, up to the next heading. */
function section(heading: string): string {
  const lines = PAGE.split('\n');
  const start = lines.findIndex((line) => /^#{2,3} /.test(line) && line.replace(/^#+ /, '') === heading);
  assert.ok(start >= 0, `sandbox.md has a section "${heading}"`);
  const end = lines.findIndex((line, index) => index > start && /^#{1,3} /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

interface Table {
  headers: string[];
  /** Cells with their backticks removed, trimmed. */
  rows: string[][];
}

/** The Markdown tables of a section, in order. */
function tables(text: string): Table[] {
  const found: Table[] = [];
  let current: string[][] | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split('|')
      .map((cell) => cell.replaceAll('`', '').trim());
    if (cells.every((cell) => /^-+$/.test(cell))) continue;
    if (current === undefined) {
      current = [];
      found.push({ headers: cells, rows: current });
    } else current.push(cells);
  }
  return found;
}

function table(heading: string, index = 0): Table {
  const found = tables(section(heading))[index];
  assert.ok(found, `sandbox.md "${heading}" has table ${index}`);
  return found;
}

/** The named columns of every row, as one string per row, sorted: compare a table with the code's rows. */
function columns(from: Table, names: string[]): string[] {
  const positions = names.map((name) => {
    const position = from.headers.indexOf(name);
    assert.ok(position >= 0, `a column "${name}" in ${from.headers.join(', ')}`);
    return position;
  });
  return from.rows.map((row) => positions.map((position) => row[position] ?? '').join(' | ')).sort();
}

const rowsOf = (rows: string[][]): string[] => rows.map((row) => row.join(' | ')).sort();

interface ObjectSchema {
  $ref?: string;
  properties?: object;
  required?: string[];
}

interface OpenApiOperation {
  tags?: string[];
  requestBody?: { content: { 'application/json': { schema: ObjectSchema } } };
  responses: Record<string, unknown>;
}

describe('docs/integrator/sandbox.md lists everything the sandbox seeds and simulates', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp();
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  const search = async <T>(url: string): Promise<T[]> => {
    const response = await api.post(url, { page_size: 100 });
    assert.equal(response.statusCode, 200, response.body);
    const page = response.json() as { items: T[]; total: number };
    assert.equal(page.items.length, page.total, `${url} fits one page`);
    return page.items;
  };

  it('every seeded FX rate and its as_of', () => {
    assert.deepEqual(
      rowsOf(table('FX rates').rows),
      rowsOf(SANDBOX_RATES.map(([currency, rate]) => [currency, rate])),
    );
    assert.ok(section('FX rates').includes(SANDBOX_RATES_AS_OF.toISOString()));
  });

  it('every seeded corridor with its id, route, limits, fees and delivery estimate', async () => {
    const corridors = await search<Record<string, string | number>>('/api/v1/corridors/search');
    assert.equal(corridors.length, 13);
    assert.ok(corridors.every((corridor) => corridor.status === 'active'));
    const fields = [
      'id',
      'source_currency',
      'destination_country',
      'destination_currency',
      'payout_method',
      'min_amount',
      'max_amount',
      'fee_fixed',
      'fee_percent',
      'fx_markup_percent',
      'estimated_delivery_seconds',
    ];
    assert.deepEqual(
      columns(table('Corridors'), [
        'id',
        'From',
        'Country',
        'To',
        'Method',
        'min_amount',
        'max_amount',
        'fee_fixed',
        'fee_percent',
        'fx_markup_percent',
        'estimated_delivery_seconds',
      ]),
      rowsOf(corridors.map((corridor) => fields.map((field) => String(corridor[field])))),
    );
  });

  it('every bank of the directory and every branch, as the API shows them', async () => {
    interface Bank {
      id: string;
      country: string;
      name: string;
      bic: string | null;
      national_code_type: string | null;
      national_code: string | null;
    }
    interface Branch {
      bank_id: string;
      country: string;
      name: string | null;
      city: string | null;
      address: string | null;
      bic: string | null;
      code_type: string;
      code: string;
    }
    const banks = await search<Bank>('/api/v1/banks/search');
    const branches = await search<Branch>('/api/v1/bank-branches/search');
    assert.deepEqual(
      rowsOf(table('Banks').rows),
      rowsOf(
        banks.map((bank) => [
          bank.country,
          bank.name,
          bank.bic ?? '',
          bank.national_code === null ? '' : `${bank.national_code} (${bank.national_code_type})`,
        ]),
      ),
    );
    const bankName = new Map(banks.map((bank) => [bank.id, bank.name]));
    assert.deepEqual(
      rowsOf(table('Branches').rows),
      rowsOf(
        branches.map((branch) => [
          branch.country,
          bankName.get(branch.bank_id) ?? 'unknown bank',
          branch.name ?? '',
          branch.city ?? '',
          branch.address ?? '',
          `${branch.code} (${branch.code_type})`,
          branch.bic ?? '',
        ]),
      ),
    );
  });

  it("a new organisation's opening balances", async () => {
    const response = await api.get('/api/v1/balances');
    assert.equal(response.statusCode, 200, response.body);
    const balances = response.json() as { currency: string; available: string }[];
    assert.deepEqual(
      rowsOf(table('Balances').rows),
      rowsOf(balances.map((balance) => [balance.currency, balance.available])),
    );
  });

  it('every collection account of bank-transfer instructions', () => {
    assert.deepEqual(
      rowsOf(table('Collection accounts').rows),
      rowsOf(
        Object.entries(SANDBOX_COLLECTION_ACCOUNTS).map(([currency, account]) => [
          currency,
          account.account_holder,
          account.bank_name,
          account.bic,
          account.iban ?? '',
          account.account_number ?? '',
          account.routing_code ?? '',
        ]),
      ),
    );
  });

  it('the crypto account keys, their paths, first addresses and confirmations', () => {
    const keys = t.config.cryptoKeys;
    assert.deepEqual(
      columns(table('Crypto'), ['Path', 'Account key']),
      rowsOf(KEY_FAMILIES.map((family) => [keys[family]!.accountPath, SANDBOX_ACCOUNT_KEYS[family]])),
    );
    const text = section('Crypto');
    for (const family of KEY_FAMILIES) {
      const first = deriveAddress(keys[family]!, 0).address;
      assert.ok(text.includes(`\`${first}\``), `the first ${family} address ${first}`);
    }
    for (const code of NETWORK_CODES) {
      const confirmations = `${NETWORKS[code].defaultConfirmations} on \`${code}\``;
      assert.ok(text.replaceAll('\n', ' ').includes(confirmations), confirmations);
    }
  });

  it('every magic name with its score and hits, and every entry of the sandbox list', () => {
    const heading = 'Sanctions: the sandbox list and the magic names';
    assert.deepEqual(
      columns(table(heading), ['Word', 'Score', 'Hits (individual)', 'Hits (organisation / business)']).map(
        (row) => row.toLowerCase(),
      ),
      rowsOf(
        SANDBOX_MAGIC_NAMES.map((rule) => [
          rule.word,
          rule.score.toFixed(2),
          rule.entries.individual.toLowerCase(),
          rule.entries.organisation.toLowerCase(),
        ]),
      ),
    );
    assert.ok(section(heading).includes(`\`${SANDBOX_LIST}\` ("${SANDBOX_LIST_NAME}")`));
    const born = (range: string) => {
      const [from, to] = range.split('/');
      return from === to ? from! : `${from} to ${to}`;
    };
    assert.deepEqual(
      rowsOf(table(heading, 1).rows),
      rowsOf(
        SANDBOX_ENTRIES.map((entry) => [
          entry.entryId,
          entry.entityType,
          entry.name,
          entry.aliases.join('; '),
          entry.countries.join(', '),
          entry.birthDates.map(born).join(', '),
        ]),
      ),
    );
  });

  it('every magic account ending with its outcome, and example accounts that end in each', () => {
    const heading = 'Payouts: magic account endings';
    const outcomes = table(heading).rows;
    assert.deepEqual(
      outcomes.map((row) => row[0]).filter((ending) => ending !== 'anything else'),
      Object.keys(SANDBOX_PAYOUT_ENDINGS),
    );
    const word = { return: 'returned', hold: 'stays processing' } as Record<string, string>;
    for (const [ending, outcome] of Object.entries(SANDBOX_PAYOUT_ENDINGS)) {
      const row = outcomes.find((cells) => cells[0] === ending)!;
      assert.ok(row[1]!.includes(word[outcome] ?? outcome), `${ending}: ${row[1]} says ${outcome}`);
    }
    const examples = table(heading, 1);
    const endings = examples.headers.slice(1, -1).map((header) => header.slice(0, 4));
    assert.deepEqual(endings, Object.keys(SANDBOX_PAYOUT_ENDINGS));
    for (const row of examples.rows) {
      endings.forEach((ending, column) => {
        assert.equal(sandboxOutcome(row[column + 1]!), SANDBOX_PAYOUT_ENDINGS[ending], row[column + 1]);
      });
    }
  });

  it('every simulation route with its body and answer, as the OpenAPI document has them', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json() as {
      paths: Record<string, Record<string, OpenApiOperation>>;
      components: { schemas: Record<string, ObjectSchema> };
    };
    const paths = document.paths;
    // Request bodies are named components (`#/components/schemas/<name>`).
    const resolve = (schema: ObjectSchema | undefined) =>
      schema?.$ref ? document.components.schemas[schema.$ref.split('/').at(-1)!] : schema;
    const routes = Object.entries(paths)
      .filter(([path]) => path.startsWith('/api/v1/sandbox/'))
      .flatMap(([path, operations]) =>
        Object.entries(operations)
          .filter(([method]) => method !== 'parameters')
          .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
      );
    assert.ok(routes.length >= 11);
    const documented = table('Simulations');
    assert.deepEqual(documented.headers.slice(0, 4), ['Route', 'Body', 'Scope', 'Answers']);
    assert.deepEqual(documented.rows.map((row) => row[0]).sort(), routes.map(({ route }) => route).sort());

    for (const { route, operation } of routes) {
      assert.deepEqual(operation.tags, ['sandbox'], route);
      const [, body, , answers] = documented.rows.find((row) => row[0] === route)!;
      const schema = resolve(operation.requestBody?.content['application/json'].schema);
      const expectedBody = schema
        ? Object.keys(schema.properties ?? {})
            .map((name) => `${name}${schema.required?.includes(name) ? '' : '?'}`)
            .sort()
        : [];
      const documentedBody = [...body!.matchAll(/"(\w+)"(\?)?/g)].map(
        ([, name, optional]) => name + (optional ?? ''),
      );
      if (!schema) assert.equal(body, 'none', route);
      assert.deepEqual(documentedBody.sort(), expectedBody, `${route} body`);
      const success = Object.keys(operation.responses).filter((code) => code.startsWith('2'));
      assert.deepEqual([...new Set(answers!.match(/\b2\d\d\b/g))].sort(), success.sort(), `${route} answers`);
    }
  });
});
