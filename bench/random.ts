/** A seeded pseudo-random generator (mulberry32): a seed gives the same data on every machine and run. */

/** A seed derived from a base seed and a label, so independent streams do not overlap. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const HEX = '0123456789abcdef';

export class Rng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  /** mulberry32: a float in [0, 1). */
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }
  round(value: number, digits = 2): number {
    return Math.round(value * 10 ** digits) / 10 ** digits;
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
    return Array.from({ length: Math.min(count, copy.length) }, () => copy.splice(Math.floor(this.next() * copy.length), 1)[0]!);
  }
  /** Multiplicative noise around 1 (normal, Box-Muller): `value * noise(0.05)` varies by about 5 %. */
  noise(relative: number): number {
    const u = 1 - this.next();
    return Math.max(0.05, 1 + relative * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next()));
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
