// Operational endpoints, without a token (D1): liveness, readiness, Prometheus metrics.
import { Type } from '@sinclair/typebox';
import { migrationsApplied } from '../db/migrate.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { component } from '../platform/openapi.ts';

const HealthBody = component('Health', Type.Object({ status: Type.String() }));

export function registerOpsRoutes(app: App, deps: AppDeps): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getHealth',
        summary: 'Process is alive',
        response: { 200: HealthBody },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getReadiness',
        summary: 'Storage reachable and migrations applied',
        response: { 200: HealthBody, 503: HealthBody },
      },
    },
    async (_request, reply) => {
      try {
        if (await migrationsApplied(deps.pool)) return { status: 'ready' };
        return reply.code(503).send({ status: 'migrations pending' });
      } catch {
        return reply.code(503).send({ status: 'storage unreachable' });
      }
    },
  );

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
