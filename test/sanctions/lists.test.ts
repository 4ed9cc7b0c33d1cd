// Sanctions list imports over the operator API (D18, D23): each format, versions, atomic replacement, a
// malformed file refused with its line and the previous list kept, and the match index of every API process
// following the versions in PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPool } from '../../src/db/pool.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { apiClient } from '../helpers/http.ts';
import {
  admin,
  importList,
  LISTS,
  ofacFiles,
  ofacSpilloverFiles,
  openSanctionsText,
  SCREENINGS,
  type ScreeningJson,
} from './fixtures.ts';

interface ListJson {
  code: string;
  name: string;
  entries: number;
  aliases: number;
  version: number;
  imported_at: string;
}

describe('sanctions lists', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { SANCTIONS_IMPORT_MAX_MB: '1' } });
  });
  after(() => t.close());

  const lists = async (): Promise<ListJson[]> => {
    const api = apiClient(t, await t.tenant(['sanctions:read']));
    const response = await api.get(LISTS);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as ListJson[];
  };
  const screen = async (name: string, entityType = 'individual'): Promise<ScreeningJson> => {
    const api = apiClient(t, await t.tenant());
    const response = await api.post(SCREENINGS, { entity_type: entityType, name });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as ScreeningJson;
  };

  it('starts with the sandbox list only (sandbox)', async () => {
    assert.deepEqual(
      (await lists()).map(({ imported_at: _, ...list }) => list),
      [{ code: 'sandbox', name: 'Sandbox list (fictional entries)', entries: 8, aliases: 6, version: 1 }],
    );
  });

  it('imports OFAC SDN CSV: 200 with the list at version 1, listed, and matched at once', async () => {
    const response = await importList(t, 'ofac-sdn', { format: 'ofac-sdn-csv', files: ofacFiles() });
    assert.equal(response.statusCode, 200, response.body);
    const list = response.json() as ListJson;
    assert.deepEqual(Object.keys(list), ['code', 'name', 'entries', 'aliases', 'version', 'imported_at']);
    assert.deepEqual(
      { ...list, imported_at: undefined },
      {
        code: 'ofac-sdn',
        name: 'OFAC Specially Designated Nationals (SDN)',
        entries: 10,
        aliases: 8,
        version: 1,
        imported_at: undefined,
      },
    );
    assert.match(list.imported_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.deepEqual(
      (await lists()).map((entry) => entry.code),
      ['ofac-sdn', 'sandbox'],
    );
    const screening = await screen('Ivan Sergeyevich Petrov');
    assert.equal(screening.lists_version, 'ofac-sdn:1,sandbox:1');
    assert.deepEqual(
      screening.hits.map((hit) => [hit.list, hit.entry_id, hit.score]),
      [['ofac-sdn', '1001', '1.00']],
    );
  });

  it('imports OpenSanctions targets.simple.csv under a code and name of the operator', async () => {
    const response = await importList(t, 'eu-fsf', {
      format: 'opensanctions-csv',
      name: 'EU financial sanctions (OpenSanctions)',
      files: { 'targets.simple.csv': openSanctionsText() },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual((response.json() as ListJson).entries, 5);
    assert.deepEqual((response.json() as ListJson).aliases, 5);
    assert.equal((response.json() as ListJson).name, 'EU financial sanctions (OpenSanctions)');
    const screening = await screen('Dmitry Sokolov');
    assert.deepEqual(
      screening.hits.map((hit) => [hit.list, hit.entry_id, hit.matched_name, hit.score]),
      [['eu-fsf', 'NK-4Fk2qTzv9d3uXn', 'Dmitry Sokolov', '1.00']],
    );
  });

  it('replaces a list whole on re-import and bumps its version; the name stays unless given', async () => {
    const files = ofacFiles();
    // The same list without entry 1001 and its aliases and address.
    const without1001 = {
      'sdn.csv': files['sdn.csv'].split('\r\n').slice(1).join('\r\n'),
      'alt.csv': files['alt.csv'].split('\r\n').slice(2).join('\r\n'),
      'add.csv': files['add.csv'].split('\r\n').slice(1).join('\r\n'),
    };
    const response = await importList(t, 'ofac-sdn', { format: 'ofac-sdn-csv', files: without1001 });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      { ...(response.json() as ListJson), imported_at: undefined },
      {
        code: 'ofac-sdn',
        name: 'OFAC Specially Designated Nationals (SDN)',
        entries: 9,
        aliases: 6,
        version: 2,
        imported_at: undefined,
      },
    );
    const gone = await screen('Ivan Sergeyevich Petrov');
    assert.equal(gone.match_status, 'no_match');
    assert.equal(gone.lists_version, 'eu-fsf:1,ofac-sdn:2,sandbox:1');
    const { rows } = await t.db.pool.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM sanctions_entries WHERE list_code = 'ofac-sdn'",
    );
    assert.equal(rows[0]!.count, 9);

    const back = await importList(t, 'ofac-sdn', { format: 'ofac-sdn-csv', files });
    assert.equal((back.json() as ListJson).version, 3);
    assert.equal((await screen('Ivan Sergeyevich Petrov')).match_status, 'potential_match');
  });

  it('refuses a malformed file with the file and line named, and keeps the previous list and version', async () => {
    const files = ofacFiles();
    const broken = files['sdn.csv'].replace('1004,"OCEAN PEARL","vessel",', '1004,"OCEAN PEARL"');
    const response = await importList(t, 'ofac-sdn', {
      format: 'ofac-sdn-csv',
      files: { ...files, 'sdn.csv': broken },
    });
    assert.equal(response.statusCode, 422, response.body);
    const body = errorBody(response.body);
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.field, 'files.sdn.csv');
    assert.equal(body.error, 'sdn.csv line 4: expected 12 fields, found 10');
    const ofac = (await lists()).find((list) => list.code === 'ofac-sdn')!;
    assert.equal(ofac.version, 3);
    assert.equal(ofac.entries, 10);
    assert.equal((await screen('Ocean Pearl', 'organisation')).hits[0]?.entry_id, '1004');

    const openBroken = await importList(t, 'eu-fsf', {
      format: 'opensanctions-csv',
      files: { 'targets.simple.csv': `${openSanctionsText()}NK-x,Person\n` },
    });
    assert.equal(openBroken.statusCode, 422);
    assert.equal(errorBody(openBroken.body).field, 'files.targets.simple.csv');
    assert.equal(
      errorBody(openBroken.body).error,
      'targets.simple.csv line 8: expected 15 fields as in the header, found 2',
    );
    assert.equal((await lists()).find((list) => list.code === 'eu-fsf')!.version, 1);
    // Each import is logged as an operator action with its actor and outcome, refusals too (D23).
    const actions = t.logs.lines
      .filter((line) => line.includes('"operator_action":"sanctions.import"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map((entry) => [
        entry.list,
        entry.outcome,
        entry.status,
        entry.error_code,
        (entry.actor as { credential: string }).credential,
      ]);
    assert.deepEqual(actions.slice(-2), [
      ['ofac-sdn', 'refused', 422, 'VALIDATION_FAILED', 'ADMIN_API_KEY'],
      ['eu-fsf', 'refused', 422, 'VALIDATION_FAILED', 'ADMIN_API_KEY'],
    ]);
    assert.ok(
      actions.some(([list, outcome]) => list === 'ofac-sdn' && outcome === 'succeeded'),
      'a successful import is logged as succeeded',
    );
  });

  it('refuses missing or foreign files, an unknown format, a bad code and the sandbox code', async () => {
    const files = ofacFiles();
    const cases: [string, unknown, string][] = [
      [
        'ofac-sdn',
        { format: 'ofac-sdn-csv', files: { 'sdn.csv': files['sdn.csv'], 'alt.csv': '' } },
        'files.add.csv',
      ],
      ['ofac-sdn', { format: 'opensanctions-csv', files }, 'files.sdn.csv'],
      ['ofac-sdn', { format: 'ofac-xml', files }, 'format'],
      [
        'ofac-sdn',
        { format: 'ofac-sdn-csv', files: { ...files, 'cons_prim.csv': '' } },
        'files.cons_prim.csv',
      ],
      [
        'eu-fsf',
        {
          format: 'opensanctions-csv',
          files: { 'targets.simple.csv': openSanctionsText(), 'sdn_comments.csv': '' },
        },
        'files.sdn_comments.csv',
      ],
      ['OFAC', { format: 'ofac-sdn-csv', files }, 'code'],
      ['sandbox', { format: 'ofac-sdn-csv', files }, 'code'],
    ];
    for (const [code, body, field] of cases) {
      const response = await admin(t, 'POST', `/admin/v1/sanctions/lists/${code}/import`, body);
      assert.equal(response.statusCode, 422, `${field}: ${response.body}`);
      assert.equal(errorBody(response.body).field, field);
    }
  });

  it('accepts an import up to SANCTIONS_IMPORT_MAX_MB and refuses a larger one with 413', async () => {
    const files = ofacFiles();
    // About 1.2 MiB of remarks: over the 1 MiB this app allows.
    const padding = `,"${'x'.repeat(1_200_000)}"`;
    const big = files['sdn.csv'].replace(/,"DOB 12 Mar 1965;[^\r]*/, padding);
    const response = await importList(t, 'big', {
      format: 'ofac-sdn-csv',
      files: { ...files, 'sdn.csv': big },
    });
    assert.equal(response.statusCode, 413, response.body.slice(0, 300));
    assert.equal(errorBody(response.body).code, 'PAYLOAD_TOO_LARGE');
    assert.match(errorBody(response.body).error, /SANCTIONS_IMPORT_MAX_MB \(1 MiB\)/);
  });

  it('reads sdn_comments.csv when given: the entries get the dates of birth and nationalities there', async () => {
    const stored = async () =>
      (
        await t.db.pool.query<{ entry_id: string; birth_dates: string[]; countries: string[] }>(
          "SELECT entry_id, birth_dates, countries FROM sanctions_entries WHERE list_code = 'ofac-spillover' ORDER BY entry_id",
        )
      ).rows;
    const files = ofacSpilloverFiles();
    const response = await importList(t, 'ofac-spillover', { format: 'ofac-sdn-csv', files });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((response.json() as ListJson).entries, 3, "1199's comment record is left out");
    assert.deepEqual(await stored(), [
      { entry_id: '1101', birth_dates: ['1968-08-14/1968-08-14'], countries: ['LB'] },
      { entry_id: '1102', birth_dates: ['1971-09-03/1971-09-03'], countries: ['SY'] },
      { entry_id: '1103', birth_dates: [], countries: ['LB'] },
    ]);

    // Without it, the import is the three files' as before: the overflowed remarks are not there.
    const { 'sdn_comments.csv': _, ...three } = files;
    const without = await importList(t, 'ofac-spillover', { format: 'ofac-sdn-csv', files: three });
    assert.equal(without.statusCode, 200, without.body);
    assert.deepEqual(
      { ...(without.json() as ListJson), imported_at: undefined },
      {
        code: 'ofac-spillover',
        name: 'OFAC Specially Designated Nationals (SDN)',
        entries: 3,
        aliases: 2,
        version: 2,
        imported_at: undefined,
      },
    );
    assert.deepEqual(await stored(), [
      { entry_id: '1101', birth_dates: [], countries: [] },
      { entry_id: '1102', birth_dates: [], countries: [] },
      { entry_id: '1103', birth_dates: [], countries: ['LB'] },
    ]);
  });

  it('refuses a malformed sdn_comments.csv with the file and line named, and keeps the list', async () => {
    const files = ofacSpilloverFiles();
    const response = await importList(t, 'ofac-spillover', {
      format: 'ofac-sdn-csv',
      files: { ...files, 'sdn_comments.csv': `${files['sdn_comments.csv']}1103\r\n` },
    });
    assert.equal(response.statusCode, 422, response.body);
    const body = errorBody(response.body);
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.field, 'files.sdn_comments.csv');
    assert.equal(body.error, 'sdn_comments.csv line 4: expected 2 fields, found 1');
    assert.equal((await lists()).find((list) => list.code === 'ofac-spillover')!.version, 2);
  });

  it('needs the operator key; the lists endpoint needs sanctions:read', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/sanctions/lists/ofac-sdn/import',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ format: 'ofac-sdn-csv', files: ofacFiles() }),
    });
    assert.equal(response.statusCode, 401);
    const api = apiClient(t, await t.tenant(['webhooks:read']));
    assert.equal((await api.get(LISTS)).statusCode, 403);
  });
});

