/**
 * Which paths a benchmark's JSON Schema describes, and the described path nearest to one it does
 * not (docs/querying.md, "Paths the schema does not describe").
 *
 * A path is described when each of its segments is named by the schema: a key of `properties`, a
 * key matching a `patternProperties` pattern, or (an integer segment) an element of an array
 * described by `items`, `prefixItems` or `additionalItems`. The walk follows `$ref` (JSON pointers,
 * anchors and embedded `$id`s), `$recursiveRef`, `$dynamicRef`, `allOf`/`anyOf`/`oneOf`,
 * `if`/`then`/`else` branches and dependent schemas: a path described by any branch is described.
 * `additionalProperties` allows unknown keys without naming them: they are not described. A `$ref`
 * the walk cannot resolve (another document) makes everything below it undecidable, so described.
 *
 * Everything is bounded (nodes indexed, nodes one step stands for, leaf paths listed), whatever the
 * schema: a schema of 5,000 values is walked in milliseconds, and a recursive one ends.
 */
import { LRUCache } from 'lru-cache';
import { MAX_PATH_SEGMENTS } from '../query/json-path.ts';

type Node = Record<string, unknown>;
export const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An array element in a described leaf path: any index. */
const ANY_INDEX = Symbol('any index');
type LeafSegment = string | typeof ANY_INDEX;

/** A segment that `#>` may read as an array index (services/query/json-filter.ts). */
const INDEX_SEGMENT = /^-?\d+$/;
/** Nodes the index of `$id`s and anchors looks at. */
const MAX_INDEXED_NODES = 100_000;
/** Nodes one schema position may stand for once references and combinators are followed. */
const MAX_EXPANDED = 256;
/** Described leaf paths kept for suggestions, and positions visited to find them. */
export const MAX_LEAVES = 5_000;
const MAX_VISITS = 50_000;
/** Suggestions remembered per schema (the same typo comes back with every page). */
const MAX_REMEMBERED = 100;

/** The nodes one position stands for; `open`: a reference could not be followed. */
interface Expansion {
  nodes: Node[];
  open: boolean;
}

/** A local `$ref` (`#`, `#/$defs/x`: a JSON pointer into the document) from the root; undefined otherwise. */
export function localRef(root: unknown, ref: unknown): unknown {
  if (ref === '#') return root;
  return typeof ref === 'string' && ref.startsWith('#/') ? pointer(root, ref.slice(1)) : undefined;
}

/** JSON pointer (RFC 6901) from `from`; undefined when it leads nowhere. */
function pointer(from: unknown, fragment: string): unknown {
  let at = from;
  for (const raw of fragment.split('/').slice(1)) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(at) && /^\d+$/.test(key)) at = at[Number(key)];
    else if (isNode(at) && Object.hasOwn(at, key)) at = at[key];
    else return undefined;
  }
  return at;
}

export class DescribedPaths {
  readonly #root: unknown;
  readonly #ids = new Map<string, Node>();
  readonly #anchors = new Map<string, Node>();
  readonly #patterns = new Map<string, RegExp | null>();
  readonly #suggestions = new LRUCache<string, { found: string[] | null }>({ max: MAX_REMEMBERED });
  #leaves: LeafSegment[][] | undefined;

  constructor(schema: unknown) {
    this.#root = schema;
    this.#index();
  }

  /** Whether the schema names at least one path (`{}` and `true` name none: nothing to warn about). */
  get describesAnything(): boolean {
    return this.leaves().length > 0;
  }

  /** Whether every segment of `path` (inside `json`) is described. */
  describes(path: readonly string[]): boolean {
    let at = this.#expand([this.#root]);
    for (const segment of path) {
      if (at.open) return true;
      const children = this.#children(at.nodes, segment);
      if (children.length === 0) return false;
      at = this.#expand(children);
    }
    return true;
  }

  /**
   * The subschemas that describe `path` (references and combinators followed); null when it is not
   * described, or only through a reference the walk cannot follow.
   */
  nodesAt(path: readonly string[]): Record<string, unknown>[] | null {
    let at = this.#expand([this.#root]);
    for (const segment of path) {
      if (at.open) return null;
      const children = this.#children(at.nodes, segment);
      if (children.length === 0) return null;
      at = this.#expand(children);
    }
    return at.open ? null : at.nodes;
  }

