// What a client generator makes of an OpenAPI 3 document: TypeScript declarations (`paths`, `components`,
// `operations`) from openapi-typescript, and the document's structural problems against the OpenAPI
// specification from Redocly (the validator openapi-typescript itself runs on). A package of its own:
// openapi-typescript builds its output with the TypeScript 5 compiler API, and the project's TypeScript 7
// (the native compiler, whose package has no JavaScript API) cannot serve it, so this workspace holds the
// TypeScript 5 that openapi-typescript runs on.
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';

/**
 * `defaultNonNullable: false`: a property with a default (a search body's page, page_size, sort_by) stays
 * optional. The tool's default makes it required, which is right for a response but wrong for a request
 * body that is a component, as every body of this API is.
 */
export async function generateTypes(document: object): Promise<string> {
  return astToString(await openapiTS(document as OpenAPI3, { silent: true, defaultNonNullable: false }));
}

/** Where the document breaks the OpenAPI specification (Redocly's `struct` rule), one line per problem. */
export async function structuralProblems(document: object): Promise<string[]> {
  const config = await createConfig({ extends: [], rules: { struct: 'error' } });
  const problems = await lintDocument({
    document: makeDocumentFromString(JSON.stringify(document), '/openapi.json'),
    config: config.styleguide,
    externalRefResolver: new BaseResolver(),
  });
  return problems.map((problem) => `${problem.location[0]?.pointer ?? ''}: ${problem.message}`);
}
