// /openapi.json as a client generator reads it: a valid OpenAPI 3.1 document in which every operation has
// an operationId, the resources are named component schemas and every example is valid against its schema;
// openapi-typescript turns it into types, a client program written against them passes tsc and runs against
// the app, and a program with mistakes fails tsc with exactly those errors.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generateTypes, structuralProblems } from '@payment-service/openapi-typegen';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.ts';
import { apiClient } from '../helpers/http.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const SCHEMAS = '#/components/schemas/';

interface Media {
  schema: { $ref?: string };
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { examples?: unknown[] }> };
}

/** tsc on one project of the client directory: its exit code and its error lines. */
async function typeCheck(dir: string, project: string): Promise<{ code: number; errors: string[] }> {
  const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
  const result = await run(tsc, ['-p', project, '--pretty', 'false'], { cwd: dir }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  const errors = result.stdout.split('\n').filter((line) => /^\S+\(\d+,\d+\): error TS\d+/.test(line));
  return { code: result.code, errors };
}

describe('a TypeScript client generated from /openapi.json', () => {
  let t: TestApp;
  let tenant: Tenant;
  let baseUrl: string;
  let document: Document;
  let dir: string;
  before(async () => {
    t = await startTestApp();
    tenant = await t.tenant();
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    document = response.json() as Document;

    dir = mkdtempSync(path.join(tmpdir(), 'client-types-'));
    writeFileSync(path.join(dir, 'api.ts'), await generateTypes(document));
    for (const file of ['typed-fetch.ts', 'client.ts', 'client-wrong.ts'])
      copyFileSync(path.join(FIXTURES, file), path.join(dir, file));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const compilerOptions = {
      target: 'es2024',
      module: 'nodenext',
      lib: ['es2024'],
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      verbatimModuleSyntax: true,
      erasableSyntaxOnly: true,
    };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
    writeFileSync(
      path.join(dir, 'tsconfig.wrong.json'),
      JSON.stringify({ compilerOptions, files: ['client-wrong.ts'] }),
    );
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([url, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ label: `${method} ${url}`, operation })),
    );

  it('is a valid OpenAPI 3.1 document', async () => {
    assert.equal((document as { openapi?: string }).openapi, '3.1.0');
    assert.deepEqual(await structuralProblems(document), []);
  });

  it('gives every operation a unique camelCase operationId, one tag and a summary', () => {
    const ids = operations().map(({ label, operation }) => {
      assert.match(operation.operationId ?? '', /^[a-z][a-zA-Z0-9]+$/, label);
      assert.equal(operation.tags?.length, 1, label);
      assert.ok(operation.summary, label);
      return operation.operationId;
    });
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    assert.equal(
      document.paths['/api/v1/transfers/quotes/{quote_id}/confirm']?.post?.operationId,
      'confirmQuote',
    );
    assert.equal(
      document.paths['/admin/v1/corridors/{corridor_id}']?.patch?.operationId,
      'adminUpdateCorridor',
    );
  });

  it('lists the resources as named component schemas that the operations reference', () => {
    const names = Object.keys(document.components.schemas);
    for (const name of [
      'Transfer',
      'TransferPage',
      'TransferSearchRequest',
      'Quote',
      'CreateQuoteRequest',
      'ConfirmQuoteRequest',
      'Beneficiary',
      'CreateBeneficiaryRequest',
      'Payout',
      'PayoutDestination',
      'Deposit',
      'DepositInstructions',
      'Balance',
      'BalanceTransaction',
      'Bank',
      'Branch',
      'Corridor',
      'FxRate',
      'Screening',
      'CryptoDepositAddress',
      'Subscription',
      'Event',
      'TokenRequest',
      'TokenResponse',
      'Error',
    ])
      assert.ok(names.includes(name), name);
    assert.deepEqual(
      names.filter((name) => !/^[A-Z][A-Za-z]+$/.test(name)),
      [],
      'named by $id, never def-N',
    );

    const json = (media: Media | undefined) => media?.schema;
    const confirm = document.paths['/api/v1/transfers/quotes/{quote_id}/confirm']!.post!;
    assert.deepEqual(json(confirm.requestBody?.content['application/json']), {
      $ref: `${SCHEMAS}ConfirmQuoteRequest`,
    });
    assert.deepEqual(json(confirm.responses['201']?.content?.['application/json']), {
      $ref: `${SCHEMAS}Transfer`,
    });
    assert.deepEqual(json(confirm.responses['422']?.content?.['application/json']), {
      $ref: `${SCHEMAS}Error`,
    });
    const search = document.paths['/api/v1/transfers/search']!.post!;
    assert.deepEqual(json(search.responses['200']?.content?.['application/json']), {
      $ref: `${SCHEMAS}TransferPage`,
    });
    assert.deepEqual(
      (document.components.schemas.Transfer as { properties: { payout: unknown } }).properties.payout,
      {
        anyOf: [{ $ref: `${SCHEMAS}Payout` }, { type: 'null' }],
      },
    );

    // Every reference in the document names a component that exists.
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(refs.length > 200, `${refs.length} references`);
    assert.deepEqual(
      refs.filter((ref) => !ref.startsWith(SCHEMAS) || !names.includes(ref.slice(SCHEMAS.length))),
      [],
    );
  });

  it('carries examples that are valid against their schemas, on the bodies of the payment operations', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...document, $id: 'openapi.json' });
    const pointer = (...parts: string[]) =>
      `openapi.json#/${parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
    const check = (ref: string, value: unknown, label: string) => {
      const validate = ajv.getSchema(ref)!;
      assert.ok(validate(value), `${label}: ${ajv.errorsText(validate.errors)}`);
    };

    let checked = 0;
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      for (const example of schema.examples ?? []) {
        check(pointer('components', 'schemas', name), example, name);
        checked++;
      }
    }
    for (const [url, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const bodies: [string[], { content?: Record<string, Media> } | undefined][] = [
          [['requestBody'], operation.requestBody],
          ...Object.entries(operation.responses).map(([status, response]): [string[], typeof response] => [
            ['responses', status],
            response,
          ]),
        ];
        for (const [where, body] of bodies) {
          for (const [type, media] of Object.entries(body?.content ?? {})) {
            const examples = [
              ...(media.example !== undefined ? [media.example] : []),
              ...Object.values(media.examples ?? {}).map((example) => example.value),
            ];
            for (const example of examples) {
              check(
                pointer('paths', url, method, ...where, 'content', type, 'schema'),
                example,
                `${method} ${url} ${where.join(' ')}`,
              );
              checked++;
            }
          }
        }
      }
    }
    assert.ok(checked > 300, `${checked} examples checked`);

    const example = (url: string, method: string, status?: string) => {
      const operation = document.paths[url]![method]!;
      const body = status ? operation.responses[status] : operation.requestBody;
      return body?.content?.['application/json']?.example as Record<string, unknown> | undefined;
    };
    for (const [url, method] of [
      ['/api/v1/transfers/quotes', 'post'],
      ['/api/v1/transfers/quotes/{quote_id}/confirm', 'post'],
      ['/api/v1/transfers/search', 'post'],
      ['/api/v1/beneficiaries', 'post'],
      ['/api/v1/payments/deposits', 'post'],
      ['/api/v1/payments/payouts', 'post'],
      ['/api/v1/sandbox/balances/top-up', 'post'],
    ] as const)
      assert.ok(example(url, method), `${method} ${url} request example`);
    assert.equal(example('/api/v1/transfers/{transfer_id}', 'get', '200')?.destination_amount, '911.27');
    assert.equal(example('/api/v1/transfers/quotes', 'post', '201')?.destination_amount, '911.27');
    assert.equal(example('/api/v1/payments/payouts', 'post', '201')?.id, 'pyt_01JD3V6M2Q8W1X4Y5Z6A7B8C9E');
    assert.equal(example('/api/v1/balances/transactions/search', 'post', '200')?.total, 1);
  });

  it('type-checks a client program against the generated types, and the program runs against the app', async () => {
    assert.deepEqual(await typeCheck(dir, 'tsconfig.json'), { code: 0, errors: [] });

    const { stdout } = await run(process.execPath, ['client.ts'], {
      cwd: dir,
      env: {
        ...process.env,
        API_URL: baseUrl,
        CLIENT_ID: tenant.clientId,
        CLIENT_SECRET: tenant.clientSecret,
      },
    });
    const summary = JSON.parse(stdout) as { transfer: { id: string }; search: unknown };
    const transfer = (await apiClient(t, tenant).get(`/api/v1/transfers/${summary.transfer.id}`)).json() as {
      quote_id: string;
    };
    assert.deepEqual(summary, {
      scope: t.deps.catalogue.scopes.join(' '),
      topped_up: '1001000.00', // a sandbox organisation starts with 1,000,000.00 USD
      beneficiary_status: 'active',
      iban: 'DE89370400440532013000',
      quote: { source_amount: '100.00', fee_amount: '1.50', rate: '0.91678' },
      transfer: {
        id: summary.transfer.id,
        quote_id: transfer.quote_id,
        status: 'processing',
        source_amount: '100.00',
        destination_amount: '90.30',
        destination_currency: 'EUR',
        reference: 'Invoice 42',
        deposit: null,
      },
      search: { total: 1, ids: [summary.transfer.id] },
    });
  });

  it('fails tsc on a program that misuses the API, with one error per mistake', async () => {
    const expected = readFileSync(path.join(FIXTURES, 'client-wrong.ts'), 'utf8')
      .split('\n')
      .flatMap((line, index) => {
        const mark = /\/\/ (TS\d+)$/.exec(line);
        return mark ? [`client-wrong.ts(${index + 1}): ${mark[1]}`] : [];
      });
    assert.equal(expected.length, 5);
    const { code, errors } = await typeCheck(dir, 'tsconfig.wrong.json');
    assert.equal(code, 1);
    assert.deepEqual(
      errors.map((line) => line.replace(/^(\S+)\((\d+),\d+\): error (TS\d+).*$/, '$1($2): $3')),
      expected,
      errors.join('\n'),
    );
  });
});
