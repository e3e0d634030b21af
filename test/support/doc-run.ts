/**
 * Runs one document's examples against a demo of its own: every block the document does not mark,
 * in order, and the samples against what their commands print. Collects every problem rather than
 * stopping at the first, so that one run shows all that a change broke.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Block, planOf, transcript } from './doc-blocks.ts';
import type { DocContext, DocEnv } from './doc-context.ts';
import { type JsBlock, jsModule, outputsByBlock } from './doc-js.ts';
import { jsonShapeDifferences, parseSample, textShapeDifferences } from './doc-shapes.ts';
import { createShellSession, runCommand, runShellBlock, setVars, type ShellSession } from './doc-shell.ts';
import { ROOT, cleanEnv, start } from './run.ts';

const EXTENSIONS: Record<string, string> = { json: 'json', yaml: 'yaml', yml: 'yaml', ini: 'ini', nginx: 'conf' };

/** Whether a document needs a demo: some block of it runs or is checked. */
export const needsDemo = (blocks: Block[]) => blocks.some((b) => planOf(b).action !== 'skip' && planOf(b).action !== 'unmarked');

/** Runs the blocks of one document; returns what went wrong, none when every example did what the document says. */
export async function runDocument(blocks: Block[], context: DocContext, env: DocEnv, jsDir: string): Promise<string[]> {
  const problems: string[] = [];
  const where = (b: Block) => `${b.doc}:${b.line}`;
  const problem = (b: Block, text: string) => problems.push(`${where(b)}: ${text}`);
  const session = await createShellSession({
    dir: env.dir,
    tools: env.tools,
    vars: env.vars,
    exported: env.exported,
    substitutions: env.substitutions,
  });
  const given = { ...env.vars };
  const jsBlocks = blocks.filter((b) => b.kind === 'js' && planOf(b).action === 'run');
  let jsOutputs: Map<number, string> | undefined;
  for (const hook of [...(context.before ?? []), ...(context.after ?? [])]) {
    if (!blocks.some((b) => b.text.includes(hook.block)))
      problems.push(`${blocks[0]?.doc}: no block holds "${hook.block}" (test/support/doc-context.ts)`);
  }
  for (const block of blocks) {
    const plan = planOf(block);
    if (plan.action !== 'skip') {
      await context.beforeEach?.(env);
      // The JavaScript blocks run together, as one module, at the first of them: so do their hooks.
      const first = jsBlocks[0] === block;
      const hooked = block.kind === 'js' ? (first ? jsBlocks : []) : [block];
      for (const hook of context.before ?? []) if (hooked.some((b) => b.text.includes(hook.block))) await hook.run(env);
      const changed = Object.fromEntries(Object.entries(env.vars).filter(([k, v]) => given[k] !== v));
      await setVars(session, changed);
      Object.assign(given, changed);
    }
    let output = '';
    switch (plan.action) {
      case 'skip':
        continue;
      case 'unmarked':
        problem(block, plan.why);
        continue;
      case 'output':
        await checkOutput(session, block, plan.command, (text) => problem(block, text));
        continue;
      case 'check':
        await checkWith(session, block, plan.command, (text) => problem(block, text));
        continue;
    }
    if (block.kind === 'js') {
      if (!jsOutputs) jsOutputs = await runJs(jsBlocks, context, env, jsDir, (text) => problems.push(text));
      output = jsOutputs.get(block.line) ?? '';
    } else if (transcript(block.text)) {
      output = await runTranscript(session, block, (text) => problem(block, text));
    } else {
      const ran = await runShellBlock(session, block);
      for (const p of ran.problems) problem(block, `${p}\n${tail(ran.outcome.stderr)}`);
      output = ran.outcome.stdout;
    }
    for (const hook of context.after ?? []) {
      if (!block.text.includes(hook.block)) continue;
      try {
        hook.check(output, env);
      } catch (err) {
        problem(block, `what it printed is not what the document says: ${(err as Error).message}\n${tail(output)}`);
      }
    }
  }
  return problems;
}

const tail = (text: string) => text.split('\n').slice(-30).join('\n');

