/**
 * `node bench/export-reader.ts <url>`: the reader of the measured export (bench/export-run.ts), in a
 * process of its own (in the harness's large heap the same reading cost eight times the CPU): prints
 * `sending`, reads the answer counting bytes and line ends only, then prints its ReaderResult as JSON.
 */
import { get } from 'node:http';

export interface ReaderResult {
  status: number;
  results: number;
  bytes: number;
  seconds: number;
  firstByteMs: number;
  error: string | null;
}

function read(url: string): Promise<ReaderResult> {
  const started = performance.now();
  const out: ReaderResult = { status: 0, results: 0, bytes: 0, seconds: 0, firstByteMs: 0, error: null };
  const done = (error: string | null) => ({ ...out, error: out.error ?? error, seconds: (performance.now() - started) / 1000 });
  process.stdout.write('sending\n'); // the parent starts sampling the server's memory
  return new Promise((resolve) => {
    const req = get(url, { headers: { accept: 'application/x-ndjson' } }, (res) => {
      out.status = res.statusCode ?? 0;
      res.on('data', (chunk: Buffer) => {
        if (out.bytes === 0) out.firstByteMs = Math.round(performance.now() - started);
        out.bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) out.results++;
      });
      res.on('end', () => resolve(done(res.complete ? null : 'the answer broke off')));
      res.on('error', (err) => resolve(done(err.message)));
    });
    req.on('error', (err) => resolve(done(err.message)));
  });
}

if (process.argv[2]) process.stdout.write(`${JSON.stringify(await read(process.argv[2]))}\n`);
