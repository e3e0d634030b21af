/** A seeded pseudo-random generator (mulberry32): a seed gives the same data on every machine and run. */

/** A seed derived from a base seed and a label, so independent streams do not overlap. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const HEX = '0123456789abcdef';
export type Rng = ReturnType<typeof seeded>;

export function seeded(seed: number) {
  let a = seed >>> 0;
  /** mulberry32: a float in [0, 1). */
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const hex = (length: number) => Array.from({ length }, () => HEX[Math.floor(next() * 16)]).join('');
  const rng = {
    next,
    hex,
    /** An integer in [min, max]; a float in [min, max). */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    float: (min: number, max: number) => min + next() * (max - min),
    round: (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits,
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    /** An index chosen with the given (non-negative) weights. */
    weighted(weights: readonly number[], total = weights.reduce((x, y) => x + y, 0)): number {
      let x = next() * total;
      for (let i = 0; i < weights.length; i++) {
        x -= weights[i]!;
        if (x < 0) return i;
      }
      return weights.length - 1;
    },
    /** `count` distinct items. */
    sample<T>(items: readonly T[], count: number): T[] {
      const copy = [...items];
      return Array.from({ length: Math.min(count, copy.length) }, () => copy.splice(Math.floor(next() * copy.length), 1)[0]!);
    },
    /** Multiplicative noise around 1 (normal, Box-Muller): `value * noise(0.05)` varies by about 5 %. */
    noise(relative: number): number {
      const u = 1 - next();
      return Math.max(0.05, 1 + relative * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next()));
    },
    /** A version 4 UUID made of this generator's bits. */
    uuid(): string {
      const h = hex(32);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${HEX[8 + Math.floor(next() * 4)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
  };
  return rng;
}
