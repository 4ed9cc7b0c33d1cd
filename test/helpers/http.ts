// HTTP helpers of the API tests: JSON requests through app.inject with a tenant's token and
// any extra headers (Idempotency-Key).
import type { LightMyRequestResponse } from 'fastify';
import type { Tenant, TestApp } from './app.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface ApiClient {
  tenant: Tenant;
  request(
    method: Method,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  patch(url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  del(url: string): Promise<LightMyRequestResponse>;
}

export function apiClient(t: Pick<TestApp, 'app'>, tenant: Tenant): ApiClient {
  const send = (method: Method, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url,
      headers: {
        ...tenant.auth,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  return {
    tenant,
    request: send,
    get: (url) => send('GET', url),
    post: (url, body, headers) => send('POST', url, body, headers),
    patch: (url, body, headers) => send('PATCH', url, body, headers),
    del: (url) => send('DELETE', url),
  };
}
