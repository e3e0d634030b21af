/**
 * What a start acquires, released in reverse: each resource goes on the stack as it is opened, so a
 * failed start releases exactly what it had opened. (Node 24's `AsyncDisposableStack` lacks the
 * names, the durations in the log, and every failure reported rather than the first.)
 */
import type { Logger } from './logger.ts';

/** One resource: what the log calls it, and how it is released. */
interface Entry {
  name: string;
  release: () => Promise<void> | void;
}

/** Every release that failed, in the order they ran; `errors` are the failures themselves. */
export class ReleaseError extends AggregateError {
  override name = 'ReleaseError';
  /** The names of the resources whose release failed, in the order they ran. */
  readonly resources: string[];

  constructor(failures: { name: string; error: unknown }[]) {
    const list = failures.map((f) => `${f.name} (${f.error instanceof Error ? f.error.message : String(f.error)})`).join('; ');
    super(
      failures.map((f) => f.error),
      `${failures.length === 1 ? 'A resource was' : `${failures.length} resources were`} not released cleanly: ${list}`,
    );
    this.resources = failures.map((f) => f.name);
  }
}

export class DisposalStack {
  readonly #entries: Entry[] = [];
  #disposing: Promise<void> | undefined;

  /** `logger`: each release is logged at debug with its duration. */
  constructor(private readonly logger?: Logger) {}

  /** Registers `release` for a resource just acquired; it runs before those registered earlier. */
  defer(name: string, release: () => Promise<void> | void): void {
    if (this.#disposing !== undefined) throw new Error(`The resource ${name} was acquired while its owner was being released.`);
    this.#entries.push({ name, release });
  }

  /** Registers `resource` with its release and returns it: `const orm = stack.use('orm', await connect(), (o) => o.close())`. */
  use<T>(name: string, resource: T, release: (resource: T) => Promise<void> | void): T {
    this.defer(name, () => release(resource));
    return resource;
  }

  /** The resources held now, first acquired first. */
  get names(): string[] {
    return this.#entries.map((e) => e.name);
  }

  /** Releases every resource, last acquired first, once; a failure stops none of the others: a ReleaseError lists them all. */
  dispose(): Promise<void> {
    this.#disposing ??= this.#releaseAll();
    return this.#disposing;
  }

  async #releaseAll(): Promise<void> {
    const failures: { name: string; error: unknown }[] = [];
    for (const { name, release } of this.#entries.splice(0).reverse()) {
      const started = performance.now();
      try {
        await release();
        this.logger?.debug('released', { resource: name, ms: Math.round(performance.now() - started) });
      } catch (error) {
        const ms = Math.round(performance.now() - started);
        this.logger?.debug('release failed', { resource: name, ms, error: error instanceof Error ? error.message : String(error) });
        failures.push({ name, error });
      }
    }
    if (failures.length) throw new ReleaseError(failures);
  }
}
