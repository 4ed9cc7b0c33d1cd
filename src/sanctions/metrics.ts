// Metrics of sanctions screening, registered in the process's registry (GET /metrics) on first use.
import client from 'prom-client';
import type { Metrics } from '../platform/metrics.ts';

export interface SanctionsMetrics {
  /** Time the engine takes to match one name (blocking and scoring), without the database. */
  matchSeconds: client.Histogram;
  /** Time to rebuild the match index after a list version changed (read, parse, index). */
  indexBuildSeconds: client.Histogram;
}

const byRegistry = new WeakMap<Metrics, SanctionsMetrics>();

export function sanctionsMetrics(metrics: Metrics): SanctionsMetrics {
  let found = byRegistry.get(metrics);
  if (!found) {
    found = {
      matchSeconds: new client.Histogram({
        name: 'sanctions_match_duration_seconds',
        help: 'Time to match one screened name against every sanctions list (in memory)',
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
        registers: [metrics.registry],
      }),
      indexBuildSeconds: new client.Histogram({
        name: 'sanctions_index_build_duration_seconds',
        help: 'Time to rebuild the in-memory match index after an import changed a list version',
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [metrics.registry],
      }),
    };
    byRegistry.set(metrics, found);
  }
  return found;
}
