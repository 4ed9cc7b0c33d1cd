// Schema pieces shared by the webhook and sandbox routes: the D5 error envelope as OpenAPI documents it,
// string enums that ajv reports as "must be one of" (D4/D9 messages name the allowed values), and the
// path parameters.
import { type TSchema, Type } from '@sinclair/typebox';
import { component } from '../platform/openapi.ts';

/** A field that is `null` until its thing exists (contract rule 7). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An ISO-8601 UTC time with milliseconds (D3). */
export const Timestamp = Type.String({ format: 'date-time' });

/** A string enum as a plain JSON Schema `enum`, so that a rejection lists the allowed values. */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/**
 * Free text stored in PostgreSQL: NUL cannot be stored in `text`, so it is rejected here (422 naming
 * the field) instead of failing in the database.
 */
export const StoredText = (options: { minLength?: number; maxLength: number; description?: string }) =>
  Type.String({ pattern: '^[^\\u0000]*$', ...options });

export const ErrorBody = component(
  'Error',
  Type.Object(
    {
      error: Type.String({ description: 'Human-readable message.' }),
      code: Type.String({ description: 'Machine-readable code, e.g. VALIDATION_FAILED.' }),
      field: Type.Optional(Type.String({ description: 'The offending input, for validation failures.' })),
      details: Type.Optional(Type.Array(Type.Unknown())),
      // Always present. Declared optional only because the serializer writes required keys first, and
      // D5 puts error_id last, after the optional field and details.
      error_id: Type.Optional(
        Type.String({
          description: 'Always present: identifies the request in the service logs (err_ + ULID).',
        }),
      ),
    },
    {
      description: 'Platform error envelope (D5).',
      examples: [
        {
          error: 'event_type_codes[1] is not a published event type: transfer.unknown',
          code: 'VALIDATION_FAILED',
          field: 'event_type_codes[1]',
          error_id: 'err_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
        },
      ],
    },
  ),
);

export const UnauthorizedBody = component(
  'Unauthorized',
  Type.Object(
    { message: Type.Literal('Unauthorized') },
    { description: 'Bearer token missing, malformed or expired: request a new token and retry.' },
  ),
);

/** The error responses every authenticated route can give, plus any route-specific ones. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {
    401: UnauthorizedBody,
    403: ErrorBody,
    429: ErrorBody,
    500: ErrorBody,
  };
  for (const status of statuses) responses[status] = ErrorBody;
  return responses;
}

export const IntegerIdParam = (name: string, description: string) =>
  Type.Object({ [name]: Type.String({ description, examples: ['42'] }) });

/**
 * Search bodies have only optional keys (D4), so a search sent with no body at all is the default
 * search: route preValidation hook.
 */
export async function absentBodyIsEmpty(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {};
}
