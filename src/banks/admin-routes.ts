// Operator routes of the bank directory (D17, D23), under /admin/v1 behind ADMIN_API_KEY: the CSV import and
// the import of India's IFSC directory from the `ifsc` package. Each import is an operator action (D23),
// logged once with its actor and outcome, refusals included.
import { Type } from '@sinclair/typebox';
import { operatorTarget, registerOperatorRoutes } from '../admin/operator-log.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { AppError } from '../platform/errors.ts';
import { ErrorBody } from '../webhooks/api-schemas.ts';
import { IfscImportBody, type IfscImportInput, ImportResult } from './schemas.ts';
import * as service from './service.ts';

/**
 * The largest CSV file the import route takes. Razorpay's full IFSC release CSV (about 177,000 branches with
 * names and addresses) is about 40 MB. The file is read as a stream and its rows staged in PostgreSQL as they
 * are checked, so the process holds neither the file nor its rows (an import of 200,000 branches adds about
 * 80 MB to the process's peak).
 */
export const IMPORT_BODY_LIMIT_BYTES = 128 * 1024 * 1024;

const tags = ['operator'];
const importErrors = { 400: ErrorBody, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody };

export function registerBankAdminRoutes(admin: App, deps: AppDeps): void {
  registerOperatorRoutes(admin, (operator) => registerImportRoutes(operator, deps));
}

function registerImportRoutes(operator: App, deps: AppDeps): void {
  // A scope of its own: only this route takes text/csv, and its body is read as a stream (the import parses
  // it as it arrives, up to IMPORT_BODY_LIMIT_BYTES), never held whole.
  operator.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));
    scope.addContentTypeParser('*', (_request, _payload, done) =>
      done(
        new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the directory file with Content-Type: text/csv'),
        undefined,
      ),
    );
    scope.post(
      '/banks/import',
      {
        config: { operatorAction: 'banks.import' },
        preValidation: async (request) => {
          const declared = Number(request.headers['content-length'] ?? 0);
          if (declared > IMPORT_BODY_LIMIT_BYTES) {
            throw new AppError('PAYLOAD_TOO_LARGE', 'The directory file is larger than 128 MiB');
          }
          if (request.body === undefined) {
            throw new AppError(
              'BAD_REQUEST',
              'The request has no file: send the CSV file as the body with Content-Type: text/csv',
            );
          }
        },
        // The body is the request stream, not a value to validate: the schema documents it (OpenAPI).
        validatorCompiler: () => () => true,
        schema: {
          tags,
          operationId: 'adminImportBanks',
          summary: 'Import the bank directory from a CSV file (upsert)',
          description:
            'Body: the CSV file (Content-Type: text/csv, UTF-8, at most 128 MiB), columns as the operator guide ' +
            'lists them. Upserts banks (found again by national code, else BIC) and branches (by code, else BIC) ' +
            'in one transaction: importing the same file again changes nothing. A bad row refuses the whole file ' +
            '(422 naming `line[N].column`); nothing is imported then.',
          consumes: ['text/csv'],
          body: Type.String({ description: 'The CSV file.' }),
          response: { 200: ImportResult, ...importErrors },
        },
      },
      async (request) => {
        const result = await service.importCsv(deps, request.body as AsyncIterable<Buffer>, {
          maxBytes: IMPORT_BODY_LIMIT_BYTES,
        });
        operatorTarget(request, result);
        return result;
      },
    );
  });

  operator.post(
    '/banks/import/ifsc-package',
    {
      config: { operatorAction: 'banks.import_ifsc_package' },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
      schema: {
        tags,
        operationId: 'adminImportIfscPackage',
        summary: "Import India's IFSC directory from the bundled ifsc package (Razorpay)",
        description:
          'Loads every IFSC the `ifsc` package ships (about 177,000) as branches of their banks, or only those ' +
          'of `banks`. The package has no branch names, cities, addresses or BICs: those stay null (or as an ' +
          'earlier import set them). Upsert in one transaction, as the CSV import.',
        body: IfscImportBody,
        response: { 200: ImportResult, 422: ErrorBody },
      },
    },
    async (request) => {
      const banks = (request.body as IfscImportInput).banks;
      if (banks !== undefined) operatorTarget(request, { only_banks: banks });
      const result = await service.importIfscPackage(deps, banks);
      operatorTarget(request, result);
      return result;
    },
  );
}