  /**
   * The described leaf path nearest to `path` by edit distance (over the dotted text, array
   * elements taking `path`'s index at that place), when near enough; else one ending with the same
   * key (`score` → `result.score`); else null.
   */
  suggest(path: readonly string[]): string[] | null {
    const key = path.join('.');
    const known = this.#suggestions.get(key);
    if (known) return known.found;
    const found = this.#nearest(path);
    this.#suggestions.set(key, { found });
    return found;
  }

  #nearest(path: readonly string[]): string[] | null {
    const text = path.join('.');
    const candidates = this.leaves().map((leaf) =>
      leaf.map((segment, i) => (segment === ANY_INDEX ? (INDEX_SEGMENT.test(path[i] ?? '') ? path[i]! : '0') : segment)),
    );
    let best: string[] | null = null;
    let bestDistance = Math.max(2, Math.floor(text.length / 3));
    for (const candidate of candidates) {
      const d = editDistance(text, candidate.join('.'), bestDistance);
      if (d < bestDistance || (d === bestDistance && !best)) {
        best = candidate;
        bestDistance = d;
      }
    }
    if (best) return best;
    const last = path.at(-1);
    let sameKey: string[] | null = null;
    let sameKeyDistance = Number.POSITIVE_INFINITY;
    for (const candidate of candidates) {
      if (candidate.at(-1) !== last) continue;
      const d = editDistance(text, candidate.join('.'), sameKeyDistance);
      if (d < sameKeyDistance) {
        sameKey = candidate;
        sameKeyDistance = d;
      }
    }
    return sameKey;
  }

  /** The described leaf paths, depth first in the schema's key order (at most MAX_LEAVES). */
  leaves(): LeafSegment[][] {
    if (this.#leaves) return this.#leaves;
    const leaves: LeafSegment[][] = [];
    let visits = 0;
    const visit = (at: Expansion, path: LeafSegment[], chain: ReadonlySet<Node>) => {
      if (leaves.length >= MAX_LEAVES || ++visits > MAX_VISITS || at.open) return;
      const keys = new Set<string>();
      let array = false;
      for (const node of at.nodes) {
        if (isNode(node.properties)) {
          for (const [key, child] of Object.entries(node.properties)) if (child !== false) keys.add(key);
        }
        if (node.items !== undefined || node.prefixItems !== undefined) array = true;
      }
      const steps: [LeafSegment, unknown[]][] = [...keys].map((key) => [key, this.#children(at.nodes, key)]);
      if (array) steps.push([ANY_INDEX, this.#children(at.nodes, '0')]);
      const next = steps.filter(([, children]) => children.length > 0);
      if (next.length === 0 || path.length >= MAX_PATH_SEGMENTS) {
        if (path.length) leaves.push(path);
        return;
      }
      for (const [segment, children] of next) {
        const child = this.#expand(children);
        // A schema that refers to itself (a tree of nodes) ends where it comes back.
        if (child.nodes.length > 0 && child.nodes.every((n) => chain.has(n))) {
          if (leaves.length < MAX_LEAVES) leaves.push([...path, segment]);
          continue;
        }
        visit(child, [...path, segment], new Set([...chain, ...child.nodes]));
      }
    };
    const root = this.#expand([this.#root]);
    visit(root, [], new Set(root.nodes));
    this.#leaves = leaves;
    return leaves;
  }

  /** The subschemas that describe `segment` below any of `nodes` (`true` included: named, nothing below). */
  #children(nodes: readonly Node[], segment: string): unknown[] {
    const out: unknown[] = [];
    const push = (child: unknown) => {
      if (child !== undefined && child !== false) out.push(child);
    };
    for (const node of nodes) {
      if (isNode(node.properties) && Object.hasOwn(node.properties, segment)) push(node.properties[segment]);
      if (isNode(node.patternProperties)) {
        for (const [pattern, child] of Object.entries(node.patternProperties)) if (this.#pattern(pattern)?.test(segment)) push(child);
      }
      if (!INDEX_SEGMENT.test(segment)) continue;
      const i = Number(segment);
      const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : null;
      const rest = Array.isArray(node.prefixItems) ? node.items : Array.isArray(node.items) ? node.additionalItems : node.items;
      if (tuple && i >= 0 && i < tuple.length) push(tuple[i]);
      else if (tuple && i < 0) for (const child of tuple) push(child);
      if (!tuple || i < 0 || i >= tuple.length) {
        if (isNode(rest) || rest === true) push(rest);
      }
    }
    return out;
  }

  /** The nodes `values` stand for, following references and combinators. */
  #expand(values: readonly unknown[]): Expansion {
    const nodes: Node[] = [];
    const seen = new Set<Node>();
    let open = false;
    const stack = [...values].reverse();
    while (stack.length && nodes.length < MAX_EXPANDED) {
      const node = stack.pop();
      if (!isNode(node) || seen.has(node)) continue;
      seen.add(node);
      nodes.push(node);
      const more: unknown[] = [];
      for (const key of ['$ref', '$recursiveRef', '$dynamicRef']) {
        const ref = node[key];
        if (typeof ref !== 'string') continue;
        const target = this.#resolve(ref);
        if (target === undefined) open = true;
        else more.push(target);
      }
      for (const key of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(node[key])) more.push(...(node[key] as unknown[]));
      more.push(node.then, node.else);
      for (const key of ['dependentSchemas', 'dependencies']) if (isNode(node[key])) more.push(...Object.values(node[key]));
      for (let i = more.length - 1; i >= 0; i--) stack.push(more[i]);
    }
    return { nodes, open };
  }

  /** What a reference names in this document, or undefined (another document, a wrong pointer). */
  #resolve(ref: string): unknown {
    const hash = ref.indexOf('#');
    const base = hash < 0 ? ref : ref.slice(0, hash);
    const fragment = hash < 0 ? '' : ref.slice(hash + 1);
    let from: unknown = this.#root;
    if (base !== '') {
      const byId = this.#ids.get(base);
      if (!byId) return undefined;
      from = byId;
    }
    if (fragment === '') return from;
    if (fragment.startsWith('/')) return pointer(from, fragment);
    return this.#anchors.get(fragment);
  }

  /** `$id`s and anchors of the document (`$anchor`, `$dynamicAnchor`, draft-07 `"$id": "#name"`). */
  #index(): void {
    const stack: unknown[] = [this.#root];
    let count = 0;
    while (stack.length && count++ < MAX_INDEXED_NODES) {
      const value = stack.pop();
      if (Array.isArray(value)) {
        stack.push(...value);
        continue;
      }
      if (!isNode(value)) continue;
      const id = value.$id;
      if (typeof id === 'string') {
        if (id.startsWith('#')) this.#anchors.set(id.slice(1), value);
        else this.#ids.set(id.replace(/#$/, ''), value);
      }
      for (const key of ['$anchor', '$dynamicAnchor']) if (typeof value[key] === 'string') this.#anchors.set(value[key] as string, value);
      // `properties` maps names to schemas: a property called `$id` is a name, not an id.
      for (const [key, child] of Object.entries(value)) {
        if (key === 'enum' || key === 'const' || key === 'examples' || key === 'default') continue;
        stack.push(child);
      }
    }
  }

  /** A `patternProperties` pattern as ajv reads it (Unicode); null when it does not compile. */
  #pattern(pattern: string): RegExp | null {
    if (!this.#patterns.has(pattern)) {
      let compiled: RegExp | null;
      try {
        compiled = new RegExp(pattern, 'u');
      } catch {
        compiled = null;
      }
      this.#patterns.set(pattern, compiled);
    }
    return this.#patterns.get(pattern)!;
  }
}

/**
 * Levenshtein distance between `a` and `b`, or `limit + 1` as soon as it is known to exceed
 * `limit` (rows whose smallest value passes it end the computation).
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let smallest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      row.push(value);
      if (value < smallest) smallest = value;
    }
    if (smallest > limit) return limit + 1;
    previous = row;
  }
  return Math.min(previous[b.length]!, limit + 1);
}