describe('the match index across API processes', () => {
  let first: TestApp;
  let second: TestApp;
  before(async () => {
    first = await startTestApp();
    // A second app on the same database with a pool of its own: another API process's view.
    const pool = createPool(first.db.url, 4, 'payment-service:test-second');
    second = await startTestApp({
      db: { url: first.db.url, pool, drop: async () => pool.end() },
    });
  });
  after(async () => {
    await second.close();
    await second.db.drop();
    await first.close();
  });

  it('a list imported through one process is matched by the next screening of the other', async () => {
    const secondApi = apiClient(second, await second.tenant());
    const before = await secondApi.post(SCREENINGS, {
      entity_type: 'organisation',
      name: 'Golden Crescent Exchange',
    });
    assert.equal((before.json() as ScreeningJson).match_status, 'no_match');
    assert.equal((before.json() as ScreeningJson).lists_version, 'sandbox:1');

    const imported = await importList(first, 'ofac-sdn', { format: 'ofac-sdn-csv', files: ofacFiles() });
    assert.equal(imported.statusCode, 200, imported.body);

    const afterImport = await secondApi.post(SCREENINGS, {
      entity_type: 'organisation',
      name: 'Golden Crescent Exchange',
    });
    const screening = afterImport.json() as ScreeningJson;
    assert.equal(screening.match_status, 'potential_match');
    assert.equal(screening.lists_version, 'ofac-sdn:1,sandbox:1');
    assert.equal(screening.hits[0]!.entry_id, '1008');
  });
});
