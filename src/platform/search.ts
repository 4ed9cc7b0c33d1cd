// The search body and page shape shared by every `POST .../search` endpoint (D4).
// Validation happens in the route schema (ajv), so every rejection names its field:
// a single value instead of a list -> `filters.status`, an unknown key -> `filters.foo`, and so on.
import { type TSchema, Type } from '@sinclair/typebox';
import { validationFailed } from './errors.ts';

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

/**
 * A filter value: always a non-empty list (D4). NUL cannot be stored in PostgreSQL text, so a text item
 * holding it is refused here (422 naming `filters.<key>[i]`) instead of failing in the database.
 */
export const FilterList = <T extends TSchema>(item: T) =>
  Type.Array(
    item.type === 'string' && item.pattern === undefined ? { ...item, pattern: '^[^\\u0000]*$' } : item,
    {
      minItems: 1,
      maxItems: 100,
    },
  );

/** Documentation of a search body or page: its examples in the OpenAPI document. */
export interface SchemaExamples {
  examples?: unknown[];
}

/** The largest page whose offset ((page - 1) x MAX_PAGE_SIZE) is still an exact JavaScript integer. */
const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / MAX_PAGE_SIZE);

export function searchBodySchema<F extends Record<string, TSchema>>(
  filters: F,
  sortKeys: readonly string[],
  options: SchemaExamples = {},
) {
  return Type.Object(
    {
      filters: Type.Optional(Type.Partial(Type.Object(filters, { additionalProperties: false }))),
      search: Type.Optional(Type.String({ maxLength: 200, description: 'Free-text search.' })),
      // Any page past the end answers 200 with no items and the true total (D4); the bound only keeps
      // the offset an exact integer.
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
      page_size: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
      ),
      sort_by: Type.Optional(
        Type.Union(
          sortKeys.map((key) => Type.Literal(key)),
          { default: 'id' },
        ),
      ),
      sort_direction: Type.Optional(
        Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' }),
      ),
    },
    { additionalProperties: false, ...options },
  );
}

export function pageSchema<T extends TSchema>(item: T, options: SchemaExamples = {}) {
  return Type.Object(
    {
      items: Type.Array(item),
      total: Type.Integer({ minimum: 0 }),
      page: Type.Integer({ minimum: 1 }),
      page_size: Type.Integer({ minimum: 1 }),
    },
    options,
  );
}

export interface SearchBody<Filters> {
  filters?: Filters;
  search?: string;
  page?: number;
  page_size?: number;
  sort_by?: string;
  sort_direction?: 'asc' | 'desc';
}

export interface SearchQuery<Filters, SortKey extends string> {
  filters: Filters;
  search: string | undefined;
  page: number;
  pageSize: number;
  offset: number;
  sortBy: SortKey;
  sortDirection: 'asc' | 'desc';
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

/** Applies the D4 defaults to a body that the route schema has already validated. */
export function toSearchQuery<Filters extends object, SortKey extends string>(
  body: SearchBody<Filters> | undefined,
): SearchQuery<Filters, SortKey> {
  const page = body?.page ?? 1;
  const pageSize = body?.page_size ?? DEFAULT_PAGE_SIZE;
  const search = body?.search?.trim();
  return {
    filters: (body?.filters ?? {}) as Filters,
    search: search ? search : undefined,
    page,
    pageSize,
    offset: (page - 1) * pageSize,
    sortBy: (body?.sort_by ?? 'id') as SortKey,
    sortDirection: body?.sort_direction ?? 'desc',
  };
}

export function toPage<T>(query: SearchQuery<unknown, string>, items: T[], total: number): Page<T> {
  return { items, total, page: query.page, page_size: query.pageSize };
}

/**
 * For a search whose endpoint names no free-text fields (D4, D21): a `search` text is refused with 422,
 * never ignored, so that nobody takes an unfiltered page for a filtered one.
 */
export function refuseFreeText(body: { search?: string } | undefined, what: string): void {
  if (body?.search !== undefined) {
    throw validationFailed('search', `${what} have no free-text search; narrow them with filters`);
  }
}
