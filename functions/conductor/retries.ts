/**
 * The conductor's optimistic writes: re-read, re-check, write with a condition on what
 * was read; a lost race or a transaction that was not applied (RETRY: a failed
 * condition on a changed read, a TransactionConflict, an attempt whose unknown outcome
 * was resolved as "not committed") goes round again with jittered backoff
 * (store/ddb/retry.ts: at most 12 attempts). Exhaustion is answered the way Ironic
 * answers a busy object: NodeLocked for a node, a 409 for an allocation. Nothing was
 * stored then: every attempt's outcome is known (store/ddb/tx.ts).
 */
import { IronicError, Err } from '../core/baremetal/errors.js';
import type { NodeRecord } from '../core/baremetal/records.js';
import { config } from '../config.js';
import { type RETRY, RetriesExhausted, withRetries } from '../store/ddb/retry.js';
import type { LinkRefusal } from '../store/baremetal/links.js';

/** what the handler passes to re-read (and re-authorize) the object on every attempt */
export type Load<T> = () => Promise<T>;

/** the text a client sees when the same allocation kept changing under it */
export const BUSY_TEXT = 'Another request changed the same data at the same time; please retry.';

export async function retrying<T>(
  attempt: (n: number) => Promise<T | typeof RETRY>,
  exhausted: () => IronicError = () => new IronicError(409, BUSY_TEXT),
): Promise<T> {
  try {
    return await withRetries(attempt);
  } catch (e) {
    if (e instanceof RetriesExhausted) throw exhausted();
    throw e;
  }
}

/**
 * A node workflow's load, watched: after the retries are exhausted the answer is
 * Ironic's NodeLocked for the node last read (what Ironic answers while another
 * request works on the node; clients retry it).
 */
export function watchNode(load: Load<NodeRecord>): { load: Load<NodeRecord>; exhausted: () => IronicError } {
  let uuid = '';
  return {
    load: async () => {
      const n = await load();
      uuid = n.uuid;
      return n;
    },
    exhausted: () => nodeBusy(uuid),
  };
}

/** Ironic's NodeLocked for a node that kept changing */
export function nodeBusy(uuid: string): IronicError {
  return Err.nodeLocked(uuid, config().baremetal.conductorName);
}

/** Ironic's NodeLocked: another action holds the node's lock (its reservation). */
export function refuseLocked(node: NodeRecord): void {
  if (node.lock) throw Err.nodeLocked(node.uuid, config().baremetal.conductorName);
}

/**
 * A write what follows the node refuses (BAREMETAL_SCHEDULER=placement: the node's provider
 * or consumer) is answered (409, in the scheduler's words), not retried. Returns `out`
 * narrowed to the store's other outcomes.
 */
export function refusedByLink<T>(out: T | LinkRefusal): Exclude<T, LinkRefusal> {
  if (typeof out === 'object' && out !== null && (out as { error?: unknown }).error === 'refused') {
    throw Err.conflict((out as LinkRefusal).detail);
  }
  return out as Exclude<T, LinkRefusal>;
}
