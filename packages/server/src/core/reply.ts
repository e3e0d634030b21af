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
    let size = 0;
    const lengths = this.parts.map((p) => {
      const n = Buffer.byteLength(p);
      size += n;
      return n;
    });
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    this.parts.forEach((p, i) => {
      out.write(p, at, lengths[i]!, 'utf8');
      at += lengths[i]!;
    });
    return out;
  }

  toString(): string {
    return this.parts.join('');
  }
}
