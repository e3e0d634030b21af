/**
 * HTTP load with autocannon's programmatic API: `connections` keep-alive connections send requests
 * for `seconds`, each request the next of `variants` (so ids and filters vary across requests).
 * Latency percentiles are computed from the time of every 2xx response as autocannon measures it
 * (autocannon's own summary has no p95); autocannon's p50/p97.5/p99 are kept too.
 */
import autocannon, { type AutocannonRequest } from 'autocannon';
import { summarize, type LatencySummary } from './stats.ts';

export interface HttpRequestSpec {
  method: 'GET' | 'POST';
  /** Path and query, already URL-encoded. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface HttpRunStats {
  connections: number;
  seconds: number;
  /** Responses received (any status). */
  responses: number;
  /** Of which 2xx. */
  ok: number;
  /** Responses per second. */
  rps: number;
  /** 2xx responses per second. */
  okPerSecond: number;
  latencyMs: LatencySummary;
  autocannonMs: { p50: number; p97_5: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  meanResponseBytes: number;
}

export function runHttpLoad(baseUrl: string, variants: HttpRequestSpec[], connections: number, seconds: number): Promise<HttpRunStats> {
  let next = 0;
  const setupRequest = (request: AutocannonRequest): AutocannonRequest => {
    const v = variants[next++ % variants.length]!;
    return { ...request, method: v.method, path: v.path, headers: { accept: 'application/json', ...v.headers }, body: v.body ?? '' };
  };
  const latencies: number[] = [];
  let responses = 0;
  let bytes = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: baseUrl, connections, duration: seconds, timeout: 120, requests: [{ setupRequest }] },
      (err, result) => {
        if (err) return reject(err);
        const statusCodes: Record<string, number> = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
        const ok = result['2xx'];
        resolve({
          connections,
          seconds: result.duration,
          responses,
          ok,
          rps: Math.round((responses / result.duration) * 10) / 10,
          okPerSecond: Math.round((ok / result.duration) * 10) / 10,
          latencyMs: summarize(latencies),
          autocannonMs: { p50: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99 },
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          statusCodes,
          meanResponseBytes: responses ? Math.round(bytes / responses) : 0,
        });
      },
    );
    instance.on('response', (_client: unknown, status: number, resBytes: number, responseTime: number) => {
      responses++;
      bytes += resBytes;
      if (status >= 200 && status < 300) latencies.push(responseTime);
    });
  });
}
