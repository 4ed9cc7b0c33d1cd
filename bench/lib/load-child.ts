// HTTP load from a process of its own (so that it does not share the service's or the bench's event loop):
// autocannon against one endpoint, the body of each request taken in turn from `bodies`. Prints one JSON line.
//
//   node bench/lib/load-child.ts '<LoadInput as JSON>'
import autocannon from 'autocannon';

export interface LoadInput {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Request bodies, used round-robin (none: no body). */
  bodies?: string[];
  connections: number;
  durationSeconds: number;
}

export interface LoadOutput {
  requestsPerSecond: number;
  total: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

async function main(input: LoadInput): Promise<LoadOutput> {
  const bodies = input.bodies ?? [];
  let next = 0;
  const result = await autocannon({
    url: input.url,
    connections: input.connections,
    duration: input.durationSeconds,
    requests: [
      {
        method: input.method,
        headers: input.headers,
        ...(bodies.length === 1 ? { body: bodies[0] } : {}),
        ...(bodies.length > 1
          ? {
              setupRequest: (request: Record<string, unknown>) => ({
                ...request,
                body: bodies[next++ % bodies.length],
              }),
            }
          : {}),
      },
    ],
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[code] = Number(stats.count);
  return {
    requestsPerSecond: Math.round((result.requests.total / result.duration) * 10) / 10,
    total: result.requests.total,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.average,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

main(JSON.parse(process.argv[2] ?? '{}') as LoadInput).then(
  (output) => process.stdout.write(`${JSON.stringify(output)}\n`),
  (error: unknown) => {
    process.stderr.write(`load failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
