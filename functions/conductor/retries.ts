/**
 * The conductor's optimistic writes: re-read, re-check, write with a condition on what
 * was read; a lost race (RETRY) goes round again with jittered backoff
 * (store/ddb/retry.ts). Exhaustion is answered the conductor's way, as an Ironic 409.
 */
import { IronicError, Err } from '../core/baremetal/errors.js';
import type { NodeRecord } from '../core/baremetal/records.js';
import { config } from '../config.js';
import { type RETRY, RetriesExhausted, withRetries } from '../store/ddb/retry.js';

/** what the handler passes to re-read (and re-authorize) the object on every attempt */
export type Load<T> = () => Promise<T>;

/** the text a client sees when the same node or allocation kept changing under it */
export const BUSY_TEXT = 'Another request changed the same data at the same time; please retry.';

export async function retrying<T>(attempt: (n: number) => Promise<T | typeof RETRY>): Promise<T> {
  try {
    return await withRetries(attempt);
  } catch (e) {
    if (e instanceof RetriesExhausted) throw new IronicError(409, BUSY_TEXT);
    throw e;
  }
}

/** Ironic's NodeLocked: another action holds the node's lock (its reservation). */
export function refuseLocked(node: NodeRecord): void {
  if (node.lock) throw Err.nodeLocked(node.uuid, config().baremetal.conductorName);
}
