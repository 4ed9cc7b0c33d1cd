// HTTP of the bank directory (D17): each route maps to one service call. Scope reference:read (D14).
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, errorResponses } from '../webhooks/api-schemas.ts';
import {
  Bank,
  BankIdParams,
  BankPage,
  BankSearchBody,
  type BankSearchInput,
  Branch,
  BranchIdParams,
  BranchPage,
  BranchSearchBody,
  type BranchSearchInput,
  ValidateBody,
  type ValidateInput,
  ValidateResult,
} from './schemas.ts';
import * as service from './service.ts';

const security = [{ bearer: [] }];
const read = { scope: PAYMENT_SCOPES.referenceRead };
const tags = ['banks'];

export function registerBankRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/banks/search',
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags,
        operationId: 'searchBanks',
        summary: 'Search banks',
        description:
          'Filters `country`, `bic` (BIC8, or a BIC11 compared by its first 8 characters), `national_code_type`, ' +
          '`national_code`; `search` is a case-insensitive substring of the name or the BIC; sort by id, ' +
          'created_at or updated_at (D4, D17).',
        security,
        body: BankSearchBody,
        response: { 200: BankPage, ...errorResponses(422) },
      },
    },
    async (request) => service.searchBanks(deps, request.body as BankSearchInput),
  );

  app.post(
    '/api/v1/banks/validate',
    {
      config: read,
      schema: {
        tags,
        operationId: 'validateBankCode',
        summary: 'Validate a bank or account code and look it up in the directory',
        description:
          'Judges an IBAN, BIC, ABA routing number, UK sort code, IFSC, CLABE or NUBAN by its own rules and ' +
          'answers 200 with `valid` and, when invalid, the first `reason` (format, length, checksum, country): an ' +
          'invalid code is not an error. A valid code is looked up in the directory: `bank` and `branch` are ' +
          'filled when the directory knows it, null otherwise (still valid). `bank_code` is required with nuban ' +
          'and refused with the other types (422).',
        security,
        body: ValidateBody,
        response: { 200: ValidateResult, ...errorResponses(422) },
      },
    },
    async (request) => service.validate(deps, request.body as ValidateInput),
  );

  app.get(
    '/api/v1/banks/:bank_id',
    {
      config: read,
      schema: {
        tags,
        operationId: 'getBank',
        summary: 'Read a bank',
        security,
        params: BankIdParams,
        response: { 200: Bank, ...errorResponses(404) },
      },
    },
    async (request) => service.getBank(deps, request.params.bank_id),
  );

  app.post(
    '/api/v1/bank-branches/search',
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags,
        operationId: 'searchBankBranches',
        summary: 'Search bank branches',
        description:
          'Filters `bank_id`, `country`, `city` (exact, any case), `code_type`, `code` (spaces and hyphens ' +
          'ignored: 60-16-13 = 601613); `search` is a case-insensitive substring of the name, the city or the ' +
          'code (3 characters or more use the trigram indexes); sort by id, created_at or updated_at (D4, D17).',
        security,
        body: BranchSearchBody,
        response: { 200: BranchPage, ...errorResponses(422) },
      },
    },
    async (request) => service.searchBranches(deps, request.body as BranchSearchInput),
  );

  app.get(
    '/api/v1/bank-branches/:branch_id',
    {
      config: read,
      schema: {
        tags,
        operationId: 'getBankBranch',
        summary: 'Read a bank branch',
        security,
        params: BranchIdParams,
        response: { 200: Branch, ...errorResponses(404) },
      },
    },
    async (request) => service.getBranch(deps, request.params.branch_id),
  );
}
