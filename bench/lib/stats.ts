// Percentiles from sorted arrays (nearest rank): exact for the sample, no histogram library needed.

export interface Distribution {
  count: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array; `p` in 0..100. NaN for an empty array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Count, min, p50, p95, p99, max and mean of `values` (milliseconds in this project), rounded to 0.1. */
export function distribution(values: readonly number[]): Distribution {
  const sorted = Float64Array.from(values).sort();
  const list = Array.from(sorted);
  const r = (value: number) => Math.round(value * 10) / 10;
  let sum = 0;
  for (const value of list) sum += value;
  return {
    count: list.length,
    min: r(list[0] ?? Number.NaN),
    p50: r(percentile(list, 50)),
    p95: r(percentile(list, 95)),
    p99: r(percentile(list, 99)),
    max: r(list[list.length - 1] ?? Number.NaN),
    mean: r(list.length > 0 ? sum / list.length : Number.NaN),
  };
}
