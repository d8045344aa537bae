/**
 * What bare-metal actions handed from one store call to another change, for the change
 * feed (core/feed/change.ts): an allocation deleted by actions a node write carries
 * (allocationDeleteActions → saveNode / deleteNodeItems) is remembered on those actions,
 * so the node write's change names it without its callers saying so.
 */
import { recordFact, type RecordFact } from '../../core/feed/change.js';
import type { TxItem } from '../ddb/tx.js';

const deletedAllocations = new WeakMap<object, RecordFact>();

/** Remember that `actions` delete allocation `a` (its record as read). */
export function markAllocationDelete(actions: TxItem[], a: { uuid: string }): TxItem[] {
  if (actions[0]) deletedAllocations.set(actions[0], recordFact(a.uuid, a, undefined));
  return actions;
}

/** The allocations `actions` delete (markAllocationDelete). */
export function allocationsDeletedBy(actions: TxItem[]): RecordFact[] {
  return actions.map((a) => deletedAllocations.get(a)).filter((f): f is RecordFact => !!f);
}
