import type { Command } from 'commander';
import { benchmarkColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { UsageError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { Resolver, splitImageTag } from '../../resolve.ts';
import { orNull, requireChanges } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { readJsonArgument } from './create.ts';

export type Options = WithGlobals<{ ref: string; name?: string; schema?: string; description?: string; url?: string }>;

export function register(program: Command): void {
  group(program, 'benchmarks')
    .command('update')
    .description('Change fields of a benchmark (admin); the others keep their values')
    .argument('<benchmark>', 'id or image:tag')
    .option('--name <image:tag>', 'new container image and tag')
    .option('--schema <file>', 'new JSON Schema of its results: a file, - for stdin, or inline JSON')
    .option('--description <text>', 'new description ("" clears it)')
    .option('--url <url>', 'new documentation URL ("" clears it)')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks benchmarks update ghcr.io/org/bench:1.0 --schema schema-v2.json\n  benchmarks benchmarks update ghcr.io/org/bench:1.0 --description "" --url https://org.example/bench',
    )
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  requireChanges(options, ['--name', '--schema', '--description', '--url']);
  const renamed = options.name === undefined ? undefined : splitImageTag(options.name);
  if (options.name !== undefined && !renamed) throw new UsageError(`'${options.name}' is not image:tag (e.g. ghcr.io/org/bench:1.1).`);
  const schema = options.schema === undefined ? undefined : await readJsonArgument(options.schema, io, 'The JSON Schema');
  if (schema !== undefined && typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new UsageError('The JSON Schema must be a JSON object or a boolean.');
  }
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.ref);
    const current = await ctx.client.benchmarks.get(id);
    const updated = await ctx.client.benchmarks.update(id, {
      container_image: renamed?.image ?? current.container_image,
      container_tag: renamed?.tag ?? current.container_tag,
      json_schema: (schema as Record<string, unknown> | boolean | undefined) ?? current.json_schema,
      description: orNull(options.description, current.description),
      url: orNull(options.url, current.url),
    });
    ctx.info(`Updated benchmark ${updated.name}.`);
    ctx.printItem(updated, benchmarkColumns);
  });
}
