// Operational endpoints: liveness and readiness without a token (D1); Prometheus metrics, behind
// METRICS_TOKEN when it is set.
import { Type } from '@sinclair/typebox';
import { migrationsApplied } from '../db/migrate.ts';
import { bearerKeyMatches } from '../platform/bearer-key.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { AppError } from '../platform/errors.ts';
import { sharedRead } from '../platform/metrics.ts';
import { component } from '../platform/openapi.ts';

const HealthBody = component('Health', Type.Object({ status: Type.String() }));

export function registerOpsRoutes(app: App, deps: AppDeps): void {
  // A database that does not answer is not ready: a probe gets 503 within the wait instead of hanging, and
  // probes share one check, so that a stalled database does not also take a pool connection per probe.
  const readiness = sharedRead(() => migrationsApplied(deps.pool));
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
      const applied = await readiness();
      if (applied === undefined) return reply.code(503).send({ status: 'storage unreachable' });
      if (!applied) return reply.code(503).send({ status: 'migrations pending' });
      return { status: 'ready' };
    },
  );

  const metricsToken = deps.config.metricsToken;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (metricsToken !== undefined && !bearerKeyMatches(request.headers.authorization, metricsToken)) {
      throw new AppError(
        'UNAUTHORIZED',
        'A valid metrics token is required: Authorization: Bearer <METRICS_TOKEN>',
      );
    }
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
