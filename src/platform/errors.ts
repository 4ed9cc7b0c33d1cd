// The platform error envelope and every generic error of D5.
// Body keys in this order: error, code, field (validation only), details (optional), error_id.
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isStorageUnavailable } from '../db/pool.ts';
import { newErrorId } from './ids.ts';

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'VALIDATION_FAILED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNAUTHORIZED'
  | 'AUTHORIZATION_FAILED'
  | 'RATE_LIMIT_EXCEEDED'
  | 'REQUEST_HEADER_FIELDS_TOO_LARGE'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR'
  // Domain refusals of the payment areas (D14).
  | 'INVALID_STATE'
  | 'QUOTE_EXPIRED'
  | 'INSUFFICIENT_FUNDS'
  | 'BENEFICIARY_NOT_ACTIVE'
  | 'CORRIDOR_UNAVAILABLE'
  | 'RATE_UNAVAILABLE'
  // Idempotency-Key refusals (D14).
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE';

const STATUS_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 422,
  NOT_FOUND: 404,
  CONFLICT: 409,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAUTHORIZED: 401,
  AUTHORIZATION_FAILED: 403,
  RATE_LIMIT_EXCEEDED: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
  INVALID_STATE: 400,
  QUOTE_EXPIRED: 400,
  INSUFFICIENT_FUNDS: 400,
  BENEFICIARY_NOT_ACTIVE: 400,
  CORRIDOR_UNAVAILABLE: 400,
  RATE_UNAVAILABLE: 400,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
};

export interface ErrorBody {
  error: string;
  code: ErrorCode;
  field?: string;
  details?: unknown[];
  error_id: string;
}

/** An error the client caused or may act on; the message is safe to show. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly field: string | undefined;
  readonly details: unknown[] | undefined;

  constructor(code: ErrorCode, message: string, options: { field?: string; details?: unknown[] } = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.statusCode = STATUS_OF[code];
    this.field = options.field;
    this.details = options.details;
  }
}

export const badRequest = (message: string): AppError => new AppError('BAD_REQUEST', message);
export const notFound = (message = 'Resource not found'): AppError => new AppError('NOT_FOUND', message);
export const conflict = (message: string): AppError => new AppError('CONFLICT', message);
export const validationFailed = (field: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', message, { field });
/** An action the resource's current status does not allow (D14); the message names the status. */
export const invalidState = (message: string): AppError => new AppError('INVALID_STATE', message);
export const forbidden = (message = 'The client lacks permission for this operation'): AppError =>
  new AppError('AUTHORIZATION_FAILED', message);

/** 401 has its own body, `{"message":"Unauthorized"}`, not the envelope (contract section 7). */
export class UnauthorizedError extends Error {
  readonly statusCode = 401;
  readonly reason: string;
  constructor(reason: string) {
    super('Unauthorized');
    this.name = 'UnauthorizedError';
    this.reason = reason;
  }
}

export function envelope(error: AppError, errorId: string): ErrorBody {
  const body: ErrorBody = { error: error.message, code: error.code } as ErrorBody;
  if (error.field !== undefined) body.field = error.field;
  if (error.details !== undefined) body.details = error.details;
  body.error_id = errorId;
  return body;
}

/** Converts an ajv instance path (`/filters/status/0`) to the field name clients read (`filters.status[0]`). */
export function fieldFromPointer(pointer: string): string {
  return pointer
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, segment) =>
        /^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment,
      '',
    );
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fromValidation(errors: AjvError[]): AppError {
  const first = errors[0];
  if (!first) return new AppError('VALIDATION_FAILED', 'The request is invalid');
  let field = fieldFromPointer(first.instancePath);
  let message = `${field || 'body'} ${first.message ?? 'is invalid'}`;
  if (first.keyword === 'required' && typeof first.params.missingProperty === 'string') {
    field = field ? `${field}.${first.params.missingProperty}` : first.params.missingProperty;
    message = `${field} is required`;
  } else if (
    first.keyword === 'additionalProperties' &&
    typeof first.params.additionalProperty === 'string'
  ) {
    field = field ? `${field}.${first.params.additionalProperty}` : first.params.additionalProperty;
    message = `${field} is not a recognised field`;
  } else if (first.keyword === 'type' && !field) {
    message = 'The request body must be a JSON object';
  } else if (first.keyword === 'type') {
    message =
      first.params.type === 'array'
        ? `${field} must be a list`
        : `${field} must be of type ${String(first.params.type)}`;
  } else if (first.keyword === 'enum' && Array.isArray(first.params.allowedValues)) {
    message = `${field} must be one of: ${first.params.allowedValues.join(', ')}`;
  } else if (first.keyword === 'const' && first.params.allowedValue !== undefined) {
    // A union of literals fails with one `const` error per branch (then `anyOf`): name every value,
    // not only the first branch's.
    const allowed = errors
      .filter((error) => error.keyword === 'const' && error.instancePath === first.instancePath)
      .map((error) => String(error.params.allowedValue));
    message =
      allowed.length > 1
        ? `${field} must be one of: ${allowed.join(', ')}`
        : `${field} must be ${allowed[0]}`;
  } else if (first.keyword === 'anyOf') {
    message = `${field} has an invalid value`;
  }
  return new AppError('VALIDATION_FAILED', message, field ? { field } : {});
}

