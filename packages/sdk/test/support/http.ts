/**
 * Small real HTTP servers on 127.0.0.1 for what the service under test cannot be made to do on
 * demand: answer 503 then recover, never answer, or be gone. They speak real HTTP over real sockets.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  url: string;
  /** Every request received: method, raw URL (path and query as sent on the wire) and headers. */
  seen: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  /** TCP connections accepted so far (to observe keep-alive reuse). */
  connections(): number;
  close(): Promise<void>;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, seen: LocalServer['seen']) => void | Promise<void>,
): Promise<LocalServer> {
  const seen: LocalServer['seen'] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    // A handler that fails cuts the connection: the client under test sees it, nothing goes unhandled.
    Promise.resolve(handler(req, res, seen)).catch((err: unknown) => res.destroy(err as Error));
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Forwards a request to `target` (a real server) and streams its answer back. */
export function proxy(target: string, req: IncomingMessage, res: ServerResponse): void {
  const upstream = httpRequest(
    new URL(req.url ?? '/', target),
    { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
}

/** A port nothing listens on: bound, then released. */
export async function closedPort(): Promise<string> {
  const s = await listen(() => {});
  await s.close();
  return s.url;
}
