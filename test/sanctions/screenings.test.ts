// Screenings over HTTP (D18, D14, D24): create, read, search, their validation; screening.completed and
// screening.resolved; every review transition; the review hook other areas use; screen() inside another
// area's transaction; the sandbox magic names and review simulation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/pool.ts';
import type { Area, ReviewedScreening } from '../../src/platform/area.ts';
import { screen } from '../../src/sanctions/service.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { storedEnvelope } from '../helpers/event-payloads.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';
import { admin, importFixtures, SCREENINGS, type ScreeningJson } from './fixtures.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SANDBOX_REVIEW = (id: string) => `/api/v1/sandbox/screenings/${id}/review`;
const REVIEW = (id: string) => `/admin/v1/screenings/${id}/review`;

/** An area of the tests: records the reviews it is told of, and fails on a note that asks it to. */
const reviewed: ReviewedScreening[] = [];
const recordingArea: Area = {
  name: 'test-recorder',
  async onScreeningReviewed(tx, screening) {
    // Inside the review's transaction: the screening already shows its decision.
    const { rows } = await tx.query<{ match_status: string }>(
      'SELECT match_status FROM sanctions_screenings WHERE id = $1',
      [screening.id],
    );
    assert.equal(rows[0]!.match_status, screening.match_status);
    if (screening.review_note === 'hook fails') throw new Error('the waiting resource could not be moved');
    reviewed.push(screening);
  },
};

function expectError(
  response: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
): string {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code);
  assert.equal(body.field, field, `field of ${response.body}`);
  return body.error;
}

interface EventRow {
  event_type_code: string;
  payload: string;
  source_object_type: string;
  source_object_id: string;
  idempotency_key: string;
}

