import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { benchmarkColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { UsageError } from '../../errors.ts';
import { readAll, type Io } from '../../io.ts';
import { splitImageTag } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string; schema?: string; description?: string; url?: string }>;

export function register(program: Command): void {
  group(program, 'benchmarks')
    .command('create')
    .description('Submit a benchmark for review (approved at once when an administrator submits it)')
    .argument('<image:tag>', 'container image and tag, e.g. ghcr.io/org/bench:1.0')
    .option('--schema <file>', 'JSON Schema of its results: a file, - for stdin, or inline JSON (default {}: any result)')
    .option('--description <text>', 'short description')
    .option('--url <url>', 'documentation URL')
    .addHelpText(
      'after',
      '\nExample:\n  benchmarks benchmarks create ghcr.io/org/bench:1.0 --schema schema.json --url https://org.example/bench',
    )
    .action(runs(run, ['ref']));
}

/** A JSON document from a file, stdin (`-`) or the argument itself when it looks like JSON. */
export async function readJsonArgument(value: string, io: Io, what: string): Promise<unknown> {
  const inline = /^\s*[[{]/.test(value) || value === 'true' || value === 'false';
  let text: string;
  try {
    text = inline ? value : value === '-' ? await readAll(io.stdin) : await readFile(value, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read ${what} from ${value}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} in ${inline ? 'the argument' : value} is not valid JSON: ${(err as Error).message}`);
  }
}

export async function run(options: Options, io: Io): Promise<void> {
  const parts = splitImageTag(options.ref);
  if (!parts) throw new UsageError(`'${options.ref}' is not image:tag (e.g. ghcr.io/org/bench:1.0).`);
  const schema = options.schema === undefined ? {} : await readJsonArgument(options.schema, io, 'The JSON Schema');
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new UsageError('The JSON Schema must be a JSON object or a boolean.');
  }
  await withContext(options, io, async (ctx) => {
    const created = await ctx.client.benchmarks.create({
      container_image: parts.image,
      container_tag: parts.tag,
      json_schema: schema as Record<string, unknown> | boolean,
      description: options.description ?? null,
      url: options.url ?? null,
    });
    ctx.info(`Created benchmark ${created.name} (${created.status === 'approved' ? 'approved' : 'waiting for review'}).`);
    ctx.printItem(created, benchmarkColumns);
  });
}
