/**
 * The server's layers point one way (docs/architecture.md, "Layers"): every relative import of
 * `src/` (static, type-only, re-exports and dynamic imports alike) goes to the same layer or a lower
 * one, and no module reaches itself through its imports. Read from the sources, so it fails on the
 * commit that breaks the rule, before anything runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * Lower first. A module may import its own layer and those before it. `core` is what every layer
 * shares (errors, replies, the caller, dates, the logger, and rate-limit/; settings.ts declares the
 * settings, config.ts builds the configuration from them, version.ts reads the package); `http` adapts services to Koa; `routes` bind operations to
 * services; the composition root builds the app and starts it.
 */
const LAYERS = ['entities', 'core', 'db', 'auth', 'services', 'http', 'routes', 'composition'] as const;
type Layer = (typeof LAYERS)[number];

/** Modules at the top of src/ that belong to a layer below the composition root. */
const CORE_FILES = new Set(['config.ts', 'settings.ts', 'settings-docs.ts', 'version.ts']);
/** db and auth sit side by side: neither imports the other. */
const SIDE_BY_SIDE: [Layer, Layer][] = [['db', 'auth']];

function layerOf(file: string): Layer {
  const [first, ...rest] = file.split('/');
  if (!rest.length) return CORE_FILES.has(first!) ? 'core' : 'composition';
  if (first === 'migrations') return 'db';
  // Rate limiting, in one folder: buckets, the shared store and the middleware use core only.
  if (first === 'rate-limit') return 'core';
  // A command beside `start` and `migrate` (program.ts): it composes the server's parts.
  if (first === 'import-origin') return 'composition';
  if ((LAYERS as readonly string[]).includes(first!)) return first as Layer;
  throw new Error(`src/${file}: no layer for the folder '${first}' (add it to LAYERS in test/layers.test.ts)`);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Relative imports of each module, as paths relative to src/. */
function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const path of sources(SRC)) {
    const text = readFileSync(path, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    const targets = [...text.matchAll(IMPORT)].map((m) => relative(SRC, resolve(dirname(path), (m[1] ?? m[2])!)));
    edges.set(
      relative(SRC, path),
      targets.filter((t) => !t.startsWith('..')),
    );
  }
  return edges;
}

test('the import scanner sees static, type-only, re-exported and dynamic imports', () => {
  const sample = `import a from './a.ts';\nimport type { B } from '../b.ts';\nexport { c } from './c.ts';\nexport * from './d.ts';\nconst e = await import('./e.ts');\nimport './f.ts';`;
  assert.equal(
    [...sample.matchAll(IMPORT)].map((m) => m[1] ?? m[2]),
    ['./a.ts', '../b.ts', './c.ts', './d.ts', './e.ts', './f.ts'],
  );
  const edges = graph();
  assert.ok(edges.size > 50, `read ${edges.size} modules`);
  assert.ok(edges.get('app.ts')!.includes('http/router.ts'));
});

test('every import goes to the same layer or a lower one: services, db, auth and core never import http, routes or the composition root', () => {
  const wrong: string[] = [];
  for (const [from, targets] of graph()) {
    const a = layerOf(from);
    for (const to of targets) {
      const b = layerOf(to);
      const sideways = SIDE_BY_SIDE.some(([x, y]) => (a === x && b === y) || (a === y && b === x));
      if (LAYERS.indexOf(b) > LAYERS.indexOf(a) || sideways) wrong.push(`${from} (${a}) imports ${to} (${b})`);
    }
  }
  assert.equal(wrong, []);
});

/**
 * The service domains (folders of src/services/) and the domains each may import, lower first: the
 * query language and list mechanics, JSON Schemas, the metric values table, the catalogue, results,
 * then what reads results (compare, changes, export) and what reads changes (alerts, webhooks).
 */
const DOMAINS: Record<string, readonly string[]> = {
  runtime: [],
  query: [],
  schemas: ['query'],
  metrics: ['runtime', 'schemas', 'query'],
  catalogue: ['metrics', 'schemas', 'query'],
  results: ['catalogue', 'metrics', 'schemas', 'query', 'runtime'],
  compare: ['results', 'catalogue', 'metrics', 'schemas', 'query', 'runtime'],
  changes: ['compare', 'results', 'catalogue', 'metrics', 'query', 'runtime'],
  export: ['results', 'catalogue', 'metrics', 'query'],
  alerts: ['changes', 'compare', 'results', 'catalogue', 'query'],
  webhooks: ['catalogue', 'query'],
};

const domainOf = (file: string) => /^services\/([^/]+)\//.exec(file)?.[1];

test('a service domain imports only the domains below it', () => {
  const wrong: string[] = [];
  for (const [from, targets] of graph()) {
    const a = domainOf(from);
    if (!a) continue;
    if (!(a in DOMAINS)) wrong.push(`${from}: no domain '${a}' (add it to DOMAINS in test/layers.test.ts)`);
    for (const to of targets) {
      const b = domainOf(to);
      if (b && b !== a && !DOMAINS[a]?.includes(b)) wrong.push(`${from} (${a}) imports ${to} (${b})`);
    }
  }
  assert.equal(wrong, []);
  // The table itself points one way: each domain's imports are declared before it.
  const names = Object.keys(DOMAINS);
  const upward = names.flatMap((name, i) => DOMAINS[name]!.filter((dep) => names.indexOf(dep) >= i).map((dep) => `${name} -> ${dep}`));
  assert.equal(upward, []);
});

test('no import cycle between the modules of src/', () => {
  const edges = graph();
  // Tarjan's strongly connected components: any component of more than one module is a cycle.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, order.get(w)!));
      }
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!order.has(v)) visit(v);
  assert.equal(cycles, []);
});

test('connections outside the pool are opened in db/own-connection.ts only', () => {
  const opening = /new\s+(?:pg\.)?(?:Client|Pool)\s*\(|\bpg\.(?:Client|Pool)\s*\(/;
  const found = sources(SRC)
    .filter((path) => opening.test(readFileSync(path, 'utf8')))
    .map((path) => relative(SRC, path));
  assert.equal(found, ['db/own-connection.ts']);
});

test.run();
