// The compliance officer's queue (D18, D23): GET /admin/v1/screenings/pending lists the screenings of every
// organisation waiting for review, oldest first, each as the client's GET shows it plus its organisation;
// decided and hitless screenings stay out, a review takes one out; `limit`, `organisation_id`, the cap of
// 500, the 422s of bad query values and the 401 without the operator's key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newPublicId } from '../../src/platform/ids.ts';
import { bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { admin, importFixtures, SCREENINGS, type ScreeningJson } from './fixtures.ts';

const PENDING = '/admin/v1/screenings/pending';
const REVIEW = (id: string) => `/admin/v1/screenings/${id}/review`;

type PendingJson = ScreeningJson & { organisation_id: string };

describe('GET /admin/v1/screenings/pending', () => {
  let t: TestApp;
  let a: ApiClient;
  let b: ApiClient;
  before(async () => {
    t = await startTestApp();
    await importFixtures(t);
    a = apiClient(t, await t.tenant());
    b = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  const create = async (as: ApiClient, body: Record<string, unknown>): Promise<ScreeningJson> => {
    const response = await as.post(SCREENINGS, body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as ScreeningJson;
  };
  /** The screening as its own organisation's GET answers it, plus that organisation: one queue item. */
  const item = async (as: ApiClient, id: string): Promise<PendingJson> => {
    const response = await as.get(`${SCREENINGS}/${id}`);
    assert.equal(response.statusCode, 200, response.body);
    return { ...(response.json() as ScreeningJson), organisation_id: as.tenant.organisationId };
  };
  const pending = async (query = ''): Promise<PendingJson[]> => {
    const response = await admin(t, 'GET', `${PENDING}${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as PendingJson[];
  };
  const review = async (id: string, decision: 'cleared' | 'confirmed_match') => {
    const response = await admin(t, 'POST', REVIEW(id), { decision, note: 'Checked the passport' });
    assert.equal(response.statusCode, 200, response.body);
  };

  /** The queue's items in order, as built by the first test. */
  let queue: PendingJson[] = [];

  it("lists both organisations' potential matches oldest first, each as its GET shows it plus organisation_id", async () => {
    const first = await create(a, { entity_type: 'individual', name: 'Ivan Petrow', external_id: 'kyc-a1' });
    await create(b, { entity_type: 'organisation', name: 'Acme Widgets Limited' });
    const beneficiary = await createBeneficiary(b, bodyOf('DE', { name: 'Sanctioned Trader' }));
    const third = await create(a, { entity_type: 'individual', name: 'Ivan S. Petrov', country: 'RU' });
    const cleared = await create(b, { entity_type: 'individual', name: 'Ivan Petrow' });
    const confirmed = await create(a, { entity_type: 'individual', name: 'Ivan Petrow' });
    await review(cleared.id, 'cleared');
    await review(confirmed.id, 'confirmed_match');
    // Oldest by created_at, not by id: the last one created is made the oldest.
    const oldest = await create(b, { entity_type: 'individual', name: 'Lookalike Person' });
    await t.db.pool.query(
      "UPDATE sanctions_screenings SET created_at = created_at - interval '1 hour' WHERE id = $1",
      [oldest.id],
    );

    const response = await admin(t, 'GET', PENDING);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as PendingJson[];
    queue = [
      await item(b, oldest.id),
      await item(a, first.id),
      await item(b, beneficiary.screening_id),
      await item(a, third.id),
    ];
    assert.deepEqual(body, queue);
    assert.deepEqual(Object.keys(body[0]!), [
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
      'organisation_id',
    ]);
    assert.deepEqual(
      { ...body[1]!, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        entity_type: 'individual',
        name: 'Ivan Petrow',
        date_of_birth: null,
        country: null,
        match_status: 'potential_match',
        hits: first.hits,
        threshold: '0.85',
        lists_version: 'ofac-sdn:1,opensanctions:1,sandbox:1',
        source_object_type: null,
        source_object_id: null,
        external_id: 'kyc-a1',
        reviewed_at: null,
        review_note: null,
        created_at: undefined,
        updated_at: undefined,
        organisation_id: a.tenant.organisationId,
      },
    );
    assert.ok(first.hits.length > 0);
    // What waits on a screening: the beneficiary held in review.
    assert.equal(body[2]!.source_object_type, 'beneficiary');
    assert.equal(body[2]!.source_object_id, beneficiary.id);
    assert.equal(beneficiary.status, 'in_review');
    // Reading the queue changes nothing, so it is not an operator action (D23): its request has an access
    // line and no operator_action line.
    const requestId = (
      JSON.parse(t.logs.lines.findLast((line) => line.includes(`"url":"${PENDING}"`))!) as {
        request_id: string;
      }
    ).request_id;
    assert.deepEqual(
      t.logs.lines.filter((line) => line.includes(requestId) && line.includes('"operator_action"')),
      [],
    );
  });

  it('takes a screening out once it is reviewed', async () => {
    const [reviewed, ...rest] = queue;
    await review(reviewed!.id, 'cleared');
    assert.deepEqual(await pending(), rest);
    queue = rest;
  });

  it('answers at most `limit`, the oldest, and only one organisation with `organisation_id`', async () => {
    assert.deepEqual(await pending('?limit=2'), queue.slice(0, 2));
    assert.deepEqual(await pending('?limit=1'), queue.slice(0, 1));
    assert.deepEqual(await pending('?limit=500'), queue);
    assert.deepEqual(
      await pending(`?organisation_id=${a.tenant.organisationId}`),
      queue.filter((entry) => entry.organisation_id === a.tenant.organisationId),
    );
    assert.deepEqual(
      await pending(`?organisation_id=${b.tenant.organisationId.toUpperCase()}&limit=1`),
      queue.filter((entry) => entry.organisation_id === b.tenant.organisationId).slice(0, 1),
    );
    const none = await t.tenant();
    assert.deepEqual(await pending(`?organisation_id=${none.organisationId}`), []);
    assert.deepEqual(await pending('?organisation_id=00000000-0000-4000-8000-000000000000'), []);
  });

  it('refuses bad query values with 422 in the error envelope, naming the field', async () => {
    const pattern = '"^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$"';
    const uuid = '"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"';
    const cases: [string, string, string][] = [
      ['?limit=0', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=501', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=-1', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=1.5', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=010', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=ten', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=', 'limit', `limit must match pattern ${pattern}`],
      ['?limit=1&limit=2', 'limit', 'limit must be of type string'],
      ['?organisation_id=acme', 'organisation_id', `organisation_id must match pattern ${uuid}`],
      [
        '?organisation_id=urn:uuid:0b0f6a3e-6f1c-4a53-9d4e-2f7c8a1b9c10',
        'organisation_id',
        `organisation_id must match pattern ${uuid}`,
      ],
      ['?status=potential_match', 'status', 'status is not a recognised field'],
    ];
    for (const [query, field, message] of cases) {
      const response = await admin(t, 'GET', `${PENDING}${query}`);
      assert.equal(response.statusCode, 422, `${query}: ${response.body}`);
      const body = errorBody(response.body);
      assert.deepEqual(
        { error: body.error, code: body.code, field: body.field },
        { error: message, code: 'VALIDATION_FAILED', field },
        query,
      );
      assert.match(body.error_id, /^err_[0-9A-Z]{26}$/);
    }
  });

  it("is 401 without the operator's key, with a wrong one, and with a client's token", async () => {
    const answers = [
      await t.app.inject({ method: 'GET', url: PENDING }),
      await t.app.inject({ method: 'GET', url: PENDING, headers: { authorization: 'Bearer wrong-key' } }),
      await t.app.inject({ method: 'GET', url: PENDING, headers: a.tenant.auth }),
      await t.app.inject({ method: 'GET', url: `${PENDING}?limit=0` }),
    ];
    for (const response of answers) {
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(errorBody(response.body).code, 'UNAUTHORIZED');
    }
  });

  it('answers at most 500 however many wait; a larger limit is 422', async () => {
    const template = queue[0]!;
    const ids = Array.from({ length: 501 }, () => newPublicId('scr'));
    // Newer than the queue so far: its items stay first.
    await t.db.pool.query(
      `INSERT INTO sanctions_screenings
         (id, organisation_id, entity_type, name, match_status, hits, threshold, lists_version, created_at)
       SELECT g.id, s.organisation_id, s.entity_type, s.name, s.match_status, s.hits, s.threshold,
              s.lists_version, now() + g.n * interval '1 millisecond'
       FROM sanctions_screenings s, unnest($2::text[]) WITH ORDINALITY AS g (id, n)
       WHERE s.id = $1`,
      [template.id, ids],
    );
    const all = await pending();
    assert.equal(all.length, 500);
    assert.deepEqual(all.slice(0, queue.length), queue);
    assert.deepEqual(
      all.slice(queue.length).map((entry) => entry.id),
      ids.slice(0, 500 - queue.length),
    );
    assert.deepEqual(await pending('?limit=500'), all);
    const over = await admin(t, 'GET', `${PENDING}?limit=501`);
    assert.equal(over.statusCode, 422, over.body);
    assert.equal(errorBody(over.body).field, 'limit');
  });
});
