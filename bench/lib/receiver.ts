// The webhook receiver of the delivery scenarios: an HTTPS server on 127.0.0.1 with a self-signed
// certificate made at run time (openssl), answering 200 with an empty body, at once or after a per-path
// delay. It counts unique (path, webhook-id) pairs, keeps each pair's first arrival time, and verifies the
// Standard Webhooks signature of the first requests of every path.
import { createServer, type Server } from 'node:https';
import { Webhook } from 'standardwebhooks';
import {
  makeSelfSignedCertificate,
  type SelfSignedCertificate,
} from '../../scripts/lib/self-signed-certificate.ts';
import { now } from './util.ts';

export type Certificate = SelfSignedCertificate;

/** A self-signed certificate for 127.0.0.1 and localhost, written to `dir`. */
export function makeCertificate(dir: string): Certificate {
  return makeSelfSignedCertificate(dir, 'payment-service bench receiver', ['DNS:localhost', 'IP:127.0.0.1']);
}

export interface PathStats {
  requests: number;
  unique: number;
  firstArrival: number;
  lastAck: number;
}

export interface Receiver {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** Requests received (duplicates included). */
  readonly requests: number;
  /** Unique (path, webhook-id) pairs acknowledged. */
  readonly unique: number;
  /** First arrival of any request (performance.now() ms); NaN before the first. */
  readonly firstArrival: number;
  /** When the latest new pair was acknowledged (the 200 written). */
  readonly lastAck: number;
  /** First arrival time of each pair, keyed `${path} ${webhook-id}`. */
  readonly arrivals: ReadonlyMap<string, number>;
  readonly byPath: ReadonlyMap<string, PathStats>;
  /** Requests whose signature did not verify (only the first `verifyPerPath` of each path are checked). */
  readonly badSignatures: number;
  readonly verified: number;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  certificate: Certificate;
  /** Milliseconds to hold the answer of a request to `path` (default 0: answer at once). */
  delayFor?: (path: string) => number;
  /** Signing secret (`whsec_...`) of the subscription behind `path`, to verify signatures. */
  secretFor?: (path: string) => string | undefined;
  /** Requests verified per path (default 20). */
  verifyPerPath?: number;
}

export const arrivalKey = (urlPath: string, webhookId: string): string => `${urlPath} ${webhookId}`;

export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const verifyPerPath = options.verifyPerPath ?? 20;
  const verifiers = new Map<string, Webhook | undefined>();
  const arrivals = new Map<string, number>();
  const byPath = new Map<string, PathStats>();
  let requests = 0;
  let unique = 0;
  let firstArrival = Number.NaN;
  let lastAck = Number.NaN;
  let badSignatures = 0;
  let verified = 0;

  const verifierFor = (urlPath: string): Webhook | undefined => {
    if (!verifiers.has(urlPath)) {
      const secret = options.secretFor?.(urlPath);
      verifiers.set(urlPath, secret ? new Webhook(secret) : undefined);
    }
    return verifiers.get(urlPath);
  };

  const server: Server = createServer(
    { key: options.certificate.key, cert: options.certificate.cert },
    (request, response) => {
      const arrived = now();
      if (Number.isNaN(firstArrival)) firstArrival = arrived;
      requests++;
      const urlPath = request.url ?? '/';
      let stats = byPath.get(urlPath);
      if (!stats) {
        stats = { requests: 0, unique: 0, firstArrival: arrived, lastAck: Number.NaN };
        byPath.set(urlPath, stats);
      }
      stats.requests++;
      const webhookId = String(request.headers['webhook-id'] ?? '');
      const key = arrivalKey(urlPath, webhookId);
      const isNew = webhookId !== '' && !arrivals.has(key);
      if (isNew) arrivals.set(key, arrived);
      const verifier = isNew && stats.requests <= verifyPerPath ? verifierFor(urlPath) : undefined;
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => {
        if (verifier) chunks.push(chunk);
      });
      request.on('end', () => {
        if (verifier) {
          try {
            verifier.verify(Buffer.concat(chunks).toString('utf8'), {
              'webhook-id': webhookId,
              'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
              'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
            });
            verified++;
          } catch {
            badSignatures++;
          }
        }
        const answer = () => {
          response.writeHead(200, { 'content-length': '0' });
          response.end();
          if (isNew) {
            const acked = now();
            unique++;
            stats.unique++;
            lastAck = acked;
            stats.lastAck = acked;
          }
        };
        const wait = options.delayFor?.(urlPath) ?? 0;
        if (wait > 0) setTimeout(answer, wait);
        else answer();
      });
    },
  );
  server.keepAliveTimeout = 30_000;
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  let closed: Promise<void> | undefined;
  return {
    origin: `https://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get unique() {
      return unique;
    },
    get firstArrival() {
      return firstArrival;
    },
    get lastAck() {
      return lastAck;
    },
    arrivals,
    byPath,
    get badSignatures() {
      return badSignatures;
    },
    get verified() {
      return verified;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
