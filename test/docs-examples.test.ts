/**
 * Every example of the README files and docs/*.md runs, or is checked against what its command
 * prints, or is marked with the reason it is not (docs/architecture.md, "Examples in the
 * documentation"). Each document runs against a demo of its own (`benchmarks-server start --demo`
 * on a fresh database); what each example takes as given is in test/support/doc-context.ts.
 *
 *   node --import ./scripts/dev/register.js test/docs-examples.test.ts
 *   DOCS_EXAMPLES=docs/cli.md node --import ./scripts/dev/register.js test/docs-examples.test.ts   # one document
 *   DOCS_EXAMPLES_KEEP=1 ...   # keeps each document's working directory (the scripts run, in .docex/)
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type Block, documents, extractBlocks, planOf, readBlocks, splitCommands, statusClaim } from './support/doc-blocks.ts';
import { contextOf, docEnv } from './support/doc-context.ts';
import { jsModule, outputsByBlock } from './support/doc-js.ts';
import { needsDemo, runDocument } from './support/doc-run.ts';
import { type Demo, startDemo } from './support/doc-server.ts';
import { jsonShapeDifferences, parseSample, textShapeDifferences } from './support/doc-shapes.ts';
import { createTools, type Tools } from './support/doc-tools.ts';
import { ROOT, run } from './support/run.ts';

const only = process.env.DOCS_EXAMPLES?.split(',').filter(Boolean);
const docs = documents(ROOT).filter((d) => !only || only.includes(d));
const blocks = new Map<string, Block[]>();
const parseErrors: string[] = [];
for (const doc of docs) {
  try {
    blocks.set(doc, readBlocks(ROOT, doc));
  } catch (err) {
    parseErrors.push((err as Error).message);
    blocks.set(doc, []);
  }
}
const running = docs.filter((d) => needsDemo(blocks.get(d)!));

let tmp: string;
let jsDir: string;
let tools: Tools | undefined;
const demos = new Map<string, Promise<Demo>>();
const seconds = new Map<string, number>();

/** The demos, by the name of the group of documents sharing one (doc-context.ts, `demo`), and how many documents still need each. */
const demoKey = (doc: string) => contextOf(doc).demo ?? doc;
const pending = new Map<string, number>();
for (const doc of running) pending.set(demoKey(doc), (pending.get(demoKey(doc)) ?? 0) + 1);

/** The demo of a document, started when first asked for (the next document's starts while one runs). */
function demoOf(doc: string): Promise<Demo> {
  const key = demoKey(doc);
  let demo = demos.get(key);
  if (!demo) {
    const label = key.replace(/\W+/g, '-').toLowerCase();
    demo = startDemo({ dataDir: join(tmp, 'demo', label), seed: contextOf(doc).seed ?? true, label: `docs_${label}` });
    demo.catch(() => {}); // awaited by the document's test
    demos.set(key, demo);
  }
  return demo;
}

/** Stops a document's demo once no other document needs it. */
async function release(doc: string): Promise<void> {
  const key = demoKey(doc);
  const left = (pending.get(key) ?? 1) - 1;
  pending.set(key, left);
  if (left > 0) return;
  await demos.get(key)?.then((d) => d.close());
  demos.delete(key);
}

test.before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'benchmarks-docs-'));
  await chmod(tmp, 0o755); // an example's embedded PostgreSQL runs as the postgres user when we are root
  // Inside the repository, so that the examples' imports of the workspace packages resolve.
  await mkdir(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  jsDir = await mkdtemp(join(ROOT, 'node_modules', '.cache', 'docs-examples-'));
  if (running[0]) void demoOf(running[0]);
  tools = await createTools(join(tmp, 'tools'));
});

