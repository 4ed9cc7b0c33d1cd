// HTTP of sanctions screening (D18, D23, D24): public routes under /api/v1/sanctions, the operator's
// import and review under /admin/v1, and the sandbox's review simulation. Each maps to one service call.
import { Type } from '@sinclair/typebox';
import { operatorTarget, registerOperatorRoutes } from '../admin/operator-log.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { AppError, sendError } from '../platform/errors.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, ErrorBody, errorResponses } from '../webhooks/api-schemas.ts';
import * as lists from './lists-service.ts';
import {
  CreateScreeningBody,
  type CreateScreeningInput,
  ImportListBody,
  type ImportListInput,
  ListCodeParams,
  PENDING_SCREENINGS_MAX,
  PendingScreening,
  PendingScreeningsQuery,
  type PendingScreeningsQueryInput,
  ReviewBody,
  type ReviewInput,
  SanctionsList,
  SandboxReviewBody,
  type SandboxReviewInput,
  Screening,
  ScreeningIdParams,
  ScreeningPage,
  ScreeningSearchBody,
  type ScreeningSearchInput,
} from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/sanctions';
const security = [{ bearer: [] }];
const read = { scope: PAYMENT_SCOPES.sanctionsRead };
const write = { scope: PAYMENT_SCOPES.sanctionsWrite };
const tags = ['sanctions'];

