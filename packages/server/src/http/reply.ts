/** A handler's answer when its status differs from the operation's declared success status. */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
    readonly headers: Record<string, string> = {},
  ) {}
}

export const reply = <T>(status: number, body: T, headers?: Record<string, string>) => new Reply(status, body, headers);
