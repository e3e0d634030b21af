/** Limits on input enforced here; the others live in the contract's schemas (docs/security.md lists all). */

/** Deepest nesting of objects and arrays accepted in a JSON body (a scalar body is depth 0). */
export const MAX_JSON_DEPTH = 64;

/** True when `value` nests objects or arrays deeper than `max`; iterative, so any depth is safe to check. */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
