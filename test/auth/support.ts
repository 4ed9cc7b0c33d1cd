// Shared pieces of the auth tests: a token-protected probe route, form requests, raw JWT tools.
import { Type } from '@sinclair/typebox';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/platform/deps.ts';
import { WEBHOOK_SCOPES } from '../../src/webhooks/scopes.ts';

export const PROBE = '/api/v1/test-probe';
export const TOKEN_PATH = '/realms/sandbox/protocol/openid-connect/token';

/**
 * Routes that exist only in these tests: GET needs `webhooks:read`, POST needs `webhooks:write` and
 * has a strict JSON body schema, so that the order token, rate limit, permission, body is observable.
 */
export function probeRoutes(app: App): void {
  app.get('/api/v1/test-probe', { config: { scope: WEBHOOK_SCOPES.read } }, async (request) => ({
    client_id: request.principal!.clientId,
    organisation_id: request.principal!.organisationId,
  }));
  app.post(
    '/api/v1/test-probe',
    {
      config: { scope: WEBHOOK_SCOPES.write },
      schema: { body: Type.Object({ name: Type.String() }, { additionalProperties: false }) },
    },
    async (request) => ({ client_id: request.principal!.clientId, name: request.body.name }),
  );
}

export const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

export function postToken(
  app: App,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
  path = TOKEN_PATH,
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: path, headers: { ...FORM, ...headers }, payload: form(fields) });
}

export const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** Header and payload of a compact JWT, unverified. */
export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header, payload] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}
