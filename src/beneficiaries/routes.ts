// HTTP of beneficiaries (D19): requirements, create, read, update, delete and search under
// /api/v1/beneficiaries. Each route maps to one service call.
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, errorResponses } from '../webhooks/api-schemas.ts';
import {
  Beneficiary,
  BeneficiaryIdParams,
  BeneficiaryPage,
  BeneficiarySearchBody,
  type BeneficiarySearchInput,
  CreateBeneficiaryBody,
  type CreateBeneficiaryInput,
  Requirements,
  RequirementsQuery,
  UpdateBeneficiaryBody,
  type UpdateBeneficiaryInput,
} from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/beneficiaries';
const security = [{ bearer: [] }];
const read = { scope: PAYMENT_SCOPES.beneficiariesRead };
const write = { scope: PAYMENT_SCOPES.beneficiariesWrite };
const tags = ['beneficiaries'];

export function registerBeneficiaryRoutes(app: App, deps: AppDeps): void {
  app.get(
    `${BASE}/requirements`,
    {
      config: read,
      schema: {
        tags,
        operationId: 'getBeneficiaryRequirements',
        summary: 'The fields a beneficiary of a destination needs',
        description:
          'One field set per destination country and payout method (D19): the common fields (entity_type, ' +
          'name, address, date_of_birth, email) and the account fields, each with its rule. Create and update ' +
          'check exactly these rules. 404 when no active corridor serves the combination.',
        security,
        querystring: RequirementsQuery,
        response: { 200: Requirements, ...errorResponses(404, 422) },
      },
    },
    async (request) => service.getRequirements(deps, request.query),
  );

  app.post(
    BASE,
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        operationId: 'createBeneficiary',
        summary: 'Create a beneficiary',
        description:
          "The fields of the destination's requirements plus destination_country, destination_currency, " +
          'payout_method and external_id. A field that breaks its rule (check digits, the country of an IBAN or ' +
          'BIC) is 422 naming it (`account.iban`). The name is screened: no hit -> `active`, a hit -> ' +
          "`in_review` until the operator's review. Publishes `beneficiary.created`, then " +
          '`beneficiary.activated` or `beneficiary.in_review`. 409 for an external_id already used.',
        security,
        body: CreateBeneficiaryBody,
        response: { 201: Beneficiary, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(
          await service.createBeneficiary(
            deps,
            request.principal!.organisationId,
            request.body as CreateBeneficiaryInput,
          ),
        ),
  );

  app.post(
    `${BASE}/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags,
        operationId: 'searchBeneficiaries',
        summary: 'Search beneficiaries',
        description:
          'Filters `status`, `destination_country`, `destination_currency`, `payout_method`, `entity_type`, ' +
          '`external_id`; `search` matches a substring of the name (case-insensitive); sort by id, created_at ' +
          'or updated_at (D4). Deleted beneficiaries appear only when the status filter names `deleted`.',
        security,
        body: BeneficiarySearchBody,
        response: { 200: BeneficiaryPage, ...errorResponses(422) },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(
          await service.searchBeneficiaries(
            deps,
            request.principal!.organisationId,
            request.body as BeneficiarySearchInput,
          ),
        ),
  );

  app.get(
    `${BASE}/:beneficiary_id`,
    {
      config: read,
      schema: {
        tags,
        operationId: 'getBeneficiary',
        summary: 'Read a beneficiary',
        description: 'With its account in full. Deleted beneficiaries stay readable by id.',
        security,
        params: BeneficiaryIdParams,
        response: { 200: Beneficiary, ...errorResponses(404) },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(
          await service.getBeneficiary(
            deps,
            request.principal!.organisationId,
            request.params.beneficiary_id,
          ),
        ),
  );

  app.patch(
    `${BASE}/:beneficiary_id`,
    {
      config: write,
      schema: {
        tags,
        operationId: 'updateBeneficiary',
        summary: 'Update a beneficiary',
        description:
          'Any of name, address (replaced as a whole), email, date_of_birth (null removes them) and account ' +
          '(replaced as a whole): the result is checked again against the field set. A new name is screened ' +
          'again: a hit moves the beneficiary to `in_review`. Publishes `beneficiary.updated` (and the new ' +
          "status's event). A blocked or deleted beneficiary: 400 INVALID_STATE.",
        security,
        params: BeneficiaryIdParams,
        body: UpdateBeneficiaryBody,
        response: { 200: Beneficiary, ...errorResponses(400, 404, 422) },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(
          await service.updateBeneficiary(
            deps,
            request.principal!.organisationId,
            request.params.beneficiary_id,
            request.body as UpdateBeneficiaryInput,
          ),
        ),
  );

  app.delete(
    `${BASE}/:beneficiary_id`,
    {
      config: write,
      schema: {
        tags,
        operationId: 'deleteBeneficiary',
        summary: 'Delete a beneficiary',
        description:
          'Answers 200 with the beneficiary in status `deleted` and its deleted_at; repeatable (a second ' +
          'delete answers the same and publishes nothing). Transfers already confirmed go on (D19).',
        security,
        params: BeneficiaryIdParams,
        response: { 200: Beneficiary, ...errorResponses(404) },
      },
    },
    async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(
          await service.deleteBeneficiary(
            deps,
            request.principal!.organisationId,
            request.params.beneficiary_id,
          ),
        ),
  );
}