/** `checked by:` the command, given the block as the file `$BLOCK`, exits 0 (and its answers are 2xx). */
async function checkWith(session: ShellSession, block: Block, command: string, problem: (text: string) => void): Promise<void> {
  const file = join(session.dir, '.docex', `block-${block.line}.${EXTENSIONS[block.lang] ?? 'txt'}`);
  await writeFile(file, `${block.text}\n`);
  const { outcome, statuses } = await runCommand(session, command, {
    name: `check-${block.line}`,
    bothStreams: true,
    env: { BLOCK: file },
  });
  if (outcome.code !== 0) problem(`${command}: exit ${outcome.code ?? outcome.signal}\n${outcome.stdout}${outcome.stderr}`);
  if (statuses.some((s) => s < 200 || s > 299)) problem(`${command}: answered ${statuses.join(', ')}`);
}

/** A transcript's commands, each exiting 0 and printing what has the shape shown; returns what they printed. */
async function runTranscript(session: ShellSession, block: Block, problem: (text: string) => void): Promise<string> {
  let output = '';
  for (const step of transcript(block.text)!) {
    // A transcript shows a terminal, where the CLI prints tables.
    const { outcome } = await runCommand(session, step.command, {
      name: `transcript-${block.line}`,
      bothStreams: true,
      env: { BENCHMARKS_OUTPUT: 'table' },
    });
    if (outcome.code !== 0) problem(`${step.command}: exit ${outcome.code ?? outcome.signal}\n${outcome.stdout}${outcome.stderr}`);
    const differences = textShapeDifferences(step.output, outcome.stdout);
    if (differences.length) problem(`${step.command}: ${differences.join('; ')}; it printed:\n${outcome.stdout}`);
    output += outcome.stdout;
  }
  return output;
}

async function checkOutput(session: ShellSession, block: Block, command: string, problem: (text: string) => void): Promise<void> {
  const json = block.kind === 'json';
  // A text sample shows a terminal, where the CLI prints tables (and a JSON sample, what comes piped).
  const { outcome } = await runCommand(session, command, {
    name: `output-${block.line}`,
    bothStreams: !json,
    env: json ? {} : { BENCHMARKS_OUTPUT: 'table' },
  });
  if (json) {
    let actual: unknown;
    try {
      actual = JSON.parse(outcome.stdout);
    } catch {
      problem(`${command} printed no JSON (exit ${outcome.code}):\n${outcome.stdout}${outcome.stderr}`);
      return;
    }
    for (const d of jsonShapeDifferences(parseSample(block.text), actual))
      problem(`${d}\n${JSON.stringify(actual, null, 1).slice(0, 3000)}`);
  } else {
    const differences = textShapeDifferences(block.text, outcome.stdout);
    if (differences.length) problem(`${command}: ${differences.join('; ')}; it printed:\n${outcome.stdout}`);
  }
}

/** Runs the document's JavaScript blocks as one module; returns what each printed. */
async function runJs(
  blocks: Block[],
  context: DocContext,
  env: DocEnv,
  jsDir: string,
  problem: (text: string) => void,
): Promise<Map<number, string>> {
  const jsBlocks: JsBlock[] = blocks.map((b) => ({
    where: `${b.doc}:${b.line}`,
    line: b.line,
    code: env.substitutions.reduce((t, [from, to]) => t.replaceAll(from, to), b.text),
  }));
  const file = join(jsDir, `${blocks[0]!.doc.replace(/[^\w]+/g, '-')}.mts`);
  await writeFile(file, jsModule(context.jsPrelude?.(env) ?? '', jsBlocks, join(ROOT, 'test', 'support', 'doc-shapes.ts')));
  const args = ['--import', join(ROOT, 'scripts', 'dev', 'register.js'), file];
  const child = start(process.execPath, args, {
    cwd: env.dir,
    env: cleanEnv({ HOME: join(env.dir, '.home'), ...context.jsEnv?.(env) }),
    timeoutMs: 180_000,
  });
  if (context.jsRunsUntil) {
    // An example that serves until stopped: it is ready when it says so, and stops cleanly on SIGTERM.
    try {
      await child.waitFor('stdout', context.jsRunsUntil, 150_000);
      child.child.kill('SIGTERM');
    } catch (err) {
      problem(`${jsBlocks[0]!.where}: ${(err as Error).message}`);
    }
  }
  const outcome = await child.exited;
  await child.kill();
  const { outputs, failedAt } = outputsByBlock(outcome.stdout);
  if (outcome.code !== 0 || (failedAt !== undefined && !context.jsRunsUntil)) {
    const at = failedAt === undefined ? `${file} (the prelude, test/support/doc-context.ts)` : `${blocks[0]!.doc}:${failedAt}`;
    problem(`${at}: exit ${outcome.code ?? outcome.signal}\n${tail(outcome.stderr)}\n(the module: ${file})`);
  }
  return outputs;
}
