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
 * A handler's answer already serialised: JSON text sent as it is (with the operation's status), for
 * responses assembled from pre-serialised parts. It must be the JSON of the operation's response.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