describe('screenings', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp({ extraAreas: [recordingArea] });
    await importFixtures(t);
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  const create = async (body: Record<string, unknown>, as = api): Promise<ScreeningJson> => {
    const response = await as.post(SCREENINGS, body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as ScreeningJson;
  };
  const potential = () => create({ entity_type: 'individual', name: 'Ivan Petrow' });

  describe('create', () => {
    it('answers 201 with a potential match, its hits, threshold and list versions', async () => {
      const response = await api.post(SCREENINGS, {
        entity_type: 'individual',
        name: 'Ivan S. Petrov',
        date_of_birth: '1965-03-12',
        country: 'RU',
        external_id: 'kyc-1',
      });
      assert.equal(response.statusCode, 201, response.body);
      const body = response.json() as ScreeningJson;
      assert.deepEqual(Object.keys(body), [
        'id',
        'entity_type',
        'name',
        'date_of_birth',
        'country',
        'match_status',
        'hits',
        'threshold',
        'lists_version',
        'source_object_type',
        'source_object_id',
        'external_id',
        'reviewed_at',
        'review_note',
        'created_at',
        'updated_at',
      ]);
      assert.match(body.id, /^scr_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.deepEqual(
        { ...body, id: undefined, created_at: undefined, updated_at: undefined },
        {
          id: undefined,
          entity_type: 'individual',
          name: 'Ivan S. Petrov',
          date_of_birth: '1965-03-12',
          country: 'RU',
          match_status: 'potential_match',
          hits: [
            {
              list: 'ofac-sdn',
              entry_id: '1001',
              matched_name: 'PETROV, Ivan Sergeyevich',
              score: '0.98',
              entity_type: 'individual',
              programs: ['RUSSIA-EO14024'],
              countries: ['RU'],
            },
          ],
          threshold: '0.85',
          lists_version: 'ofac-sdn:1,opensanctions:1,sandbox:1',
          source_object_type: null,
          source_object_id: null,
          external_id: 'kyc-1',
          reviewed_at: null,
          review_note: null,
          created_at: undefined,
          updated_at: undefined,
        },
      );
      assert.match(body.created_at, ISO);
      assert.equal(body.created_at, body.updated_at);
    });

    it('matches a listed name written with an invisible character inside a word', async () => {
      const body = await create({ entity_type: 'individual', name: 'Ivan Sergeyevich Pet\u00ADrov' });
      assert.equal(body.match_status, 'potential_match');
      assert.equal(body.hits[0]?.score, '1.00');
    });

    it('matches a listed name whose words are separated by a control character that separates text', async () => {
      for (const name of ['Ivan\u0085Sergeyevich\u0085Petrov', 'Ivan\u001fSergeyevich\u001fPetrov']) {
        const body = await create({ entity_type: 'individual', name });
        assert.equal(body.match_status, 'potential_match', JSON.stringify(name));
        assert.equal(body.hits[0]?.score, '1.00');
      }
    });

    it('answers no_match with no hits for an unrelated name', async () => {
      const body = await create({ entity_type: 'organisation', name: 'Acme Widgets Limited' });
      assert.equal(body.match_status, 'no_match');
      assert.deepEqual(body.hits, []);
      assert.equal(body.date_of_birth, null);
      assert.equal(body.country, null);
      assert.equal(body.external_id, null);
    });

    it('uses SANCTIONS_MATCH_THRESHOLD', async () => {
      const strict = await startTestApp({ db: t.db, env: { SANCTIONS_MATCH_THRESHOLD: '0.97' } });
      try {
        const strictApi = apiClient(strict, await strict.tenant());
        const response = await strictApi.post(SCREENINGS, { entity_type: 'individual', name: 'Ivan Petrow' });
        const body = response.json() as ScreeningJson;
        assert.equal(body.threshold, '0.97');
        assert.equal(body.match_status, 'no_match');
      } finally {
        await strict.app.close();
      }
    });

    it('refuses invalid input with 422 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 'Ivan Petrov' }, 'entity_type'],
        [{ entity_type: 'person', name: 'Ivan Petrov' }, 'entity_type'],
        [{ entity_type: 'individual' }, 'name'],
        [{ entity_type: 'individual', name: '' }, 'name'],
        [{ entity_type: 'individual', name: '?!.' }, 'name'],
        [{ entity_type: 'individual', name: 'x'.repeat(301) }, 'name'],
        [{ entity_type: 'individual', name: 'Ivan', date_of_birth: '12.03.1965' }, 'date_of_birth'],
        [{ entity_type: 'individual', name: 'Ivan', date_of_birth: '1965-02-30' }, 'date_of_birth'],
        [{ entity_type: 'individual', name: 'Ivan', date_of_birth: '2999-01-01' }, 'date_of_birth'],
        [{ entity_type: 'organisation', name: 'Acme', date_of_birth: '1965-03-12' }, 'date_of_birth'],
        [{ entity_type: 'individual', name: 'Ivan', country: 'ru' }, 'country'],
        [{ entity_type: 'individual', name: 'Ivan', country: 'UK' }, 'country'],
        [{ entity_type: 'individual', name: 'Ivan', external_id: '' }, 'external_id'],
        [{ entity_type: 'individual', name: 'Ivan', external_id: 'x'.repeat(129) }, 'external_id'],
        [{ entity_type: 'individual', name: 'Ivan', nickname: 'x' }, 'nickname'],
      ];
      for (const [body, field] of cases) {
        expectError(await api.post(SCREENINGS, body), 422, 'VALIDATION_FAILED', field);
      }
    });

    it('refuses a second external_id of the organisation with 409; another organisation may use it', async () => {
      await create({ entity_type: 'individual', name: 'John Smith', external_id: 'dup-1' });
      expectError(
        await api.post(SCREENINGS, { entity_type: 'individual', name: 'Jane Smith', external_id: 'dup-1' }),
        409,
        'CONFLICT',
      );
      const other = apiClient(t, await t.tenant());
      await create({ entity_type: 'individual', name: 'John Smith', external_id: 'dup-1' }, other);
    });

    it('needs sanctions:write to create and sanctions:read to read', async () => {
      const reader = apiClient(t, await t.tenant(['sanctions:read']));
      expectError(
        await reader.post(SCREENINGS, { entity_type: 'individual', name: 'X' }),
        403,
        'AUTHORIZATION_FAILED',
      );
      const writer = apiClient(t, await t.tenant(['sanctions:write']));
      const made = await create({ entity_type: 'individual', name: 'X' }, writer);
      expectError(await writer.get(`${SCREENINGS}/${made.id}`), 403, 'AUTHORIZATION_FAILED');
    });
  });

  describe('read and search', () => {
    it('GET answers the screening as created; another organisation and malformed ids get 404', async () => {
      const made = await potential();
      const response = await api.get(`${SCREENINGS}/${made.id}`);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), made);
      const other = apiClient(t, await t.tenant());
      expectError(await other.get(`${SCREENINGS}/${made.id}`), 404, 'NOT_FOUND');
      expectError(await api.get(`${SCREENINGS}/scr_nope`), 404, 'NOT_FOUND');
      expectError(await api.get(`${SCREENINGS}/scr_01JD3V6M2Q8W1X4Y5Z6A7B8C9D`), 404, 'NOT_FOUND');
    });

    it('filters, searches names and pages (D4), within the organisation only', async () => {
      const own = apiClient(t, await t.tenant());
      const a = await create({ entity_type: 'individual', name: 'Ivan Petrow', external_id: 's-a' }, own);
      const b = await create({ entity_type: 'organisation', name: 'Acme Widgets', external_id: 's-b' }, own);
      const c = await create({ entity_type: 'individual', name: 'Ocean Blue' }, own);
      const search = async (body: unknown) => {
        const response = await own.post(`${SCREENINGS}/search`, body);
        assert.equal(response.statusCode, 200, response.body);
        return response.json() as { items: ScreeningJson[]; total: number; page: number; page_size: number };
      };
      const ids = (page: { items: ScreeningJson[] }) => page.items.map((item) => item.id);
      assert.deepEqual(ids(await search({})), [c.id, b.id, a.id]);
      assert.deepEqual(ids(await search({ sort_direction: 'asc' })), [a.id, b.id, c.id]);
      assert.deepEqual(ids(await search({ filters: { match_status: ['potential_match'] } })), [a.id]);
      assert.deepEqual(ids(await search({ filters: { entity_type: ['organisation'] } })), [b.id]);
      assert.deepEqual(ids(await search({ filters: { external_id: ['s-a', 's-b'] } })), [b.id, a.id]);
      assert.deepEqual(ids(await search({ search: 'OCEAN' })), [c.id]);
      assert.deepEqual(ids(await search({ filters: { source_object_type: ['beneficiary'] } })), []);
      const paged = await search({ page: 2, page_size: 2, sort_by: 'created_at' });
      assert.deepEqual({ ...paged, items: ids(paged) }, { items: [a.id], total: 3, page: 2, page_size: 2 });
      const empty = await own.post(`${SCREENINGS}/search`);
      assert.equal(empty.statusCode, 200);
      expectError(
        await own.post(`${SCREENINGS}/search`, { filters: { status: ['x'] } }),
        422,
        'VALIDATION_FAILED',
        'filters.status',
      );
      expectError(
        await own.post(`${SCREENINGS}/search`, { filters: { match_status: 'no_match' } }),
        422,
        'VALIDATION_FAILED',
        'filters.match_status',
      );
      expectError(
        await own.post(`${SCREENINGS}/search`, { sort_by: 'name' }),
        422,
        'VALIDATION_FAILED',
        'sort_by',
      );
    });
  });

  describe('events', () => {
    it('publishes screening.completed at create and screening.resolved at review, as D8 and D14 shape them', async () => {
      const tenant = await t.tenant();
      const own = apiClient(t, tenant);
      await activeSubscription(client(t, tenant), {
        event_type_codes: ['screening.completed', 'screening.resolved'],
      });
      const made = await create({ entity_type: 'individual', name: 'Ivan Petrow' }, own);
      const review = await admin(t, 'POST', REVIEW(made.id), {
        decision: 'cleared',
        note: 'Different person',
      });
      assert.equal(review.statusCode, 200, review.body);
      const { rows } = await t.db.pool.query<EventRow>(
        `SELECT event_type_code, payload, source_object_type, source_object_id, idempotency_key
         FROM webhook_events WHERE organisation_id = $1 ORDER BY id`,
        [tenant.organisationId],
      );
      assert.deepEqual(
        rows.map((row) => [
          row.event_type_code,
          row.source_object_type,
          row.source_object_id,
          row.idempotency_key,
        ]),
        [
          ['screening.completed', 'screening', made.id, `${made.id}:completed`],
          ['screening.resolved', 'screening', made.id, `${made.id}:resolved`],
        ],
      );
      const completed = storedEnvelope(t.deps, rows[0]!.payload);
      assert.equal(completed.type, 'screening.completed');
      assert.deepEqual(completed.data, { object: made, previous_status: null });
      const resolved = storedEnvelope(t.deps, rows[1]!.payload);
      assert.deepEqual(resolved.data, { object: review.json(), previous_status: 'potential_match' });
    });
  });

  describe('review', () => {
    it('potential_match -> confirmed_match: 200 with the decision, note and reviewed_at; the hook is told', async () => {
      const made = await potential();
      const response = await admin(t, 'POST', REVIEW(made.id), {
        decision: 'confirmed_match',
        note: 'Same DOB',
      });
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json() as ScreeningJson;
      assert.equal(body.match_status, 'confirmed_match');
      assert.equal(body.review_note, 'Same DOB');
      assert.match(body.reviewed_at!, ISO);
      assert.equal(body.updated_at, body.reviewed_at);
      assert.deepEqual(body.hits, made.hits);
      assert.deepEqual((await api.get(`${SCREENINGS}/${made.id}`)).json(), body);
      assert.deepEqual(reviewed.at(-1), { ...body, organisation_id: api.tenant.organisationId });
    });

    it('potential_match -> cleared', async () => {
      const made = await potential();
      const response = await admin(t, 'POST', REVIEW(made.id), { decision: 'cleared', note: 'Other person' });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal((response.json() as ScreeningJson).match_status, 'cleared');
      assert.equal(reviewed.at(-1)!.id, made.id);
      assert.equal(reviewed.at(-1)!.match_status, 'cleared');
    });

    it('only from potential_match: 400 INVALID_STATE naming the status, and nothing changes', async () => {
      const made = await potential();
      await admin(t, 'POST', REVIEW(made.id), { decision: 'cleared', note: 'ok' });
      const count = reviewed.length;
      for (const decision of ['confirmed_match', 'cleared']) {
        const message = expectError(
          await admin(t, 'POST', REVIEW(made.id), { decision, note: 'again' }),
          400,
          'INVALID_STATE',
        );
        assert.equal(message, 'The screening is cleared; only a potential_match can be reviewed');
      }
      // Logged as operator actions with actor and outcome, the refused ones too (D23).
      const logged = t.logs.lines
        .filter((line) => line.includes('"operator_action":"sanctions.review"') && line.includes(made.id))
        .map(
          (line) => JSON.parse(line) as { decision: string; outcome: string; actor: { credential: string } },
        )
        .map((entry) => [entry.decision, entry.outcome, entry.actor.credential]);
      assert.deepEqual(logged, [
        ['cleared', 'succeeded', 'ADMIN_API_KEY'],
        ['confirmed_match', 'refused', 'ADMIN_API_KEY'],
        ['cleared', 'refused', 'ADMIN_API_KEY'],
      ]);
      const none = await create({ entity_type: 'individual', name: 'John Smith' });
      assert.match(
        expectError(
          await admin(t, 'POST', REVIEW(none.id), { decision: 'cleared', note: 'x' }),
          400,
          'INVALID_STATE',
        ),
        /The screening is no_match/,
      );
      assert.equal(reviewed.length, count);
      assert.equal(((await api.get(`${SCREENINGS}/${made.id}`)).json() as ScreeningJson).review_note, 'ok');
    });

    it('refuses a bad body (422) and an unknown screening (404)', async () => {
      const made = await potential();
      expectError(
        await admin(t, 'POST', REVIEW(made.id), { decision: 'no_match', note: 'x' }),
        422,
        'VALIDATION_FAILED',
        'decision',
      );
      expectError(
        await admin(t, 'POST', REVIEW(made.id), { decision: 'cleared' }),
        422,
        'VALIDATION_FAILED',
        'note',
      );
      for (const note of ['', '   ', '\n\t']) {
        expectError(
          await admin(t, 'POST', REVIEW(made.id), { decision: 'cleared', note }),
          422,
          'VALIDATION_FAILED',
          'note',
        );
      }
      expectError(
        await admin(t, 'POST', REVIEW('scr_01JD3V6M2Q8W1X4Y5Z6A7B8C9D'), { decision: 'cleared', note: 'x' }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await admin(t, 'POST', REVIEW('nope'), { decision: 'cleared', note: 'x' }),
        404,
        'NOT_FOUND',
      );
    });

    it('a failing hook rolls the review back: still potential_match, no screening.resolved', async () => {
      const made = await potential();
      const response = await admin(t, 'POST', REVIEW(made.id), { decision: 'cleared', note: 'hook fails' });
      assert.equal(response.statusCode, 500);
      const after = (await api.get(`${SCREENINGS}/${made.id}`)).json() as ScreeningJson;
      assert.equal(after.match_status, 'potential_match');
      assert.equal(after.review_note, null);
      const { rows } = await t.db.pool.query(
        "SELECT 1 FROM webhook_events WHERE source_object_id = $1 AND event_type_code = 'screening.resolved'",
        [made.id],
      );
      assert.equal(rows.length, 0);
    });

    it('a client cannot review through the public API', async () => {
      const made = await potential();
      const response = await api.post(`${SCREENINGS}/${made.id}/review`, {
        decision: 'cleared',
        note: 'mine',
      });
      assert.equal(response.statusCode, 404);
    });
  });

  describe('screen() for other areas', () => {
    it("records the source and publishes with the caller's transaction, and rolls back with it", async () => {
      const organisationId = api.tenant.organisationId;
      const input = { entity_type: 'individual' as const, name: 'Ivan Petrow' };
      const made = await withTransaction(t.deps.pool, (tx) =>
        screen(tx, t.deps, organisationId, input, {
          type: 'beneficiary',
          id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
        }),
      );
      assert.equal(made.source_object_type, 'beneficiary');
      assert.equal(made.source_object_id, 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9D');
      assert.equal(made.match_status, 'potential_match');
      const found = await api.post(`${SCREENINGS}/search`, {
        filters: {
          source_object_type: ['beneficiary'],
          source_object_id: ['ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9D'],
        },
      });
      assert.deepEqual((found.json() as { items: ScreeningJson[] }).items, [made]);

      let rolledBack: string | undefined;
      await assert.rejects(
        withTransaction(t.deps.pool, async (tx) => {
          rolledBack = (await screen(tx, t.deps, organisationId, input, { type: 'transfer', id: 'trf_x' }))
            .id;
          throw new Error('the transfer could not be confirmed');
        }),
      );
      expectError(await api.get(`${SCREENINGS}/${rolledBack}`), 404, 'NOT_FOUND');
    });
  });
});

