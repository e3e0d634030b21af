/** A real HTTP receiver of webhooks on loopback: records every request, answers as the test says. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** `answer` gets the request's index (0 first) and answers it; returning nothing leaves it hanging. */
export type Answer = (n: number, got: Received, res: ServerResponse) => void;

export const status =
  (code: number, headers: Record<string, string> = {}, body = '') =>
  (_n: number, _got: Received, res: ServerResponse) => {
    res.writeHead(code, headers).end(body);
  };

export interface Receiver {
  url: string;
  received: Received[];
  answer: Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = status(204)): Promise<Receiver> {
  const received: Received[] = [];
  const receiver: Receiver = { url: '', received, answer, close: async () => undefined };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const got = { headers: req.headers, body, at: Date.now() };
      received.push(got);
      receiver.answer(received.length - 1, got, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** Resolves once `check` holds, polling; fails naming `what` after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
