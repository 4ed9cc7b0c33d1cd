// Scenario 2, delivery-limit: what this machine can push through the same receiver without the service:
// N Standard Webhooks requests, each signed as the worker signs, from a bare undici client process with
// WEBHOOK_CONCURRENCY requests in flight. No database. The ceiling delivery-throughput is compared with.
import { generateSigningSecret } from '../../src/platform/secrets.ts';
import { sampleMachineCpu, selfCpuMs } from '../lib/cpu.ts';
import { runScript } from '../lib/processes.ts';
import { startReceiver } from '../lib/receiver.ts';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.ts';
import { perSecond, round, waitUntil } from '../lib/util.ts';

interface LimitClientOutput {
  sent: number;
  failures: number;
  firstFailure: string | undefined;
  elapsedMs: number;
  cpuMs: number;
}

export interface LimitMeasurement {
  requests: number;
  /** Unique requests per second at the receiver, first arrival to last acknowledgement. */
  rate: number;
  receiverMs: number;
  clientMs: number;
  failures: number;
  duplicates: number;
  signaturesVerified: number;
  badSignatures: number;
  /**
   * CPU milliseconds per request: the client process (while sending), the bench process (the receiver),
   * and the whole machine over the receiver's window with the share of its cores that was busy.
   */
  cpuPerRequest: { clientMs: number; receiverMs: number; machineMs?: number; machineBusyPercent?: number };
}

/** One delivery-limit measurement of `count` requests (delivery-throughput uses it when run on its own). */
export async function measureLimit(context: ScenarioContext, count: number): Promise<LimitMeasurement> {
  const { settings, signal } = context;
  const certificate = context.certificate();
  const secret = generateSigningSecret();
  const receiver = await startReceiver({ certificate, secretFor: () => secret });
  context.defer(() => receiver.close());
  const machine = sampleMachineCpu();
  try {
    const benchCpuBefore = selfCpuMs();
    const output = await runScript<LimitClientOutput>(
      'limit-client.ts',
      [
        JSON.stringify({
          url: `${receiver.origin}/limit`,
          count,
          concurrency: settings.concurrency,
          secret,
          caFile: certificate.certPath,
        }),
      ],
      { timeoutMs: 60_000 + count * 10, signal },
    );
    if (output.failures > 0) {
      throw new Error(`${output.failures} of ${count} requests failed; first: ${output.firstFailure}`);
    }
    await waitUntil('every request acknowledged', () => receiver.unique >= count, {
      timeoutMs: 10_000,
      signal,
      progress: () => `${receiver.unique} of ${count}`,
    });
    const receiverCpuMs = selfCpuMs() - benchCpuBefore;
    machine.stop();
    const receiverMs = receiver.lastAck - receiver.firstArrival;
    const machineCpu = machine.perItem(receiver.firstArrival, receiver.lastAck, count);
    const perRequest = (ms: number) => round(ms / count, 3);
    return {
      requests: count,
      rate: perSecond(count, receiverMs),
      receiverMs: round(receiverMs),
      clientMs: round(output.elapsedMs),
      failures: output.failures,
      duplicates: receiver.requests - receiver.unique,
      signaturesVerified: receiver.verified,
      badSignatures: receiver.badSignatures,
      cpuPerRequest: {
        clientMs: perRequest(output.cpuMs),
        receiverMs: perRequest(receiverCpuMs),
        ...(machineCpu ? { machineMs: machineCpu.ms, machineBusyPercent: machineCpu.busyPercent } : {}),
      },
    };
  } finally {
    machine.stop();
    await receiver.close();
  }
}

export const deliveryLimit: Scenario = {
  name: 'delivery-limit',
  title: 'Signed requests from a bare undici client to the same receiver, no database (the ceiling)',
  measures:
    'Requests per second a bare undici client (own process, WEBHOOK_CONCURRENCY in flight, Standard Webhooks ' +
    'HMAC per request) gets through the HTTPS receiver on this machine, first arrival to last 200. ' +
    'Leaves out everything the engine adds: claiming, secrets decryption, recording outcomes in PostgreSQL.',
  timeoutMs: (settings) => 120_000 + settings.events * 20,
  async run(context): Promise<ScenarioResult> {
    const { settings } = context;
    context.log(`sending ${settings.events} signed requests, ${settings.concurrency} in flight`);
    const limit = await measureLimit(context, settings.events);
    const throughput = context.previous.get('delivery-throughput');
    const oneWorker = throughput?.metrics.find((metric) => metric.name === 'deliveries/s, 1 worker')?.value;
    const metrics: ScenarioResult['metrics'] = [
      { name: 'requests/s (limit)', value: limit.rate, unit: '/s' },
      { name: 'requests', value: limit.requests, unit: '' },
      { name: 'CPU ms per request: client', value: limit.cpuPerRequest.clientMs, unit: 'ms' },
      { name: 'CPU ms per request: receiver', value: limit.cpuPerRequest.receiverMs, unit: 'ms' },
      { name: 'CPU ms per request: machine', value: limit.cpuPerRequest.machineMs ?? null, unit: 'ms' },
      { name: 'cores busy', value: limit.cpuPerRequest.machineBusyPercent ?? null, unit: '%' },
    ];
    if (typeof oneWorker === 'number') {
      metrics.push({
        name: 'delivery-throughput 1 worker / limit',
        value: round(oneWorker / limit.rate, 2),
        unit: '×',
        target: '≥ 0.5',
        pass: oneWorker / limit.rate >= 0.5,
      });
    }
    const problems: string[] = [];
    if (limit.badSignatures > 0) problems.push(`${limit.badSignatures} signatures did not verify`);
    if (limit.duplicates > 0) problems.push(`${limit.duplicates} duplicate requests at the receiver`);
    return {
      metrics,
      details: { ...limit, concurrency: settings.concurrency },
      notes: [],
      problems,
    };
  },
};