/** Maps anything thrown while handling a request to an AppError; undefined means "unexpected" (500). */
export function toAppError(error: FastifyError | Error): AppError | undefined {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvError[] };
  if (Array.isArray(fastifyError.validation)) return fromValidation(fastifyError.validation);
  switch (fastifyError.code) {
    // Raised by the router before any route runs (Fastify's frameworkErrors).
    case 'FST_ERR_BAD_URL':
      return new AppError('BAD_REQUEST', 'The URL is malformed: its path holds an invalid percent-encoding');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return notFound('No resource matches the path: a path segment is too long');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        'The request body must be JSON sent with Content-Type: application/json',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('BAD_REQUEST', 'The request body is empty but Content-Type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('BAD_REQUEST', 'The request body is not valid JSON');
  }
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    // JSON.parse failures and prototype-poisoning rejections from the body parser.
    return new AppError('BAD_REQUEST', 'The request body is not valid JSON');
  }
  if (fastifyError.statusCode === 429) {
    return new AppError(
      'RATE_LIMIT_EXCEEDED',
      'Too many requests; back off and retry after the Retry-After interval',
    );
  }
  if (fastifyError.statusCode === 413)
    return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large');
  if (fastifyError.statusCode === 415) {
    return new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'The request body must be JSON sent with Content-Type: application/json',
    );
  }
  if (fastifyError.statusCode === 404) return notFound();
  if (
    fastifyError.statusCode !== undefined &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    return new AppError('BAD_REQUEST', 'The request is invalid');
  }
  return undefined;
}

/** What a 503 for unavailable storage asks the client to wait before it retries. */
const STORAGE_RETRY_AFTER_SECONDS = 1;

export function sendError(request: FastifyRequest, reply: FastifyReply, thrown: Error): FastifyReply {
  const errorId = newErrorId();
  if (thrown instanceof UnauthorizedError) {
    request.log.info({ error_id: errorId, reason: thrown.reason }, 'unauthorized');
    return reply.code(401).type('application/json').send({ message: 'Unauthorized' });
  }
  const appError = toAppError(thrown);
  if (appError === undefined && isStorageUnavailable(thrown)) {
    // Not the request's fault and not lasting: the client may retry (with its Idempotency-Key) shortly.
    request.log.error({ error_id: errorId, err: thrown }, 'storage unavailable');
    const unavailable = new AppError(
      'SERVICE_UNAVAILABLE',
      'The service is temporarily unavailable; retry after the Retry-After interval',
    );
    return reply
      .code(503)
      .header('retry-after', String(STORAGE_RETRY_AFTER_SECONDS))
      .type('application/json')
      .send(envelope(unavailable, errorId));
  }
  if (appError === undefined) {
    // Never leak internals: the body says only that it failed, the log has the cause.
    request.log.error({ error_id: errorId, err: thrown }, 'unexpected error');
    const internal = new AppError(
      'INTERNAL_ERROR',
      'The platform failed to answer; retry once, then contact support with error_id',
    );
    return reply.code(500).type('application/json').send(envelope(internal, errorId));
  }
  request.log.info(
    { error_id: errorId, code: appError.code, status: appError.statusCode, field: appError.field },
    appError.message,
  );
  return reply.code(appError.statusCode).type('application/json').send(envelope(appError, errorId));
}

/**
 * Answers what Node's HTTP parser refuses before a request exists (Fastify's clientErrorHandler): a
 * request line and headers over the header limit (431), a request not received in time (408), bytes
 * that are not HTTP (400). Nothing is routed yet, so the endpoint is unknown and the platform envelope
 * is used, on the raw socket, which is then closed.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: NodeJS.ErrnoException,
  socket: Duplex,
): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let appError: AppError;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    appError = new AppError(
      'REQUEST_HEADER_FIELDS_TOO_LARGE',
      `The request line and headers are larger than ${maxHeaderSize / 1024} KiB: shorten the URL or the headers`,
    );
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    appError = new AppError('REQUEST_TIMEOUT', 'The request was not received in time');
  } else {
    appError = new AppError('BAD_REQUEST', 'The request is not valid HTTP/1.1');
  }
  const errorId = newErrorId();
  this.log.info(
    { error_id: errorId, code: appError.code, status: appError.statusCode, parser_error: error.code },
    appError.message,
  );
  const body = JSON.stringify(envelope(appError, errorId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${appError.statusCode} ${STATUS_CODES[appError.statusCode]}\r\n` +
        'Connection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** Installs the envelope as the error handler and a 404 / 405 handler on the root instance. */
export function installErrorHandling(app: FastifyInstance, allowedMethods: (url: string) => string[]): void {
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const methods = allowedMethods(path);
    if (methods.length > 0) {
      reply.header('Allow', methods.join(', '));
      return sendError(
        request,
        reply,
        new AppError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${path}`),
      );
    }
    return sendError(request, reply, notFound(`No route matches ${request.method} ${path}`));
  });
}
