// Prometheus metrics: one registry per process, exposed at GET /metrics.
import client from 'prom-client';

export class Metrics {
  readonly registry = new client.Registry();
  readonly httpRequests: client.Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: client.Histogram<'method' | 'route' | 'status'>;

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new client.Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template, method and status code',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status code',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
  }
}
