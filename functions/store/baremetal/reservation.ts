/**
 * Reserving a node for an allocation (the allocation workflow's reserve step,
 * conductor/allocate.ts).
 *
 * The reservation is ONE TransactWriteItems:
 *   node        SET instance_uuid, allocation_uuid, instance_info.traits
 *               IF available AND NOT maintenance AND power_state set AND no instance_uuid
 *                  AND resource_class matches AND traits contain the requested ones
 *                  AND (owner or lessee is the allocation's owner, when it has one)
 *   instance    PUT BMNINST#<allocation uuid> IF absent (instance UUIDs are unique)
 *   allocation  SET node_uuid, state=active IF state = allocating AND exec = <this execution>
 * so a node can never be reserved twice, and an execution that lost its allocation
 * (deleted, or taken over by orphan recovery) can never reserve anything.
 *
 * (BAREMETAL_SCHEDULER=placement adds the allocation's Placement claim to it: eight items,
 * committed by the scheduler's ReservationCommit, functions/bridge/links.ts.)
 * Before it, the node is held with one conditional write (holdNode: the node's
 * conditions, and no live hold of another execution), as Ironic's allocation takes the
 * node's lock: of many allocations racing for one node, the losers lose on that write,
 * not on the transaction, and a node another execution holds is retried later, as
 * Ironic retries a locked node. The hold is advisory — the transaction re-checks
 * everything — so a hold dropped by a node write changes nothing, and one left by a dead
 * process expires (BAREMETAL_HOLD_MS).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../../config.js';
import { log } from '../../observability/log.js';
import { ALLOCATION_STATES } from '../../core/baremetal/allocations.js';
import { isoNow } from '../../core/baremetal/records.js';
import { S } from '../../core/baremetal/states.js';
import type { ChangeSpec } from '../../core/feed/change.js';
import { ddb } from '../ddb/reads.js';
import { transact, type TxItem, type TxOutcome } from '../ddb/tx.js';
import { Expr, newItem } from '../ddb/expr.js';
import { BK, BM_TX, HOLD, HOLD_UNTIL } from './keys.js';
import { nodeUuidForInstance } from './nodes.js';

export type ReserveOutcome =
  | { ok: true }
  /** the node no longer qualifies (taken by another allocation, state changed) */
  | { error: 'taken' }
  /** another transaction touched the node at the same time: worth retrying */
  | { error: 'busy' }
  /** another execution holds the node (holdNode), reserving it now (Ironic's NodeLocked): worth retrying */
  | { error: 'held' }
  /** the allocation is gone or belongs to another execution now */
  | { error: 'gone' }
  /** the allocation UUID is some other node's instance_uuid */
  | { error: 'instance_associated'; node?: string }
  /** BAREMETAL_SCHEDULER=placement: a Placement consumer with the allocation's UUID exists and holds something else (the text says so) */
  | { error: 'consumer_exists'; detail: string };

/** what a reservation needs to know about its allocation */
export interface ReservationRequest {
  uuid: string;
  seq: number;
  resource_class: string;
  traits: string[];
  owner?: string | null;
  /** who created the allocation (its Placement consumer's project without an owner, and user) */
  consumer_project?: string | null;
  consumer_user?: string | null;
}

/**
 * How a reservation's own items — the node (0), its instance (1), the allocation (2) —
 * are committed, with whatever follows the node (the scheduler's: reserveAlone, or
 * through Placement in one transaction with the allocation's claim, functions/bridge/).
 */
export type ReservationCommit = (a: ReservationRequest, node: { uuid: string }, own: TxItem[]) => Promise<ReserveOutcome>;

export async function reserveNode(
  a: ReservationRequest,
  exec: string,
  node: { uuid: string; seq: number },
  commit: ReservationCommit,
): Promise<ReserveOutcome> {
  const held = await holdNode(a, exec, node.uuid);
  if (!('ok' in held)) return held;
  const out = await commit(a, node, reservationItems(a, exec, node));
  if (!('ok' in out)) await releaseHold(node.uuid, exec);
  return out;
}

/**
 * A reservation's change: the allocation becomes active on the node, which takes its
 * instance (the fields the reservation knows: it writes them with update expressions).
 */
export function reserveChange(a: ReservationRequest, node: { uuid: string }): ChangeSpec {
  const now = isoNow();
  return {
    op: 'allocation.reserve',
    allocations: [
      {
        uuid: a.uuid,
        before: { state: ALLOCATION_STATES.ALLOCATING, node_uuid: null },
        after: {
          uuid: a.uuid,
          state: ALLOCATION_STATES.ACTIVE,
          node_uuid: node.uuid,
          resource_class: a.resource_class,
          traits: [...a.traits],
          owner: a.owner ?? null,
          last_error: null,
          updated_at: now,
        },
      },
    ],
    nodes: [
      {
        uuid: node.uuid,
        before: { instance_uuid: null, allocation_uuid: null },
        after: { uuid: node.uuid, instance_uuid: a.uuid, allocation_uuid: a.uuid, updated_at: now },
      },
    ],
  };
}

