// A real HTTPS endpoint on 127.0.0.1 for delivery tests, with a self-signed certificate made at test time
// (openssl). Pass `testCertificate().cert` as a trusted CA to the code under test, or its path as
// NODE_EXTRA_CA_CERTS / WEBHOOK_CA_FILE to a child process.
import { mkdtempSync } from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import {
  makeSelfSignedCertificate,
  type SelfSignedCertificate,
} from '../../scripts/lib/self-signed-certificate.ts';

export type TestCertificate = SelfSignedCertificate;

let cached: TestCertificate | undefined;

/**
 * One self-signed certificate per test process, valid for localhost, hook.example (tests resolve it
 * themselves), 127.0.0.1 and ::1.
 */
export function testCertificate(): TestCertificate {
  cached ??= makeSelfSignedCertificate(
    mkdtempSync(path.join(tmpdir(), 'ps-test-cert-')),
    'payment-service test receiver',
    ['DNS:localhost', 'DNS:hook.example', 'IP:127.0.0.1', 'IP:::1'],
  );
  return cached;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  receivedAt: number;
}

/** Answers one request; the default answers 200 "ok". May hold the response as long as it likes. */
export type ReceiverHandler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  setHandler(handler: ReceiverHandler): void;
  /** Resolves once `count` requests have arrived (in total). */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export const answer =
  (status: number, body = '', headers: Record<string, string> = {}): ReceiverHandler =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };

export async function startHttpsReceiver(
  handler: ReceiverHandler = answer(200, 'ok'),
): Promise<HttpsReceiver> {
  const { key, cert } = testCertificate();
  let current = handler;
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer({ key, cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      requests.push(received);
      for (const waiter of waiters) waiter();
      Promise.resolve(current(received, response)).catch(() => {
        if (!response.headersSent) response.writeHead(500);
        response.end();
      });
    });
  });
  server.on('clientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    requests,
    setHandler(next) {
      current = next;
    },
    waitForRequests(count, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(requests.slice());
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} requests, got ${requests.length} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Verifies a received request the Standard Webhooks way, as an integrator would; returns the payload. */
export function verifyDelivery(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}
