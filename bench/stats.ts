/** Latency summaries: percentiles by nearest rank over every recorded sample. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

const r2 = (v: number) => Math.round(v * 100) / 100;

export function summarize(samples: number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const list = Array.from(sorted);
  const sum = list.reduce((a, b) => a + b, 0);
  return {
    count: list.length,
    mean: r2(list.length ? sum / list.length : 0),
    p50: r2(percentile(list, 50)),
    p95: r2(percentile(list, 95)),
    p99: r2(percentile(list, 99)),
    max: r2(list.length ? list[list.length - 1]! : 0),
  };
}