test.after(async () => {
  for (const demo of demos.values()) await demo.then((d) => d.close()).catch(() => {});
  // What the test does with each document's blocks (and how long its examples took).
  const rows = docs.map((doc) => {
    const plans = blocks.get(doc)!.map(planOf);
    const count = (...actions: string[]) => String(plans.filter((p) => actions.includes(p.action)).length).padStart(3);
    const lines = blocks.get(doc)!.flatMap((b) => b.markers.filter((m) => m.type === 'not run lines')).length;
    const time = seconds.has(doc) ? `${seconds.get(doc)!.toFixed(1).padStart(6)} s` : '';
    return `${doc.padEnd(26)} ${count('run')} run ${count('output', 'check')} checked ${count('skip')} not run (${lines} lines) ${time}`;
  });
  console.log(`\n${rows.join('\n')}`);
  if (process.env.DOCS_EXAMPLES_KEEP) console.log(`kept: ${tmp} and ${jsDir}`);
  else {
    await rm(jsDir, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
});

test('a block neither run nor marked is reported; a marker needs its reason', () => {
  const md = ['```json', '{}', '```', '', '<!-- not run: a diagram of the states -->', '```', 'a -> b', '```', '```sh', 'ls', '```'].join(
    '\n',
  );
  assert.equal(
    extractBlocks('x.md', md).map((b) => planOf(b).action),
    ['unmarked', 'skip', 'run'],
  );
  assert.throws(() => extractBlocks('x.md', '<!-- not run: why -->\n```sh\nls\n```'), /give the reason/);
  assert.throws(() => extractBlocks('x.md', '```sh\nls\n'), /not closed/);
});

test('shell blocks: commands over continuations and quoted lines, comments, claimed statuses', () => {
  const commands = splitCommands(
    ['TOKEN=...   # given', 'curl -X POST a \\', "  -d '{", '  # not a comment', "}'   # 201, then 409", '# 200 {"ok": true}'].join('\n'),
  );
  assert.equal(
    commands.map((c) => ('text' in c ? c.text : c.comment)),
    ['TOKEN=...', "curl -X POST a \\\n  -d '{\n  # not a comment\n}'", '# 200 {"ok": true}'],
  );
  assert.equal(statusClaim('# 201, then 409'), [201, 409]);
  assert.equal(statusClaim('# 200 {"ok": true}'), [200]);
  assert.equal(statusClaim('# the token'), undefined);
});

test('samples: JSON by members and types, text by lines and first words', () => {
  const sample = parseSample('{ "id": "…", "json_schema": { … }, "tags": [{ "name": "gpu", … }], "n": 1 }');
  assert.equal(
    jsonShapeDifferences(sample, { id: 'a', json_schema: { type: 'object' }, tags: [{ name: 'x', id: 'b' }], n: 2, more: 1 }),
    [],
  );
  assert.equal(jsonShapeDifferences(sample, { id: 'a', json_schema: {}, tags: [], n: '2' }), [
    '$.tags: the sample shows elements, the answer has none',
    '$.n: the sample shows number, the answer has string',
  ]);
  assert.equal(textShapeDifferences('server   https://a\n\nadmin  no\n', 'server  http://b\nadmin yes'), []);
  assert.equal(textShapeDifferences('Uploaded 185 of 200\nError: x', 'Uploaded 3 of 4\nDone.'), [
    'line 2: the sample starts with Error:, the output with Done.',
  ]);
});

test('JavaScript blocks run as one module, and a comment stating a value is checked', async () => {
  const file = join(jsDir, 'claims.mts');
  const blocks = [
    { where: 'x.md:1', line: 1, code: "import { where } from '@benchmarks/sdk';\nconst n = 4;\nwhere('a').gte(n); // 'a >= 4'" },
    {
      where: 'x.md:5',
      line: 5,
      code: "import { where } from '@benchmarks/sdk';\nconst n = 5;\nconsole.log(where('a').gte(n)); // 'a >= 4'",
    },
  ];
  await writeFile(file, jsModule('', blocks, join(ROOT, 'test', 'support', 'doc-shapes.ts')));
  const o = await run(process.execPath, ['--import', join(ROOT, 'scripts', 'dev', 'register.js'), file], { cwd: ROOT, timeoutMs: 120_000 });
  assert.equal(o.code, 1, o.stderr);
  assert.equal(outputsByBlock(o.stdout).failedAt, 5);
  assert.match(
    o.stderr,
    /x\.md:5, line 3 of the block: the comment says what the value is, and it is not: \$: claimed "a >= 4", got "a >= 5"/,
  );
});

test('every example of the documentation runs, is checked, or is marked with the reason it is not', () => {
  assert.equal(parseErrors, []);
  const unmarked = [...blocks.values()].flat().flatMap((b) => {
    const plan = planOf(b);
    return plan.action === 'unmarked' ? [`${b.doc}:${b.line}: ${plan.why}`] : [];
  });
  assert.equal(unmarked, []);
  if (!only)
    assert.ok(docs.includes('README.md') && docs.includes('docs/cli.md') && !docs.some((d) => d.includes('spec/')), docs.join(', '));
});

for (const [i, doc] of running.entries()) {
  test(`${doc}: its examples run against a demo and show what they print`, async () => {
    const started = Date.now();
    const demo = await demoOf(doc);
    const next = running.slice(i + 1).find((d) => !demos.has(demoKey(d)));
    if (next) void demoOf(next);
    const dir = join(tmp, 'docs', doc.replace(/\W+/g, '-'));
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o755);
    const context = contextOf(doc);
    const env = await docEnv(demo, dir, tools!);
    env.substitutions.unshift(...(context.substitutions ?? []));
    try {
      await context.setup?.(env);
      const problems = await runDocument(blocks.get(doc)!, context, env, jsDir);
      seconds.set(doc, (Date.now() - started) / 1000);
      assert.equal(problems, [], problems.join('\n\n'));
    } finally {
      await env.admin.close();
      await release(doc);
    }
  });
}

test.run();
