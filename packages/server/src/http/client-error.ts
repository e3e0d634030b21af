import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { titleOf } from '../core/errors.ts';
import { problemBody } from './problem.ts';

const KNOWN: Record<string, [status: number, code: string, detail: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', 'The request line or headers are larger than the server accepts.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'The request was not received in time.'],
};

/** Requests Node's HTTP parser refuses before Koa (headers too large, malformed HTTP) get a problem+json answer too. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, code, detail] = KNOWN[err.code ?? ''] ?? [400, 'BAD_REQUEST', 'The request is not valid HTTP.'];
    const requestId = randomUUID();
    const body = JSON.stringify(problemBody(status, code, detail, requestId));
    socket.end(
      `HTTP/1.1 ${status} ${titleOf(status)}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n" +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
