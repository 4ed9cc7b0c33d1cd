// The delivery-limit client, run as a process of its own (as a worker is): `count` Standard Webhooks
// requests signed one by one with the worker's own signing code, sent by a bare undici Agent with
// `concurrency` requests in flight, to the bench receiver. No database. Prints one JSON line.
//
//   node bench/lib/limit-client.ts '{"url":..., "count":..., "concurrency":..., "secret":..., "caFile":...}'
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { newDeliveryHeaderId, newEventPublicId } from '../../src/platform/ids.ts';
import { signingKey, webhookHeaders } from '../../src/webhooks/delivery/sign.ts';
import { buildPayload } from '../../src/webhooks/publish.ts';
import { EVENT_TYPE, transferData } from './seed.ts';

export interface LimitClientInput {
  url: string;
  count: number;
  concurrency: number;
  secret: string;
  caFile: string;
}

export interface LimitClientOutput {
  sent: number;
  failures: number;
  firstFailure: string | undefined;
  elapsedMs: number;
  /** This process's CPU milliseconds (user + system) from the clock start to the last answer. */
  cpuMs: number;
}

async function main(input: LimitClientInput): Promise<LimitClientOutput> {
  // The payloads exist before the clock starts, as the stored envelopes do for a worker.
  const events = Array.from({ length: input.count }, (_, index) => {
    const publicId = newEventPublicId();
    return { publicId, body: buildPayload(publicId, EVENT_TYPE, new Date(), transferData(index)) };
  });
  const agent = new Agent({ connect: { ca: readFileSync(input.caFile, 'utf8') }, keepAliveTimeout: 4_000 });
  const key = signingKey(input.secret); // derived once per secret, as a worker does once per claim
  let next = 0;
  let sent = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const lane = async () => {
    while (next < events.length) {
      const event = events[next++]!;
      const headers = webhookHeaders({
        key,
        eventPublicId: event.publicId,
        body: event.body,
        timestamp: Math.floor(Date.now() / 1000),
        deliveryId: newDeliveryHeaderId(),
      });
      try {
        const response = await request(input.url, {
          method: 'POST',
          headers,
          body: event.body,
          dispatcher: agent,
        });
        await response.body.dump();
        if (response.statusCode >= 200 && response.statusCode < 300) sent++;
        else {
          failures++;
          firstFailure ??= `HTTP ${response.statusCode}`;
        }
      } catch (error) {
        failures++;
        firstFailure ??= (error as Error).message;
      }
    }
  };
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: input.concurrency }, lane));
  const cpu = process.cpuUsage(cpuBefore);
  const elapsedMs = performance.now() - started;
  await agent.close();
  return { sent, failures, firstFailure, elapsedMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

if (import.meta.main) {
  const input = JSON.parse(process.argv[2] ?? '{}') as LimitClientInput;
  main(input).then(
    (output) => process.stdout.write(`${JSON.stringify(output)}\n`),
    (error: unknown) => {
      process.stderr.write(`limit client failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
