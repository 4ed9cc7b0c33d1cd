// Open-loop load at a fixed rate from a process of its own: request i is due at start + i / rate and is sent
// then whether or not earlier ones have been answered; its latency runs from the moment it was due (not sent)
// to the end of its answer, so a stalled generator or server shows in the figures instead of hiding
// (coordinated omission). autocannon's overallRate sends each second's requests in a burst at its start, which
// measures queueing behind that burst instead. Bodies are used in turn. Prints one JSON line (LoadOutput).
//
//   node bench/lib/paced-child.ts '<PacedInput as JSON>'
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { LoadOutput } from './load-child.ts';
import { percentile } from './stats.ts';

export interface PacedInput {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  bodies?: string[];
  /** Requests per second. */
  rate: number;
  durationSeconds: number;
}

async function main(input: PacedInput): Promise<LoadOutput> {
  const url = new URL(input.url);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  const bodies = input.bodies ?? [];
  const total = Math.round(input.rate * input.durationSeconds);
  const interval = 1000 / input.rate;
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let index = 0; index < total; index++) {
    const due = start + index * interval;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(
      pool
        .request({
          path: `${url.pathname}${url.search}`,
          method: input.method,
          headers: input.headers,
          ...(bodies.length > 0 ? { body: bodies[index % bodies.length] } : {}),
        })
        .then(async (response) => {
          await response.body.dump();
          latencies.push(performance.now() - due);
          statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
          if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(pending);
  const elapsed = performance.now() - start;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 100) / 100;
  const sum = latencies.reduce((acc, value) => acc + value, 0);
  return {
    requestsPerSecond: Math.round((latencies.length / elapsed) * 1000 * 10) / 10,
    total: latencies.length,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? Number.NaN),
      mean: round(latencies.length > 0 ? sum / latencies.length : Number.NaN),
    },
    non2xx,
    errors,
    timeouts: 0,
    statusCodes,
  };
}

main(JSON.parse(process.argv[2] ?? '{}') as PacedInput).then(
  (output) => process.stdout.write(`${JSON.stringify(output)}\n`),
  (error: unknown) => {
    process.stderr.write(`paced load failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
