/**
 * What each document's examples take as given, as a reader following it would have it: the demo
 * running (its URL in place of the examples' hosts), its tokens in `$TOKEN`, the names an example
 * refers to existing, the files it reads. Like the hidden lines of a doctest, kept here rather than
 * in the documents.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Client, createClient } from '@benchmarks/sdk';
import { cliCatalogue, crayItems, demoIds, hideUploads, registerUser, reviewQueue } from './doc-fixtures.ts';
import { cliFiles } from './doc-files.ts';
import type { Demo } from './doc-server.ts';
import type { Tools } from './doc-tools.ts';

export interface DocEnv {
  demo: Demo;
  dir: string;
  tools: Tools;
  /** Shell variables the examples use without setting them (`$TOKEN`, `$BENCH`, ...). */
  vars: Record<string, string>;
  /** Environment variables of the shell examples. */
  exported: Record<string, string>;
  /** Literal replacements in the examples that run: hosts, and placeholders for real values. */
  substitutions: [string, string][];
  /** The demo administrator's client, for the setup. */
  admin: Client;
  /** Values the JavaScript prelude may give the examples. */
  js: Record<string, unknown>;
  /** Writes a file of the working directory. */
  file(path: string, text: string): Promise<void>;
}

export interface DocContext {
  /**
   * The documents of one group share a demo (they run in document order; default: a demo of its
   * own). Only for documents whose examples do not change what the others' examples show.
   */
  demo?: string;
  /** The demo's sample catalogue (default), or an empty one for the setup to fill (the same in a group). */
  seed?: boolean;
  /** What the examples expect before the first block. */
  setup?(env: DocEnv): Promise<void>;
  /** Literal replacements of placeholders in the examples (`<id>`), besides the hosts. */
  substitutions?: [string, string][];
  /** Run before every block. */
  beforeEach?(env: DocEnv): Promise<void>;
  /** Run before the block holding `block` (each hook must find its block). */
  before?: { block: string; run(env: DocEnv): Promise<void> }[];
  /** What the block holding `block` printed must pass `check` (throws when not). */
  after?: { block: string; check(output: string, env: DocEnv): void }[];
  /** Code before the JavaScript examples: what they use without declaring it. */
  jsPrelude?(env: DocEnv): string;
  /** Environment of the JavaScript examples. */
  jsEnv?(env: DocEnv): Record<string, string>;
  /** The JavaScript examples serve until stopped: stopped by SIGTERM once stdout matches this, then exit 0. */
  jsRunsUntil?: RegExp;
}

/** The hosts of the examples, all meaning the service the reader runs. */
const HOSTS = ['http://127.0.0.1:8080', 'http://localhost:8080', 'https://performance.example.org', 'https://benchmarks.example.org'];

export async function docEnv(demo: Demo, dir: string, tools: Tools): Promise<DocEnv> {
  const admin = createClient({ baseUrl: demo.url, token: demo.adminToken });
  return {
    demo,
    dir,
    tools,
    vars: { TOKEN: demo.userToken, ADMIN_TOKEN: demo.adminToken, API: demo.api },
    exported: {},
    substitutions: HOSTS.map((h) => [h, demo.url]),
    admin,
    js: {},
    file: async (path, text) => {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    },
  };
}

const scores = (output: string) =>
  output
    .trim()
    .split('\n')
    .map((line) => Number(line.split(' ').at(-1)));

/** The JavaScript examples' givens, as `var` declarations (JSON values). */
const givens = (values: Record<string, unknown>) =>
  Object.entries(values)
    .map(([k, v]) => `var ${k} = ${JSON.stringify(v)};`)
    .join('\n');

/** The CLI's examples run as a reader who logged in (`benchmarks login`): the server and the token in the environment. */
const cliGuide = (token: (env: DocEnv) => string): DocContext => ({
  demo: 'cli',
  seed: false,
  setup: async (env) => {
    env.exported.BENCHMARKS_SERVER = env.demo.url;
    env.exported.BENCHMARKS_TOKEN = token(env);
    await registerUser(env);
    await cliCatalogue(env);
    await cliFiles(env);
  },
  beforeEach: cliCatalogue,
});