/** The database scheduler's commit: the reservation's own items alone. */
export const reserveAlone: ReservationCommit = async (a, node, own) => {
  const out = await transact(own, { ...BM_TX, change: reserveChange(a, node) });
  return out.ok ? { ok: true } : reserveFailure(out, a);
};

/** The reservation's own items: node (0), instance (1), allocation (2). */
function reservationItems(a: ReservationRequest, exec: string, node: { uuid: string; seq: number }): TxItem[] {
  const now = isoNow();
  const n = new Expr()
    .set('instance_uuid', a.uuid)
    .set('allocation_uuid', a.uuid)
    .set(['instance_info', 'traits'], [...a.traits])
    .increment('ver')
    .set('updated_at', now)
    .set('gsi2sk', BK.nodeIndex(node.uuid, a.resource_class, false, node.seq).gsi2sk)
    .remove(HOLD)
    .remove(HOLD_UNTIL);
  whenReservable(n, a);
  const alloc = new Expr()
    .set('node_uuid', node.uuid)
    .set('state', ALLOCATION_STATES.ACTIVE)
    .set('updated_at', now)
    .set('gsi2sk', BK.allocationIndex(a.uuid, ALLOCATION_STATES.ACTIVE, a.seq).gsi2sk)
    .increment('ver')
    .remove('last_error');
  alloc.when(alloc.eq('state', ALLOCATION_STATES.ALLOCATING)).when(alloc.eq('exec', exec));
  return [n.updateItem(BK.node(node.uuid)), newItem({ ...BK.nodeInstance(a.uuid), node: node.uuid }), alloc.updateItem(BK.allocation(a.uuid))];
}

/** The node's conditions of a reservation: allocatable, of the class, with the traits, the owner's. */
function whenReservable(n: Expr, a: ReservationRequest): Expr {
  n.when(n.exists('pk'))
    .when(n.eq('provision_state', S.AVAILABLE))
    .when(n.eq('maintenance', false))
    .when(n.exists('power_state'))
    .when(n.absent('instance_uuid'))
    .when(n.eq('resource_class', a.resource_class));
  for (const t of a.traits) n.when(n.contains('traits', t));
  if (a.owner) n.when(n.or(n.eq('owner', a.owner), n.eq('lessee', a.owner)));
  return n;
}

/**
 * A reservation's first step: one conditional UpdateItem
 * holding the node for execution `exec` while it still qualifies and no other execution
 * holds it (or that hold expired). Neither the node's version nor anything shown
 * changes, so node writes are not disturbed (a write that replaces the node drops the
 * hold: the transaction still decides). Idempotent for `exec`, so a retried call whose
 * first answer was lost holds, not loses. `{ ok }`: held; 'taken': the node no longer
 * qualifies; 'held': another execution holds it, about to reserve it; 'busy': a
 * transaction on the node was in flight.
 */
async function holdNode(a: ReservationRequest, exec: string, node: string): Promise<{ ok: true } | { error: 'held' | 'taken' | 'busy' }> {
  const now = Date.now();
  const e = new Expr().set(HOLD, exec).set(HOLD_UNTIL, now + config().baremetal.holdMs);
  whenReservable(e, a);
  e.when(e.or(e.absent(HOLD), e.eq(HOLD, exec), e.lt(HOLD_UNTIL, now))).when(e.absent('lk'));
  try {
    await ddb().send(new UpdateCommand({ ...e.updateInput(BK.node(node)), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return { ok: true };
  } catch (err) {
    if ((err as Error).name === 'TransactionConflictException') return { error: 'busy' };
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
    // the node as it is (an error's item comes as DynamoDB attribute values, as commit.ts reads them)
    const item = (err as { Item?: Record<string, unknown> }).Item;
    const old = item ? unmarshall(item as never) : undefined;
    // held by another execution, the node otherwise untouched: that execution is reserving it
    const heldByOther = old?.[HOLD] !== undefined && old[HOLD] !== exec && Number(old[HOLD_UNTIL] ?? 0) >= now && old.instance_uuid === undefined;
    return { error: heldByOther ? 'held' : 'taken' };
  }
}

/** Give a hold back after a reservation that did not happen (best effort: it expires anyway). */
async function releaseHold(node: string, exec: string): Promise<void> {
  const e = new Expr().remove(HOLD).remove(HOLD_UNTIL);
  e.when(e.eq(HOLD, exec)).when(e.absent('lk'));
  try {
    await ddb().send(new UpdateCommand(e.updateInput(BK.node(node))));
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException')
      log.warn('node hold not released (it expires)', { node, error: (err as Error).name });
  }
}

/** What a failed reservation transaction means, from its own items' conditions (a link's are the scheduler's to read). */
export async function reserveFailure(out: Extract<TxOutcome, { ok: false }>, a: ReservationRequest): Promise<ReserveOutcome> {
  if (out.conflict) return { error: 'busy' };
  if (out.failed.includes(2)) return { error: 'gone' };
  if (out.failed.includes(0)) return { error: 'taken' };
  if (out.failed.includes(1)) return { error: 'instance_associated', node: await nodeUuidForInstance(a.uuid) };
  return { error: 'busy' };
}
