/** The part of autocannon 9's programmatic API the harness uses (the package ships no types). */
declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  export interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    requests?: { setupRequest?: (request: AutocannonRequest) => AutocannonRequest }[];
  }
  export interface AutocannonResult {
    duration: number;
    '2xx': number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: { p50: number; p97_5: number; p99: number };
  }
  export interface Instance {
    on(event: 'response', listener: (client: unknown, status: number, resBytes: number, responseTime: number) => void): Instance;
    on(event: string, listener: (...args: any[]) => void): Instance;
    stop(): void;
  }
  export default function autocannon(options: AutocannonOptions, callback: (err: Error | null, result: AutocannonResult) => void): Instance;
}