export const CONTEXTS: Record<string, DocContext> = {
  'README.md': {
    // "fastest render first": the demo's score is seconds, so the scores printed go up (the example
    // once said "best score first" and sorted them the other way).
    after: [
      {
        block: 'fastest render first',
        check: (output) => {
          const s = scores(output);
          if (s.length < 2 || s.some((v, i) => Number.isNaN(v) || (i > 0 && v < s[i - 1]!)))
            throw new Error('the scores are not in ascending order');
        },
      },
    ],
  },
  // A benchmark runner: the demo user.
  'packages/cli/README.md': cliGuide((env) => env.demo.userToken),
  'packages/demo/README.md': {
    demo: 'demo',
    // The programmatic demo, on the database of the test's demo: the options of `start` are also
    // environment variables.
    jsEnv: (env) => ({ DATABASE_URL: env.demo.databaseUrl }),
    jsRunsUntil: /Press Ctrl-C to stop/,
  },
  'packages/sdk/README.md': {
    demo: 'sdk',
    jsPrelude: (env) => `${givens(env.js)}\nvar myOidcSession = { accessToken: () => USER_TOKEN };`,
    setup: async (env) => {
      const ids = await demoIds(env);
      Object.assign(env.js, { USER_TOKEN: env.demo.userToken, items: crayItems(ids, 3) });
    },
  },
  'packages/server/README.md': {
    demo: 'demo',
    setup: async (env) => {
      env.vars.DATABASE_URL = env.demo.databaseUrl;
    },
    substitutions: [['benchmarks-server migrate --database-url ...', 'benchmarks-server migrate --database-url "$DATABASE_URL"']],
    // The programmatic example starts a server of its own, and prints its URL.
    after: [
      {
        block: 'console.log(server.url)',
        check: (output) => {
          if (!/^http:\/\/127\.0\.0\.1:\d+\n?$/.test(output.trim())) throw new Error('it printed no http://127.0.0.1:<port>');
        },
      },
    ],
  },
  'docs/api.md': {
    demo: 'api',
    setup: async (env) => {
      await registerUser(env);
      const ids = await demoIds(env);
      await env.file('batch.json', JSON.stringify({ items: crayItems(ids, 2) }));
    },
  },
  'docs/compare.md': {
    demo: 'api',
    setup: async (env) => {
      await demoIds(env);
      // `...`: the parameters of the command above.
      const same = `--data-urlencode "benchmark_id=$BENCH" --data-urlencode 'metric=json.result.score'`;
      env.substitutions.push(
        [`-H 'Accept: text/csv' ...`, `-H 'Accept: text/csv' ${same}`],
        [`"$API/results:compare" ... --data-urlencode`, `"$API/results:compare" ${same} --data-urlencode`],
        [`"$API/results:changes" ... --data-urlencode`, `"$API/results:changes" ${same} --data-urlencode`],
      );
    },
  },
  'docs/errors.md': { demo: 'api' },
  'docs/querying.md': {
    demo: 'api',
    setup: async (env) => {
      await registerUser(env);
      const ids = await demoIds(env);
      // The batch example's benchmark accepts any document (`{}`): its results hold only a score.
      const any = await env.admin.benchmarks.create({ container_image: 'ghcr.io/acme/c-ray', container_tag: '1.2', json_schema: {} });
      env.substitutions.push(
        ['"benchmark_id": "…"', `"benchmark_id": "${any.id}"`],
        ['"flavor_id": "…"', `"flavor_id": "${ids.flavor}"`],
        ['"tags_ids": ["…"]', `"tags_ids": ["${ids.tag}"]`],
      );
      const refused = crayItems(ids, 8);
      (refused[3]!.json as { result: { score: unknown } }).result.score = 'fast';
      refused[7]!.flavor_id = '9b1d0000-0000-4000-8000-000000000000';
      await env.file('refused.json', JSON.stringify({ items: refused }));
    },
  },
  'docs/review.md': { demo: 'api', setup: async (env) => void (await demoIds(env)) },
  // The guide shows administrators' commands too: the demo administrator.
  'docs/cli.md': {
    ...cliGuide((env) => env.demo.adminToken),
    // Placeholders of the examples, for values of the demo (set by the setup and the hooks).
    substitutions: [
      ['3f0c9d2e-5b1a-4c8e-9d7f-1a2b3c4d5e6f', '$RESULT'],
      ['benchmarks sites get <id|name>', 'benchmarks sites get $SITE_ON_REVIEW'],
      ['benchmarks review approve site <id|name>...', 'benchmarks review approve site $SITE_ON_REVIEW $SITE_ON_REVIEW_2'],
      ['benchmarks review reject tag <id|name>', 'benchmarks review reject tag $TAG_ON_REVIEW'],
      ['benchmarks claims get <id>', 'benchmarks claims get $CLAIM'],
      ['benchmarks results get <resource_id>', 'benchmarks results get $CLAIMED_RESULT'],
      ['benchmarks claims approve <id>', 'benchmarks claims approve $CLAIM'],
      ['benchmarks claims reject <id>', 'benchmarks claims reject $CLAIM_2'],
      [
        'benchmarks users list [--iss ISS] [--sub SUB] [--email EMAIL]',
        'benchmarks users list --iss $ISS --sub demo-user --email user@demo.example',
      ],
      ['--sub 1234 --iss https://aai.example.org', '--sub demo-user --iss $ISS'],
    ],
    before: [
      // The catalogue examples create CESGA and its c4.large, which the examples above use.
      { block: 'benchmarks sites create CESGA', run: async (env) => deleteSite(env, 'CESGA') },
      { block: 'ghcr.io/org/bench:1.0: json.result.score (higher is better)', run: hideUploads },
      { block: 'benchmarks review list', run: reviewQueue },
    ],
  },
  'docs/sdk.md': {
    demo: 'sdk',
    jsPrelude: (env) => `${givens(env.js)}
var session = { refreshIfNeeded: async () => ({ accessToken: ADMIN_TOKEN }) };
var items = files.map((f) => ({ benchmark_id, flavor_id, execution_datetime: f.startedAt, json: f.data }));`,
    setup: async (env) => {
      const ids = await demoIds(env);
      await registerUser(env);
      const user = createClient({ baseUrl: env.demo.url, token: env.demo.userToken });
      const onReview = await user.benchmarks.create({ container_image: 'ghcr.io/acme/stream', container_tag: '5.10', json_schema: {} });
      await user.close();
      const baseline = (await env.admin.tags.list({ name: 'baseline' })).items[0]!.id;
      Object.assign(env.js, {
        ADMIN_TOKEN: env.demo.adminToken,
        baseUrl: env.demo.url,
        benchmark_id: ids.bench,
        flavor_id: ids.flavor,
        gpuTag: baseline,
        id: onReview.id,
        part: 1,
        files: crayItems(ids, 3).map((item) => ({ startedAt: item.execution_datetime, data: item.json })),
      });
      // The NDJSON file `results.upload` reads from a stream.
      await env.file(
        'results.ndjson',
        `${crayItems(ids, 2)
          .map((item) => JSON.stringify(item))
          .join('\n')}\n`,
      );
    },
    // The example creates the tag gpu, which the demo has.
    before: [{ block: "client.call('createTag'", run: async (env) => deleteTag(env, 'gpu') }],
  },
};

async function deleteSite(env: DocEnv, name: string): Promise<void> {
  const found = (await env.admin.sites.list({ name })).items[0];
  if (found) await env.admin.sites.delete(found.id, { cascade: true });
}

async function deleteTag(env: DocEnv, name: string): Promise<void> {
  const found = (await env.admin.tags.list({ name })).items[0];
  if (found) await env.admin.tags.delete(found.id, { cascade: true });
}

export function contextOf(doc: string): DocContext {
  return CONTEXTS[doc] ?? {};
}
