/** A handler's answer when its status differs from the operation's declared success status. */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
    readonly headers: Record<string, string> = {},
  ) {}
}

export const reply = <T>(status: number, body: T, headers?: Record<string, string>) => new Reply(status, body, headers);

/**
 * A handler's answer already serialised, in parts: the JSON of the operation's response, encoded
 * part by part into one buffer (a large joined string would live in V8's large-object space).
 */
export class JsonText {
  readonly parts: readonly string[];
  constructor(...parts: string[]) {
    this.parts = parts;
  }

  /** The UTF-8 bytes of the parts, in order. */
  toBuffer(): Buffer {
    const lengths = this.parts.map((p) => Buffer.byteLength(p));
    const out = Buffer.allocUnsafe(lengths.reduce((sum, n) => sum + n, 0));
    let at = 0;
    for (const [i, p] of this.parts.entries()) at += out.write(p, at, lengths[i]!, 'utf8');
    return out;
  }

  toString(): string {
    return this.parts.join('');
  }
}