describe('sandbox magic names (D24)', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp();
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  const screenName = async (name: string, entityType = 'individual') => {
    const response = await api.post(SCREENINGS, { entity_type: entityType, name });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as ScreeningJson;
  };
  const summary = (screening: ScreeningJson) =>
    screening.hits.map((hit) => `${hit.list} ${hit.entry_id} ${hit.score} ${hit.matched_name}`);

  it('a name containing "Sanctioned" hits the sandbox list at 1.00', async () => {
    assert.deepEqual(summary(await screenName('Peter Sanctioned')), [
      'sandbox SBX-0001 1.00 SANCTIONED, Sandbox Person',
    ]);
    assert.deepEqual(summary(await screenName('unsanctioned imports gmbh', 'organisation')), [
      'sandbox SBX-0002 1.00 SANCTIONED SANDBOX TRADING LTD',
    ]);
  });

  it('a name containing "Lookalike" hits at 0.90', async () => {
    const screening = await screenName('Lisa Lookalike');
    assert.equal(screening.match_status, 'potential_match');
    assert.deepEqual(summary(screening), ['sandbox SBX-0003 0.90 LOOKALIKE, Sandbox Person']);
  });

  it('the fictional entries match as any list does; other names do not hit', async () => {
    assert.deepEqual(summary(await screenName('Zebulon Quarington')), [
      'sandbox SBX-0005 0.90 QUARRINGTON, Zebulon Ambrose',
    ]);
    assert.deepEqual(summary(await screenName('Jane Doe')), []);
  });

  it('the review simulation moves a potential match as the operator would, for the own organisation only', async () => {
    const screening = await screenName('Sanctioned Sam');
    const other = apiClient(t, await t.tenant());
    expectError(await other.post(SANDBOX_REVIEW(screening.id), { decision: 'cleared' }), 404, 'NOT_FOUND');
    const response = await api.post(SANDBOX_REVIEW(screening.id), { decision: 'confirmed_match' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as ScreeningJson;
    assert.equal(body.match_status, 'confirmed_match');
    assert.equal(body.review_note, 'Sandbox review');
    expectError(await api.post(SANDBOX_REVIEW(screening.id), { decision: 'cleared' }), 400, 'INVALID_STATE');
  });

  it('seeding the sandbox list again changes nothing', async () => {
    const again = await startTestApp({ db: t.db });
    await again.app.close();
    const { rows } = await t.db.pool.query<{ version: number; entries: number }>(
      "SELECT version, (SELECT count(*)::int FROM sanctions_entries WHERE list_code = 'sandbox') AS entries FROM sanctions_lists WHERE code = 'sandbox'",
    );
    assert.deepEqual(rows, [{ version: 1, entries: 8 }]);
  });

  it('production has no sandbox list, no magic and no review simulation', async () => {
    const production = await startTestApp({ env: { APP_ENV: 'production', AUTH_REALM: 'sandbox' } });
    try {
      const prodApi = apiClient(production, await production.tenant());
      const response = await prodApi.post(SCREENINGS, {
        entity_type: 'individual',
        name: 'Peter Sanctioned',
      });
      assert.equal(response.statusCode, 201, response.body);
      const screening = response.json() as ScreeningJson;
      assert.equal(screening.match_status, 'no_match');
      assert.equal(screening.lists_version, '');
      const simulated = await prodApi.post(SANDBOX_REVIEW(screening.id), { decision: 'cleared' });
      assert.equal(simulated.statusCode, 404);
    } finally {
      await production.close();
    }
  });
});
