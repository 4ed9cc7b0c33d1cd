// One outbound webhook request (D10): undici with an SSRF-checking connector, verified TLS, no redirects,
// a hard deadline, and at most 1024 bytes of the response body read.
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import { BlockedDestinationError, type LookupFunction, resolveDestination, systemLookup } from './ssrf.ts';

/** Contract section 8: the stored response snippet. */
export const SNIPPET_BYTES = 1024;
/** Prefix of every failure_reason of a timeout, so a settled pending_retry attempt keeps its kind. */
export const TIMEOUT_REASON_PREFIX = 'timeout';

export interface TransportOptions {
  /** WEBHOOK_TIMEOUT_MS: the whole request, connection included. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: lifts the SSRF address check (development and tests). */
  allowPrivateTargets: boolean;
  /**
   * Extra trusted CA certificates (PEM), on top of the system store and NODE_EXTRA_CA_CERTS; tests pass
   * the CA of their self-signed receivers here.
   */
  ca?: string | Buffer | Array<string | Buffer> | undefined;
  /** A PEM file of extra trusted CAs (WEBHOOK_CA_FILE), read once when the agent is built. */
  caFile?: string | undefined;
  /** DNS resolution; tests inject answers to exercise the SSRF rules on hostnames. */
  lookup?: LookupFunction | undefined;
}

/**
 * The dispatcher of every delivery request. Its connector resolves the host, refuses the connection if
 * any address is not public (unless allowed), then dials the checked address itself while TLS still
 * verifies the certificate against the original host name (SNI comes from the Host).
 */
export function createDeliveryAgent(options: TransportOptions): Agent {
  const extra = [
    ...(options.ca === undefined ? [] : [options.ca].flat()),
    ...(options.caFile ? [readFileSync(options.caFile)] : []),
  ];
  // `ca` replaces Node's default store, so the defaults (system + NODE_EXTRA_CA_CERTS) are kept beside it.
  const ca = extra.length > 0 ? [...tls.getCACertificates('default'), ...extra] : undefined;
  const dial = buildConnector({
    timeout: options.timeoutMs,
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
  });
  const lookup = options.lookup ?? systemLookup;
  const connect: buildConnector.connector = (connectOptions, callback) => {
    resolveDestination(connectOptions.hostname, { lookup, allowPrivate: options.allowPrivateTargets }).then(
      (addresses) => dial({ ...connectOptions, hostname: addresses[0]!.address }, callback),
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({
    connect,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4_000,
  });
}

export type SendResult =
  /** The endpoint answered with a status line: 2xx is success, anything else (3xx included) a failure. */
  | { kind: 'response'; statusCode: number; bodySnippet: string; latencyMs: number }
  /** Over the deadline before a status line arrived: latency reports the timeout itself (contract). */
  | { kind: 'timeout'; latencyMs: number; reason: string }
  /** No answer: refused, DNS, TLS, reset, SSRF refusal. */
  | { kind: 'error'; latencyMs: number; reason: string };

export interface SendInput {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the request without an outcome (worker shutdown). */
  signal?: AbortSignal | undefined;
}

/** Thrown when `signal` aborted the request: there is no outcome to record. */
export class SendAbortedError extends Error {}

export async function sendWebhook(agent: Agent, input: SendInput): Promise<SendResult> {
  // Aborted before it started (worker stopping): nothing may leave, since the lease is about to be released.
  if (input.signal?.aborted) throw new SendAbortedError('aborted');
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let parsed: URL;
  try {
    parsed = new URL(input.url);
  } catch {
    return { kind: 'error', latencyMs: 0, reason: 'endpoint_url is not a valid URL' };
  }
  if (parsed.protocol !== 'https:') {
    return { kind: 'error', latencyMs: 0, reason: 'endpoint_url must use https' };
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('deadline'));
  }, input.timeoutMs);
  const onAbort = () => controller.abort(new SendAbortedError('aborted'));
  input.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // undici's request() never follows redirects: a 3xx comes back as it is and counts as a failure.
    const response = await request(parsed, {
      method: 'POST',
      headers: input.headers,
      body: input.body,
      dispatcher: agent,
      signal: controller.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= SNIPPET_BYTES) break;
      }
    } catch {
      // The deadline or the connection ended while the body was read: the status already decided the
      // outcome; keep what arrived.
    } finally {
      // Destroying the body closes the connection: the rest of a large answer is not downloaded.
      if (!response.body.destroyed) response.body.destroy();
    }
    if (input.signal?.aborted) throw new SendAbortedError('aborted');
    return {
      kind: 'response',
      statusCode: response.statusCode,
      bodySnippet: snippet(Buffer.concat(chunks).subarray(0, SNIPPET_BYTES)),
      latencyMs: elapsed(),
    };
  } catch (error) {
    if (input.signal?.aborted) throw new SendAbortedError('aborted');
    const code = errorCode(error);
    if (timedOut || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') {
      return {
        kind: 'timeout',
        latencyMs: input.timeoutMs,
        reason: `${TIMEOUT_REASON_PREFIX}: no response within ${input.timeoutMs} ms`,
      };
    }
    return { kind: 'error', latencyMs: elapsed(), reason: describeError(error) };
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The stored text of at most 1024 bytes: a multi-byte character cut at the limit is dropped rather than
 * stored as a replacement character, and NUL (which PostgreSQL text cannot hold) is removed.
 */
function snippet(bytes: Buffer): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what must be removed
  return new TextDecoder('utf-8').decode(bytes, { stream: true }).replace(/\u0000/g, '');
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    if ('code' in current && typeof current.code === 'string') return current.code;
    current = 'cause' in current ? current.cause : undefined;
  }
  return undefined;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL|EPROTO|HOSTNAME/;

/** A short failure_reason for an attempt that got no status line. */
export function describeError(error: unknown): string {
  if (error instanceof BlockedDestinationError) return error.message;
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  let reason: string;
  switch (code) {
    case 'ECONNREFUSED':
      reason = 'connection refused';
      break;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      reason = 'connection closed by the endpoint before a response';
      break;
    case 'ENOTFOUND':
      reason = 'DNS lookup failed: host not found';
      break;
    case 'EAI_AGAIN':
      reason = 'DNS lookup failed: temporary failure';
      break;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      reason = 'host unreachable';
      break;
    default:
      reason = code && TLS_CODES.test(code) ? `TLS error: ${message}` : message;
  }
  const full = code && !reason.includes(code) ? `${reason} (${code})` : reason;
  return full.length > 300 ? `${full.slice(0, 297)}...` : full;
}
