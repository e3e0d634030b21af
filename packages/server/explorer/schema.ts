/** The JSON paths a benchmark's schema describes, with their type and `x-better`: the explorer's filters, metrics and columns. */
export interface SchemaPath {
  path: string;
  type: 'number' | 'integer' | 'string' | 'boolean';
  better?: 'higher' | 'lower';
  suggested: boolean;
}

type Json = Record<string, unknown>;

function resolve(root: Json, node: Json, depth: number): Json {
  const ref = node.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#') || depth > 8) return node;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/').filter(Boolean)) target = (target as Json)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return target && typeof target === 'object' ? resolve(root, target as Json, depth + 1) : node;
}

/** Leaf paths under `properties` (through local `$ref`s and `allOf`), `json.`-prefixed, in schema order. */
export function schemaPaths(schema: unknown): SchemaPath[] {
  const out: SchemaPath[] = [];
  if (!schema || typeof schema !== 'object') return out;
  const root = schema as Json;
  const walk = (raw: Json, prefix: string, depth: number) => {
    const node = resolve(root, raw, 0);
    if (depth > 8) return;
    for (const part of Array.isArray(node.allOf) ? (node.allOf as Json[]) : []) walk(part, prefix, depth + 1);
    const props = node.properties as Record<string, Json> | undefined;
    if (props && typeof props === 'object') {
      for (const [key, child] of Object.entries(props)) walk(child ?? {}, prefix ? `${prefix}.${key}` : key, depth + 1);
      return;
    }
    const types = [node.type].flat();
    const type = (['number', 'integer', 'boolean', 'string'] as const).find((t) => types.includes(t));
    if (!prefix || !type) return;
    const better = node['x-better'] === 'lower' || node['x-better'] === 'higher' ? node['x-better'] : undefined;
    out.push({ path: `json.${prefix}`, type, better, suggested: node.suggestToUser === true });
  };
  walk(root, '', 0);
  return out;
}

export const numeric = (p: SchemaPath) => p.type === 'number' || p.type === 'integer';

/** The metric a view starts with: the first suggested number, else the first number. */
export function defaultMetric(paths: SchemaPath[]): string | undefined {
  return (paths.find((p) => numeric(p) && p.suggested) ?? paths.find(numeric))?.path;
}
