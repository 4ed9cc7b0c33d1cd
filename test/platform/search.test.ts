// The D4 search body: every rejection is 422 VALIDATION_FAILED naming its field; defaults; page shape.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import type { App } from '../../src/platform/deps.ts';
import { FilterList, searchBodySchema, toPage, toSearchQuery } from '../../src/platform/search.ts';
import { errorBody, LogCapture, startTestApp, type TestApp } from '../helpers/app.ts';

const SearchBody = searchBodySchema(
  {
    status: FilterList(Type.Union([Type.Literal('active'), Type.Literal('paused')])),
    ids: FilterList(Type.Integer()),
  },
  ['id', 'created_at', 'updated_at'],
);

describe('search body (D4)', () => {
  let t: TestApp;
  let app: App;
  before(async () => {
    t = await startTestApp();
    app = await buildApp(t.deps, {
      components: { api: false, auth: false },
      logger: pino({}, new LogCapture()),
    });
    app.post('/things/search', { schema: { body: SearchBody } }, async (request) => {
      const query = toSearchQuery(request.body);
      return toPage(query, [query], 57);
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await t.close();
  });

  const search = (payload: unknown) =>
    app.inject({ method: 'POST', url: '/things/search', payload: payload as object });

  const rejection = async (payload: unknown, field: string) => {
    const response = await search(payload);
    assert.equal(response.statusCode, 422, response.body);
    const body = errorBody(response.body);
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.field, field);
    return body;
  };
  const rejects = async (payload: unknown, field: string): Promise<void> => {
    await rejection(payload, field);
  };

  it('applies the defaults: page 1, page_size 20, sort by id descending', async () => {
    const response = await search({});
    assert.equal(response.statusCode, 200);
    const page = response.json();
    assert.deepEqual(page.items[0], {
      filters: {},
      page: 1,
      pageSize: 20,
      offset: 0,
      sortBy: 'id',
      sortDirection: 'desc',
    });
    assert.deepEqual(
      { total: page.total, page: page.page, page_size: page.page_size },
      { total: 57, page: 1, page_size: 20 },
    );
  });

  it('computes the offset from page and page_size, and trims free text', async () => {
    const response = await search({
      page: 3,
      page_size: 25,
      search: '  evt_01 ',
      sort_by: 'created_at',
      sort_direction: 'asc',
    });
    const query = response.json().items[0];
    assert.equal(query.offset, 50);
    assert.equal(query.search, 'evt_01');
    assert.equal(query.sortBy, 'created_at');
    assert.equal(query.sortDirection, 'asc');
  });

  it('rejects a single filter value instead of a list, naming filters.status', async () => {
    const body = await rejection({ filters: { status: 'active' } }, 'filters.status');
    assert.match(body.error, /must be a list/);
  });

  it('rejects an empty filter list', () => rejects({ filters: { status: [] } }, 'filters.status'));
  it('rejects an unknown filter key, naming it', () =>
    rejects({ filters: { colour: ['red'] } }, 'filters.colour'));
  it('rejects an unknown top-level key, naming it', () => rejects({ limit: 5 }, 'limit'));
  it('rejects a sort_by outside the list', () => rejects({ sort_by: 'name' }, 'sort_by'));
  it('rejects a sort_direction other than asc or desc', () =>
    rejects({ sort_direction: 'up' }, 'sort_direction'));
  it('rejects page 0', () => rejects({ page: 0 }, 'page'));
  it('rejects page_size over 100', () => rejects({ page_size: 101 }, 'page_size'));
  it('rejects page_size 0', () => rejects({ page_size: 0 }, 'page_size'));
  it('rejects a page given as a string (no coercion)', () => rejects({ page: '2' }, 'page'));
  it('rejects a filter item of the wrong type, naming its index', () =>
    rejects({ filters: { ids: [1, 'two'] } }, 'filters.ids[1]'));
  it('rejects an enum filter value outside the allowed values', () =>
    rejects({ filters: { status: ['deleted'] } }, 'filters.status[0]'));
  it('rejects filters that are not an object', () => rejects({ filters: ['status'] }, 'filters'));
  it('rejects free text over 200 characters', () => rejects({ search: 'x'.repeat(201) }, 'search'));
});
