// Builds the Fastify application for one process from the modules below.
import { randomUUID } from 'node:crypto';
import { maxHeaderSize } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import FindMyWay from 'find-my-way';
import pino, { type Logger } from 'pino';
import { registerAdminRoutes } from './admin/routes.ts';
import { registerBearerAuth } from './auth/bearer.ts';
import { registerRateLimits } from './auth/rate-limit.ts';
import { registerAuthRoutes } from './auth/routes.ts';
import { registerOpsRoutes } from './ops/routes.ts';
import type { App, AppDeps, Components } from './platform/deps.ts';
import { AppError, clientErrorHandler, installErrorHandling, sendError } from './platform/errors.ts';
import { registerIdempotency } from './platform/idempotency.ts';
import { parseJsonBody } from './platform/json.ts';
import { loggerOptions } from './platform/logging.ts';
import {
  addMediaExamples,
  componentName,
  componentSchemas,
  documentConventions,
  OPERATOR_SECURITY_SCHEME,
} from './platform/openapi.ts';
import { buildSerializer } from './platform/serializer.ts';
import { ErrorBody } from './webhooks/api-schemas.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildOptions {
  components: Components;
  /** The process's pino logger (tests pass one that writes to a captured stream). */
  logger?: Logger;
}

export async function buildApp(deps: AppDeps, options: BuildOptions): Promise<App> {
  const app = Fastify({
    loggerInstance: (options.logger ?? pino(loggerOptions(deps.config.logLevel))) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      // A random (v4) UUID: Node draws it from a cached pool of random bytes, where a v7 UUID asked the
      // system for fresh bytes on every request (3 % of the CPU of GET subscription, issue 6).
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    // One log line per request (written in onResponse below) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // A hop count trusts that many proxies in front of the service.
    trustProxy:
      typeof deps.config.trustProxy === 'number'
        ? (
            (hops: number) => (_address: string, hop: number) =>
              hop < hops
          )(deps.config.trustProxy)
        : deps.config.trustProxy,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Every error body is the platform envelope (D5), those Fastify would otherwise write itself
    // included: parser errors before a request exists (431, 408, 400), and router errors before a
    // route is found.
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => sendError(request, reply, error),
    // No path segment is refused for its length before routing: an over-long id reaches its route and
    // gets that route's answer (401 without a token, then 404), not a router error. No route has a
    // regex parameter, so the length limit protects nothing here; the header limit bounds the URL.
    routerOptions: { maxParamLength: maxHeaderSize },
    // A request that arrives on an open connection while the server drains is served (with
    // Connection: close) rather than refused with Fastify's own 503 body; the drain is bounded by
    // SHUTDOWN_TIMEOUT_MS.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: {
      // The contract rejects what it does not accept: no coercion (a single value is not a list),
      // no silent removal of unknown keys.
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false },
    },
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>() as App;

  // JSON is the only request body the API takes (contract rule 1); anything else is 415 (D5).
  app.removeContentTypeParser(['text/plain', 'application/json']);
  // Bytes, not text: invalid UTF-8 must be refused, not decoded to U+FFFD and stored.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // Every registered path, to tell 405 (known path, other method) from 404.
  const knownRoutes = FindMyWay();
  /** The methods of each path without parameters (`/api/v1/banks/search`). */
  const fixedPaths = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD' || route.url.includes('*')) continue;
      try {
        knownRoutes.on(method as 'GET', route.url, () => {});
      } catch {
        // Duplicate registration of the same shape (e.g. with and without a trailing slash).
      }
      if (!route.url.includes(':')) fixedPaths.set(route.url, [...(fixedPaths.get(route.url) ?? []), method]);
    }
  });
  const allowedMethods = (path: string) =>
    ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) =>
      fixedPaths.has(path)
        ? fixedPaths.get(path)!.includes(method)
        : knownRoutes.find(method as 'GET', path) !== null,
    );
  installErrorHandling(app, allowedMethods);
  // A fixed path is known by its own methods only (D5): GET /api/v1/banks/search is 405 (only POST searches),
  // though the router would take `search` for the id of GET /api/v1/banks/{id}.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.routeOptions.url?.includes(':')) return;
    const path = decodedPath(request.url);
    if (path === undefined || !fixedPaths.has(path)) return;
    reply.header('Allow', allowedMethods(path).join(', '));
    throw new AppError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${path}`);
  });

  // The access line holds fixed fields only, none of them a credential, so it skips pino's redaction:
  // matching REDACTED_PATHS (wildcards included) against it cost 6 of its 10 µs, on every request
  // (GET subscription, issue 6). Every other line, and any object logged, is still redacted.
  const accessLog = app.log.child({}, { redact: [] });
  const recorded = new WeakSet<FastifyRequest>();
  const record = (request: FastifyRequest, reply: FastifyReply) => {
    if (recorded.has(request)) return;
    recorded.add(request);
    const answered = reply.raw.writableFinished;
    accessLog.info(
      {
        request_id: request.id,
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...(answered ? {} : { client_closed: true }),
      },
      answered
        ? 'request completed'
        : 'request completed; the client closed the connection before the answer',
    );
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    deps.metrics.httpRequests.inc(labels);
    deps.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  };
  // Fastify runs onResponse once the answer has gone out in full, never for a client that hung up before
  // (or while reading it); that request's work is done all the same, so it gets its line and its count
  // when its connection closes, with the status of the answer it was given.
  app.addHook('onSend', (request, reply, payload, done) => {
    const response = reply.raw;
    if (response.destroyed) record(request, reply);
    else response.once('close', () => response.writableFinished || record(request, reply));
    done(null, payload);
  });
  // The close closes the connections idle at that moment (forceCloseConnections: 'idle'); one whose
  // answer was still being prepared turns idle once the answer is out, and a keep-alive client would hold
  // it open, and the drain with it, until the keep-alive timeout. It is closed then, unless a request that
  // had already arrived on it is still to be answered (Node skips a connection with an answer in
  // progress); that one is served, with Connection: close.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const closeIdleConnections = () => app.server.closeIdleConnections();
  app.addHook('onResponse', async (request, reply) => {
    record(request, reply);
    // After Node has handed the connection to the next answer queued on it, if any.
    if (closing) setImmediate(closeIdleConnections);
  });

  // The shared schemas of every area, before the routes that reference them.
  for (const schema of componentSchemas()) app.addSchema(schema);
  await app.register(swagger, {
    // A component keeps its name (its `$id`) in components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => componentName(json, i) },
    transform: documentConventions(ErrorBody),
    transformObject: (document) =>
      addMediaExamples('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Payment Service API',
        version: '1.0.0',
        description:
          'Cross-border payment API. Authenticate with an OAuth 2.0 client-credentials token from ' +
          '`/realms/{realm}/protocol/openid-connect/token` and send it as `Authorization: Bearer <token>`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          operatorKey: OPERATOR_SECURITY_SCHEME,
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerOpsRoutes(app, deps);
  // Before any route that needs it: rate limits attach to routes as they are registered (D12).
  await registerRateLimits(app, deps);
  if (options.components.auth) registerAuthRoutes(app, deps, { authOnly: !options.components.api });
  if (options.components.api) {
    await registerBearerAuth(app, deps);
    registerIdempotency(app, deps.pool, deps.secretBox);
    registerAdminRoutes(app, deps);
    for (const area of deps.areas) {
      area.routes?.(app, deps);
      // Sandbox routes do not exist in production (404, D11, D24).
      if (deps.config.appEnv === 'sandbox') area.sandboxRoutes?.(app, deps);
    }
  }
  return app;
}

/** The path of a request URL as the router reads it (percent-decoded), undefined when it cannot be decoded. */
function decodedPath(url: string): string | undefined {
  try {
    return decodeURIComponent(url.split('?')[0] ?? url);
  } catch {
    return undefined;
  }
}
