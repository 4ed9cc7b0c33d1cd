// Named schemas of the OpenAPI document. A schema given to `component` is added to the app once
// (app.addSchema, with its name as `$id`) and every route or schema that uses it holds a `$ref` to it:
// /openapi.json lists it once as `components.schemas.<name>` instead of a copy inlined in each operation,
// so a client generated from the document (openapi-typescript, @hey-api/openapi-ts) has one named type
// per resource. Validation and serialization follow the `$ref` to the same schema.
import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { IDEMPOTENCY_KEY_HEADER_SCHEMA } from './idempotency.ts';

const components = new Map<string, TSchema>();

/**
 * A `$ref` to a component, typed as the component's values. Both keys are types only: `static` is what
 * @sinclair/typebox's Static reads, `~unsafe` what the route type provider reads (it infers with TypeBox 1),
 * so that request bodies and replies keep their types.
 */
export type ComponentRef<T extends TSchema> = TUnsafe<Static<T>> & { readonly '~unsafe': Static<T> };

/** Registers `schema` as the component `name` and returns a reference to it. */
export function component<T extends TSchema>(name: string, schema: T): ComponentRef<T> {
  if (components.has(name)) throw new Error(`OpenAPI component ${name} is defined twice`);
  components.set(name, { ...schema, $id: name });
  return Type.Unsafe<Static<T>>(Type.Ref(name)) as ComponentRef<T>;
}

/** Every component, for app.addSchema before any route is registered. */
export function componentSchemas(): readonly TSchema[] {
  return [...components.values()];
}

/** The name a component has in components.schemas: its `$id` (swagger's refResolver). */
export function componentName(json: { $id?: unknown }, index: number): string {
  return typeof json.$id === 'string' ? json.$id : `def-${index}`;
}

interface Media {
  schema?: { $ref?: string };
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, { examples?: unknown[] }> };
}

/**
 * Gives each request and response body that is a `$ref` the examples of its component, as the media
 * object's `example` (one) or `examples` (several): what documentation viewers show for a body. An inlined
 * body gets the same from swagger itself.
 */
export function addMediaExamples<D>(document: D): D {
  const { paths = {}, components = {} } = document as Document;
  const prefix = '#/components/schemas/';
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const bodies = [operation.requestBody, ...Object.values(operation.responses ?? {})];
      for (const media of bodies.flatMap((body) => Object.values(body?.content ?? {}))) {
        const ref = media.schema?.$ref;
        if (!ref?.startsWith(prefix) || media.example !== undefined || media.examples !== undefined) continue;
        const examples = components.schemas?.[ref.slice(prefix.length)]?.examples ?? [];
        if (examples.length === 1) media.example = examples[0];
        else if (examples.length > 1)
          media.examples = Object.fromEntries(
            examples.map((value, index) => [`example${index + 1}`, { value }]),
          );
      }
    }
  }
  return document;
}

interface RouteSchema {
  headers?: { type?: string; properties?: Record<string, unknown>; [key: string]: unknown };
  response?: Record<string, unknown>;
  security?: Record<string, string[]>[];
  [key: string]: unknown;
}

/** The operator API's credential in the document (D7): `Authorization: Bearer <ADMIN_API_KEY>`. */
export const OPERATOR_SECURITY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  description: 'The operator key, ADMIN_API_KEY (D7): not an access token.',
} as const;

/**
 * What every route of a kind has in common, written into its operation in the document only (validation
 * and serialization use the route's own schema): a route that honours Idempotency-Key (D14) documents the
 * header and its 409 and 422 answers; an operator route (/admin/v1, D7) its credential and 401.
 * `errorBody` is the platform error envelope (D5).
 */
export function documentConventions(errorBody: unknown) {
  return ({
    schema,
    url,
    route,
  }: {
    schema: unknown;
    url: string;
    route: { config?: unknown };
  }): { schema: RouteSchema; url: string } => {
    const own = (schema ?? {}) as RouteSchema;
    if (own.hide === true) return { schema: own, url };
    const documented: RouteSchema = { ...own, response: { ...own.response } };
    const response = documented.response!;
    if ((route.config as { idempotent?: boolean } | undefined)?.idempotent) {
      documented.headers = {
        type: 'object',
        ...own.headers,
        properties: {
          ...own.headers?.properties,
          'Idempotency-Key': IDEMPOTENCY_KEY_HEADER_SCHEMA,
        },
      };
      response['409'] ??= errorBody;
      response['422'] ??= errorBody;
    }
    if (url.startsWith('/admin/v1/')) {
      documented.security = [{ operatorKey: [] }];
      response['401'] ??= errorBody;
    }
    return { schema: documented, url };
  };
}
