/**
 * A small seeded pseudo-random generator (mulberry32) and the helpers the data generator needs.
 * Everything the harness generates comes from one of these, so a seed gives the same data on every
 * machine and every run.
 */

/** mulberry32: 32-bit state, period 2^32, good enough for test data and very fast. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed derived from a base seed and a label, so independent streams do not overlap. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const HEX = '0123456789abcdef';

export class Rng {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** Rounded to `digits` decimals. */
  round(value: number, digits = 2): number {
    const f = 10 ** digits;
    return Math.round(value * f) / f;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** An index chosen with the given (non-negative) weights. */
  weighted(weights: readonly number[], total = weights.reduce((a, b) => a + b, 0)): number {
    let x = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      x -= weights[i]!;
      if (x < 0) return i;
    }
    return weights.length - 1;
  }

  /** `count` distinct items. */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = [...items];
    const out: T[] = [];
    for (let i = 0; i < count && copy.length; i++) out.push(copy.splice(Math.floor(this.next() * copy.length), 1)[0]!);
    return out;
  }

  /** Normally distributed (Box-Muller). */
  normal(mean: number, sd: number): number {
    const u = 1 - this.next();
    const v = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Multiplicative noise around 1: `value * noise(0.05)` varies by about 5%. */
  noise(relative: number): number {
    return Math.max(0.05, this.normal(1, relative));
  }

  hex(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += HEX[Math.floor(this.next() * 16)];
    return s;
  }

  /** A version 4 UUID made of this generator's bits. */
  uuid(): string {
    const h = this.hex(32);
    const variant = HEX[8 + Math.floor(this.next() * 4)];
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}
