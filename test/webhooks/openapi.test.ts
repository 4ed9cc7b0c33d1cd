// OpenAPI (/openapi.json): every webhook and sandbox endpoint, with its request and response schemas.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

interface Operation {
  tags?: string[];
  summary?: string;
  security?: unknown[];
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

const ENDPOINTS: [
  string,
  string,
  string,
  { body: boolean; params?: string; success: string; errors: string[] },
][] = [
  [
    'get',
    '/api/v1/webhooks/event-types',
    'webhooks',
    { body: false, success: '200', errors: ['401', '403'] },
  ],
  [
    'post',
    '/api/v1/webhooks/subscriptions',
    'webhooks',
    { body: true, success: '201', errors: ['400', '409', '422'] },
  ],
  [
    'post',
    '/api/v1/webhooks/subscriptions/search',
    'webhooks',
    { body: true, success: '200', errors: ['422'] },
  ],
  [
    'get',
    '/api/v1/webhooks/subscriptions/{subscription_id}',
    'webhooks',
    { body: false, params: 'subscription_id', success: '200', errors: ['404'] },
  ],
  [
    'patch',
    '/api/v1/webhooks/subscriptions/{subscription_id}',
    'webhooks',
    { body: true, params: 'subscription_id', success: '200', errors: ['400', '404', '409', '422'] },
  ],
  [
    'post',
    '/api/v1/webhooks/subscriptions/{subscription_id}/rotate-secret',
    'webhooks',
    { body: false, params: 'subscription_id', success: '200', errors: ['400', '404'] },
  ],
  [
    'delete',
    '/api/v1/webhooks/subscriptions/{subscription_id}',
    'webhooks',
    { body: false, params: 'subscription_id', success: '200', errors: ['404'] },
  ],
  [
    'post',
    '/api/v1/webhooks/events/search',
    'webhooks',
    { body: true, success: '200', errors: ['422', '429'] },
  ],
  [
    'get',
    '/api/v1/webhooks/events/{event_id}',
    'webhooks',
    { body: false, params: 'event_id', success: '200', errors: ['404', '500'] },
  ],
  [
    'post',
    '/api/v1/webhooks/events/{event_id}/replay',
    'webhooks',
    { body: false, params: 'event_id', success: '202', errors: ['400', '404'] },
  ],
  [
    'post',
    '/api/v1/webhooks/delivery-attempts/search',
    'webhooks',
    { body: true, success: '200', errors: ['422'] },
  ],
  [
    'get',
    '/api/v1/webhooks/delivery-attempts/{attempt_id}',
    'webhooks',
    { body: false, params: 'attempt_id', success: '200', errors: ['404'] },
  ],
  [
    'post',
    '/api/v1/sandbox/webhooks/events',
    'sandbox',
    { body: true, success: '201', errors: ['400', '422'] },
  ],
];

describe('OpenAPI of the webhook API', () => {
  let t: TestApp;
  let paths: Record<string, Record<string, Operation>>;
  let schemas: Record<string, { properties?: Record<string, unknown> }>;
  before(async () => {
    t = await startTestApp();
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json() as { paths: typeof paths; components: { schemas: typeof schemas } };
    paths = document.paths;
    schemas = document.components.schemas;
  });
  after(() => t.close());

  it('documents every endpoint with its tag, security, parameters, request and response schemas', () => {
    for (const [method, path, tag, expected] of ENDPOINTS) {
      const operation = paths[path]?.[method];
      assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
      assert.deepEqual(operation.tags, [tag], path);
      assert.ok(operation.summary, path);
      assert.deepEqual(operation.security, [{ bearer: [] }], path);
      if (expected.body)
        assert.ok(operation.requestBody?.content['application/json']?.schema, `${path} body`);
      if (expected.params) {
        assert.ok(
          operation.parameters?.some(
            (parameter) => parameter.name === expected.params && parameter.in === 'path',
          ),
          `${path} params`,
        );
      }
      for (const status of [expected.success, '401', ...expected.errors]) {
        assert.ok(
          operation.responses[status]?.content?.['application/json']?.schema,
          `${method} ${path} ${status}`,
        );
      }
    }
  });

  it('shows the secret only in the create and rotate responses', () => {
    // The response body is a $ref to a component: its properties say whether the secret is there.
    const hasSecret = (path: string, method: string, status: string) => {
      const { schema } = paths[path]![method]!.responses[status]!.content!['application/json']! as {
        schema: { $ref: string };
      };
      const properties = schemas[schema.$ref.replace('#/components/schemas/', '')]!.properties!;
      return Object.keys(properties).includes('signing_secret');
    };
    assert.equal(hasSecret('/api/v1/webhooks/subscriptions', 'post', '201'), true);
    assert.equal(
      hasSecret('/api/v1/webhooks/subscriptions/{subscription_id}/rotate-secret', 'post', '200'),
      true,
    );
    assert.equal(hasSecret('/api/v1/webhooks/subscriptions/{subscription_id}', 'get', '200'), false);
    assert.equal(hasSecret('/api/v1/webhooks/subscriptions/{subscription_id}', 'patch', '200'), false);
    assert.equal(hasSecret('/api/v1/webhooks/subscriptions/search', 'post', '200'), false);
  });

  it('carries examples for the main request and response bodies', () => {
    const text = JSON.stringify(paths['/api/v1/webhooks/subscriptions']!.post);
    assert.match(text, /hooks\.example\.com/);
    assert.match(JSON.stringify(paths['/api/v1/webhooks/events/{event_id}']!.get), /evt_01/);
  });
});
