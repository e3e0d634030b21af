import * as assert from 'uvu/assert';
import { inspect } from 'node:util';

/** Runs `fn`, expecting it to reject with an instance of `type`; returns the error. */
export async function rejects<E>(fn: () => PromiseLike<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await fn();
  } catch (err) {
    assert.instance(err, type, `expected ${type.name}, got ${inspect(err)}`);
    return err as E;
  }
  return assert.unreachable(`expected ${type.name}, nothing was thrown`) as never;
}