export function registerSanctionsRoutes(app: App, deps: AppDeps): void {
  app.get(
    `${BASE}/lists`,
    {
      config: read,
      schema: {
        tags,
        operationId: 'listSanctionsLists',
        summary: 'The sanctions lists screenings are matched against',
        description: 'Sorted by code. `version` goes up by one with every import of a list (D18).',
        security,
        response: { 200: Type.Array(SanctionsList), ...errorResponses() },
      },
    },
    async () => lists.listLists(deps),
  );

  app.post(
    `${BASE}/screenings`,
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        operationId: 'createScreening',
        summary: 'Screen a name against the sanctions lists',
        description:
          'Answers 201 with the screening: `no_match`, or `potential_match` with its hits (entries scoring at ' +
          'least `threshold`, best first, at most 10). Publishes `screening.completed`. Only the operator ' +
          'reviews a potential match. 409 for an external_id the organisation already used.',
        security,
        body: CreateScreeningBody,
        response: { 201: Screening, ...errorResponses(409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await service.createScreening(
            deps,
            request.principal!.organisationId,
            request.body as CreateScreeningInput,
          ),
        ),
  );

  app.post(
    `${BASE}/screenings/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags,
        operationId: 'searchScreenings',
        summary: 'Search screenings',
        description:
          'Filters `match_status`, `entity_type`, `source_object_type`, `source_object_id`, `external_id`; ' +
          '`search` matches a substring of the name (case-insensitive); sort by id, created_at or updated_at (D4).',
        security,
        body: ScreeningSearchBody,
        response: { 200: ScreeningPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      service.searchScreenings(deps, request.principal!.organisationId, request.body as ScreeningSearchInput),
  );

  app.get(
    `${BASE}/screenings/:screening_id`,
    {
      config: read,
      schema: {
        tags,
        operationId: 'getScreening',
        summary: 'Read a screening',
        security,
        params: ScreeningIdParams,
        response: { 200: Screening, ...errorResponses(404) },
      },
    },
    async (request) =>
      service.getScreening(deps, request.principal!.organisationId, request.params.screening_id),
  );
}

export function registerSanctionsAdminRoutes(admin: App, deps: AppDeps): void {
  const limit = deps.config.sanctionsImportMaxBytes;
  // Operator actions (D23): each is logged once with its actor and outcome, refusals included.
  registerOperatorRoutes(admin, (scope) => {
    scope.post(
      '/sanctions/lists/:code/import',
      {
        config: { operatorAction: 'sanctions.import' },
        bodyLimit: limit,
        // The platform's message names the 1 MiB limit of every other route.
        errorHandler: (error, request, reply) =>
          sendError(
            request,
            reply,
            (error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE'
              ? new AppError(
                  'PAYLOAD_TOO_LARGE',
                  `The import is larger than SANCTIONS_IMPORT_MAX_MB (${limit / 1024 / 1024} MiB)`,
                )
              : error,
          ),
        schema: {
          tags: ['operator'],
          operationId: 'adminImportSanctionsList',
          summary: 'Import a sanctions list (replaces it, next version)',
          description:
            "The files in the publisher's own format, as text: `ofac-sdn-csv` takes sdn.csv, alt.csv and " +
            'add.csv, and sdn_comments.csv when given (the rest of each Remarks longer than sdn.csv holds, read ' +
            'for dates of birth and nationalities); `opensanctions-csv` takes targets.simple.csv. The list is ' +
            'replaced in one transaction and its version goes up by one; a file that cannot be read is 422 ' +
            'naming the file (`files.sdn.csv`) and the line, and the list stays as it was. Body up to ' +
            'SANCTIONS_IMPORT_MAX_MB.',
          params: ListCodeParams,
          body: ImportListBody,
          response: { 200: SanctionsList, 413: ErrorBody, 422: ErrorBody },
        },
      },
      async (request) => {
        const { code } = request.params as { code: string };
        operatorTarget(request, { list: code });
        const imported = await lists.importList(deps, code, request.body as ImportListInput);
        operatorTarget(request, { version: imported.version, entries: imported.entries });
        return imported;
      },
    );

    // Reading the queue is not an action: it changes nothing, so it is not logged as one.
    scope.get(
      '/screenings/pending',
      {
        schema: {
          tags: ['operator'],
          operationId: 'adminListPendingScreenings',
          summary: `Screenings waiting for review (potential_match), oldest first (at most ${PENDING_SCREENINGS_MAX})`,
          description:
            'The compliance queue of every organisation: each screening as GET /api/v1/sanctions/screenings/{id} ' +
            'shows it, plus its `organisation_id`. `source_object_type` and `source_object_id` name what waits ' +
            'on it (a beneficiary in review, a held transfer; null for a direct screening). A reviewed screening ' +
            "leaves the queue. `limit` 1..500 (default 500); `organisation_id` keeps one organisation's.",
          querystring: PendingScreeningsQuery,
          response: { 200: Type.Array(PendingScreening), 401: ErrorBody, 422: ErrorBody },
        },
      },
      async (request) => {
        const query = request.query as PendingScreeningsQueryInput;
        return service.pendingScreenings(deps, {
          limit: Number(query.limit ?? PENDING_SCREENINGS_MAX),
          ...(query.organisation_id !== undefined ? { organisationId: query.organisation_id } : {}),
        });
      },
    );

    scope.post(
      '/screenings/:screening_id/review',
      {
        config: { operatorAction: 'sanctions.review' },
        schema: {
          tags: ['operator'],
          operationId: 'adminReviewScreening',
          summary: 'Review a potential match',
          description:
            'Only from `potential_match` (else 400 INVALID_STATE). Records the decision and note, publishes ' +
            '`screening.resolved`, and moves what waits on the screening (beneficiaries, transfers).',
          params: ScreeningIdParams,
          body: ReviewBody,
          response: { 200: Screening, 400: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        },
      },
      async (request) => {
        const { screening_id: id } = request.params as { screening_id: string };
        const body = request.body as ReviewInput;
        operatorTarget(request, { screening_id: id, decision: body.decision });
        return service.reviewScreening(deps, id, body);
      },
    );
  });
}

export function registerSanctionsSandboxRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/sandbox/screenings/:screening_id/review',
    {
      config: { ...write, idempotent: true },
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxReviewScreening',
        summary: "Simulate the operator's review of a potential match (sandbox only)",
        description:
          "As POST /admin/v1/screenings/{id}/review does it, for a screening of the caller's organisation: " +
          'only from `potential_match` (else 400 INVALID_STATE), publishes `screening.resolved`. `note` defaults ' +
          'to "Sandbox review".',
        security,
        params: ScreeningIdParams,
        body: SandboxReviewBody,
        response: { 200: Screening, ...errorResponses(400, 404, 422) },
      },
    },
    async (request) => {
      const body = request.body as SandboxReviewInput;
      return service.reviewScreening(
        deps,
        request.params.screening_id,
        { decision: body.decision, note: body.note ?? 'Sandbox review' },
        request.principal!.organisationId,
      );
    },
  );
}
