// The response serializers of the routes (fast-json-stringify), given only the shared schemas each
// response refers to. Fastify's default compiler hands every response schema all of the app's shared
// schemas, and fast-json-stringify checks each of them again (depth, meta-schema) for every response of
// every route: with this app's OpenAPI components that is about 680 MB of garbage at start-up, whose
// high-water mark the process's resident memory keeps. A serializer only reads the schemas its `$ref`s
// reach, so it is the same with the others left out.
import fastJsonStringify, { type Options, type Schema } from 'fast-json-stringify';

type Schemas = Record<string, unknown>;

/** The `$id`s of the shared schemas `schema` reaches through `$ref`, transitively. */
function referencedIds(schema: unknown, shared: Schemas): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') {
        const id = item.split('#')[0]!;
        if (id !== '' && !found.has(id) && id in shared) {
          found.add(id);
          visit(shared[id]);
        }
      } else visit(item);
    }
  };
  visit(schema);
  return found;
}

/** Fastify's `schemaController.compilersFactory.buildSerializer`. */
export function buildSerializer(
  externalSchemas?: unknown,
  options?: Options,
): (route: { schema?: unknown }) => (doc: unknown) => string {
  const shared = (externalSchemas ?? {}) as Schemas;
  return ({ schema }) => {
    const ownId = (schema as { $id?: unknown } | undefined)?.$id;
    const schemas: Schemas = {};
    for (const id of referencedIds(schema, shared)) {
      // A response that is itself a shared schema is not given again (as Fastify's default does).
      if (id !== ownId) schemas[id] = shared[id];
    }
    return fastJsonStringify(schema as Schema, { ...options, schema: schemas as Options['schema'] });
  };
}
