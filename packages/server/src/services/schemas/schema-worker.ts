/**
 * A worker thread of services/schemas/schema-compiler.ts: checks and compiles benchmark JSON Schemas, whose
 * cost is not bounded by their size, away from the server's event loop. Holds nothing between jobs
 * (the meta-schemas aside), so that it can be terminated at any time.
 */
import { parentPort } from 'node:worker_threads';
import type { ErrorDetail } from '../../core/errors.ts';
import { checkJsonSchema, validatorCodeCache, validatorScript, validatorSource } from './json-schema.ts';

/** `check`: the problems of a schema (POST and PUT /benchmarks); `code`: its validator's code. */
export interface SchemaJob {
  id: number;
  kind: 'check' | 'code';
  /** The schema as JSON text (cheaper to send than the object). */
  text: string;
}

export type SchemaAnswer =
  | { ready: true }
  | { id: number; problems: ErrorDetail[] | null }
  | { id: number; source: string; cache: Uint8Array }
  | { id: number; error: string };

function answer(job: SchemaJob): SchemaAnswer {
  const schema = JSON.parse(job.text) as unknown;
  if (job.kind === 'check') return { id: job.id, problems: checkJsonSchema(schema) };
  try {
    const source = validatorSource(schema);
    // A copy of its own (V8's buffer may share memory), so that it can be moved rather than copied.
    return { id: job.id, source, cache: new Uint8Array(validatorCodeCache(validatorScript(source))) };
  } catch (err) {
    return { id: job.id, error: (err as Error).message };
  }
}

parentPort!.on('message', (job: SchemaJob) => {
  const reply = answer(job);
  parentPort!.postMessage(reply, 'cache' in reply ? [reply.cache.buffer as ArrayBuffer] : []);
});
// The 2020-12 meta-schema (the default draft) compiled now, then ready: the time budget of a job
// counts that job's work only.
checkJsonSchema({});
parentPort!.postMessage({ ready: true } satisfies SchemaAnswer);
