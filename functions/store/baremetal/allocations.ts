/**
 * Bare-metal allocation items and the transactions that tie them to nodes.
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
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../../config.js';
import { log } from '../../observability/log.js';
import { queryPartition } from '../ddb/query.js';
import { ALLOCATION_STATES } from '../../core/baremetal/allocations.js';
import { isoNow, type AllocationRecord, type NodeRecord } from '../../core/baremetal/records.js';
import { S } from '../../core/baremetal/states.js';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { BK, BM_INDEX_SHARDS, BM_TX, HOLD, HOLD_UNTIL, refuseOversized } from './keys.js';
import { atVersion, instanceRelease, nodeUuidForInstance } from './nodes.js';
import { transact, type TxItem, type TxOutcome } from '../ddb/tx.js';
import { Expr, newItem } from '../ddb/expr.js';
import { linkFailure, withLink, type LinkRefusal, type NodeLinks } from './links.js';
import { markAllocationDelete } from './facts.js';
import { recordFact, type ChangeSpec } from '../../core/feed/change.js';

const INTERNAL = new Set(['pk', 'sk', 'gsi2pk', 'gsi2sk', 'type', 'ver']);

export interface StoredAllocation extends AllocationRecord {
  ver: number;
}

export function allocationToItem(a: StoredAllocation): Record<string, unknown> {
  const item: Record<string, unknown> = { ...BK.allocation(a.uuid), ...BK.allocationIndex(a.uuid, a.state, a.seq), type: 'BMA' };
  for (const [k, v] of Object.entries(a)) if (v !== null && v !== undefined) item[k] = v;
  return item;
}

export function allocationFromItem(it: Record<string, unknown>): StoredAllocation {
  const out: Record<string, unknown> = {
    name: null,
    traits: [],
    candidate_nodes: [],
    extra: {},
    owner: null,
    last_error: null,
    node_uuid: null,
    updated_at: null,
    exec: null,
    exec_at: 0,
  };
  for (const [k, v] of Object.entries(it)) if (!INTERNAL.has(k)) out[k] = v;
  out.ver = Number(it.ver ?? 0);
  out.seq = Number(out.seq ?? 0);
  out.exec_at = Number(out.exec_at ?? 0);
  out.resumes = Number(out.resumes ?? 0);
  return out as unknown as StoredAllocation;
}

export async function getAllocation(uuid: string): Promise<StoredAllocation | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: BK.allocation(uuid), ConsistentRead: true }));
  return r.Item ? allocationFromItem(r.Item) : undefined;
}

export async function getAllocationByName(name: string): Promise<StoredAllocation | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: BK.allocationName(name), ConsistentRead: true }));
  return r.Item ? getAllocation(String(r.Item.uuid)) : undefined;
}

/** Allocations through gsi2 in creation order, optionally only those in one state. */
export async function queryAllocations(opts: { state?: string } = {}): Promise<StoredAllocation[]> {
  const parts = await Promise.all(
    Array.from({ length: BM_INDEX_SHARDS }, (_, shard) =>
      queryPartition({ index: 'gsi2', pk: BK.allocationIndexPk(shard), skBeginsWith: opts.state ? `${opts.state}#` : undefined }),
    ),
  );
  return parts
    .flat()
    .map(allocationFromItem)
    .sort((a, b) => a.seq - b.seq);
}

// ------------------------------------------------------------------ create / update / delete

export type AllocationWriteFailure =
  | { error: 'duplicate_uuid' }
  | { error: 'duplicate_name' }
  | { error: 'instance_associated'; node?: string }
  | { error: 'stale' };

/**
 * What a write conditioned on an allocation's owner did: `ok`; `lost` (its condition
 * failed: the allocation is no longer what the writer owned — another writer won, or it is
 * gone); `stale` (not applied for another reason, a concurrent transaction: try again).
 */
export type OwnedWrite = { ok: true } | { error: 'lost' } | { error: 'stale' };

/**
 * A single-item conditional Update as a one-item transaction, so its outcome is always
 * known (store/ddb/tx.ts).
 */
async function conditionalUpdate(e: Expr, key: Record<string, unknown>, change: ChangeSpec): Promise<OwnedWrite> {
  const out = await transact([e.updateItem(key)], { ...BM_TX, change });
  if (out.ok) return { ok: true };
  return out.failed.includes(0) ? { error: 'lost' } : { error: 'stale' };
}

/**
 * The items of a new allocation: the allocation (0), and its name's (at `nameIdx`, -1
 * without a name), each only if absent. Refused (400) if it would not fit in an item.
 */
export function allocationCreateItems(a: StoredAllocation): { items: TxItem[]; nameIdx: number } {
  const item = allocationToItem(a);
  refuseOversized(item, 'allocation', a.uuid);
  const items: TxItem[] = [newItem(item)];
  let nameIdx = -1;
  if (a.name) {
    nameIdx = items.length;
    items.push(newItem({ ...BK.allocationName(a.name), uuid: a.uuid }));
  }
  return { items, nameIdx };
}

/**
 * Store a new allocation with its uniqueness items (name; the UUID must not be some
 * node's instance_uuid) in one transaction, whose outcome is always known (a lost
 * answer is resolved, never reported as a duplicate). 'stale': not stored (a
 * concurrent transaction), retry.
 */
export async function createAllocation(a: StoredAllocation): Promise<{ ok: true } | AllocationWriteFailure> {
  const { items, nameIdx } = allocationCreateItems(a);
  const instIdx = items.length;
  const noInstance = new Expr();
  items.push(noInstance.when(noInstance.absent('pk')).checkItem(BK.nodeInstance(a.uuid)));
  const out = await transact(items, { ...BM_TX, change: { op: 'allocation.create', allocations: [recordFact(a.uuid, undefined, a)] } });
  if (out.ok) return { ok: true };
  if (out.failed.includes(0)) return { error: 'duplicate_uuid' };
  if (out.failed.includes(nameIdx)) return { error: 'duplicate_name' };
  if (out.failed.includes(instIdx)) return { error: 'instance_associated', node: await nodeUuidForInstance(a.uuid) };
  return { error: 'stale' };
}

/** PATCH (name, extra): replace if unchanged since read. */
export async function saveAllocation(
  cur: StoredAllocation,
  next: StoredAllocation,
): Promise<{ ok: true; allocation: StoredAllocation } | AllocationWriteFailure> {
  const rec = { ...next, ver: cur.ver + 1 };
  const item = { ...allocationToItem(rec), ver: rec.ver };
  refuseOversized(item, 'allocation', rec.uuid);
  const items: TxItem[] = [atVersion(cur.ver).putItem(item)];
  let nameIdx = -1;
  if (rec.name && rec.name !== cur.name) {
    nameIdx = items.length;
    items.push(newItem({ ...BK.allocationName(rec.name), uuid: rec.uuid }));
  }
  if (cur.name && cur.name !== rec.name) items.push(deleteNameAction(cur));
  const out = await transact(items, { ...BM_TX, change: { op: 'allocation.update', allocations: [recordFact(rec.uuid, cur, rec)] } });
  if (out.ok) return { ok: true, allocation: rec };
  if (out.failed.includes(nameIdx)) return { error: 'duplicate_name' };
  return { error: 'stale' };
}

function deleteNameAction(a: AllocationRecord): TxItem {
  const e = new Expr();
  return e.when(e.eq('uuid', a.uuid)).deleteItem(BK.allocationName(a.name!));
}

/**
 * Actions that delete an allocation (and its name) provided it is still bound to
 * `nodeUuid` (or to no node). Used alone, and inside node writes (undeploy, removing
 * instance_uuid, deleting a node in maintenance).
 */
export function allocationDeleteActions(a: AllocationRecord, nodeUuid: string | null): TxItem[] {
  const e = new Expr();
  e.when(e.exists('pk')).when(nodeUuid ? e.eq('node_uuid', nodeUuid) : e.absent('node_uuid'));
  const items: TxItem[] = [e.deleteItem(BK.allocation(a.uuid))];
  if (a.name) items.push(deleteNameAction(a));
  // a node write carrying these names the allocation in its change (facts.ts)
  return markAllocationDelete(items, a);
}

/**
 * destroy_allocation: delete the allocation and release its node (instance_uuid and
 * allocation_uuid cleared) in one transaction, provided neither changed since read.
 */
export async function deleteAllocation(
  a: AllocationRecord,
  node: NodeRecord | undefined,
  links: NodeLinks,
): Promise<{ ok: true } | { error: 'stale' } | LinkRefusal> {
  const items = allocationDeleteActions(a, node ? node.uuid : null);
  let change: ChangeSpec = { op: 'allocation.delete', allocations: [recordFact(a.uuid, a, undefined)] };
  if (node) {
    items.push(...releaseNodeActions(node, a.uuid));
    const released = { ...node, instance_uuid: null, allocation_uuid: null, ver: node.ver + 1 };
    // its consumer gives the node's unit back, and the unit follows the node (BAREMETAL_SCHEDULER=placement)
    const link = await links.plan({ before: node, after: { ...node, instance_uuid: null, allocation_uuid: null }, release: a.uuid });
    if ('error' in link) return link;
    items.push(...link.items);
    change = withLink({ ...change, nodes: [recordFact(node.uuid, node, released)] }, link);
  }
  const out = await transact(items, { ...BM_TX, change });
  return out.ok ? { ok: true } : { error: 'stale' };
}

/** Clear a node's instance_uuid/allocation_uuid (version-checked) and drop the instance item. */
export function releaseNodeActions(node: NodeRecord, allocationUuid: string): TxItem[] {
  const released = { ...node, instance_uuid: null, allocation_uuid: null };
  const idx = BK.nodeIndex(node.uuid, node.resource_class, isAllocatableAfter(released), node.seq);
  const e = atVersion(node.ver);
  e.when(e.eq('allocation_uuid', allocationUuid));
  e.increment('ver').set('updated_at', isoNow()).set('gsi2sk', idx.gsi2sk).remove('instance_uuid').remove('allocation_uuid');
  const items: TxItem[] = [e.updateItem(BK.node(node.uuid))];
  if (node.instance_uuid) items.push(instanceRelease(node.instance_uuid, node.uuid));
  return items;
}

function isAllocatableAfter(n: Pick<NodeRecord, 'provision_state' | 'maintenance' | 'power_state' | 'instance_uuid'>): boolean {
  return n.provision_state === S.AVAILABLE && !n.maintenance && n.power_state !== null && !n.instance_uuid;
}

// ------------------------------------------------------------------ processing

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
  if (held !== 'ok') return { error: held };
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
 * first answer was lost holds, not loses. 'ok': held; 'taken': the node no longer
 * qualifies; 'held': another execution holds it, about to reserve it.
 */
async function holdNode(a: ReservationRequest, exec: string, node: string): Promise<'ok' | 'held' | 'taken' | 'busy'> {
  const now = Date.now();
  const e = new Expr().set(HOLD, exec).set(HOLD_UNTIL, now + config().baremetal.holdMs);
  whenReservable(e, a);
  e.when(e.or(e.absent(HOLD), e.eq(HOLD, exec), e.lt(HOLD_UNTIL, now))).when(e.absent('lk'));
  try {
    await ddb().send(new UpdateCommand({ ...e.updateInput(BK.node(node)), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return 'ok';
  } catch (err) {
    if ((err as Error).name === 'TransactionConflictException') return 'busy';
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
    // the node as it is (an error's item comes as DynamoDB attribute values, as commit.ts reads them)
    const item = (err as { Item?: Record<string, unknown> }).Item;
    const old = item ? unmarshall(item as never) : undefined;
    // held by another execution, the node otherwise untouched: that execution is reserving it
    const heldByOther = old?.[HOLD] !== undefined && old[HOLD] !== exec && Number(old[HOLD_UNTIL] ?? 0) >= now && old.instance_uuid === undefined;
    return heldByOther ? 'held' : 'taken';
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

/**
 * _allocation_failed: state error + last_error, only while the execution `exec` owns it
 * (null: an allocation no execution was ever assigned to).
 */
export async function failAllocation(a: { uuid: string; seq: number }, exec: string | null, lastError: string): Promise<OwnedWrite> {
  const e = new Expr()
    .set('state', ALLOCATION_STATES.ERROR)
    .set('last_error', lastError)
    .set('updated_at', isoNow())
    .set('gsi2sk', BK.allocationIndex(a.uuid, ALLOCATION_STATES.ERROR, a.seq).gsi2sk)
    .increment('ver')
    .remove('node_uuid');
  e.when(e.eq('state', ALLOCATION_STATES.ALLOCATING)).when(exec === null ? e.absent('exec') : e.eq('exec', exec));
  return conditionalUpdate(e, BK.allocation(a.uuid), {
    op: 'allocation.fail',
    allocations: [
      {
        uuid: a.uuid,
        before: { state: ALLOCATION_STATES.ALLOCATING },
        after: { uuid: a.uuid, state: ALLOCATION_STATES.ERROR, last_error: lastError, node_uuid: null },
      },
    ],
  });
}

/**
 * take_over_allocation: move an allocating allocation from the execution `from` to
 * `to`, counting the resume. Exactly one of several concurrent recoverers succeeds
 * (`stale`: neither won nor lost, look again next run).
 */
export async function takeOverAllocation(a: AllocationRecord, from: string | null, to: string): Promise<OwnedWrite> {
  const e = new Expr().set('exec', to).set('exec_at', Date.now());
  e.setTo('resumes', `${e.ifNotExists('resumes', 0)} + ${e.v(1)}`).increment('ver');
  e.when(e.eq('state', ALLOCATION_STATES.ALLOCATING)).when(from === null ? e.absent('exec') : e.eq('exec', from));
  return conditionalUpdate(e, BK.allocation(a.uuid), {
    op: 'internal',
    allocations: [{ uuid: a.uuid, before: null, after: null }],
    note: 'allocation taken over by orphan recovery',
  });
}

export type BackfillOutcome = { ok: true } | AllocationWriteFailure | LinkRefusal;

/**
 * Backfill: create an active allocation for an already deployed node and bind it, in
 * one transaction conditioned on the node version that was validated.
 */
export async function backfillAllocation(a: StoredAllocation, node: NodeRecord, links: NodeLinks): Promise<BackfillOutcome> {
  const { items, nameIdx } = allocationCreateItems(a);
  const nodeIdx = items.length;
  const bind = atVersion(node.ver)
    .set('instance_uuid', a.uuid)
    .set('allocation_uuid', a.uuid)
    .set(['instance_info', 'traits'], [...a.traits])
    .increment('ver')
    .set('updated_at', isoNow());
  items.push(bind.updateItem(BK.node(node.uuid)));
  let instIdx = -1;
  if (node.instance_uuid !== a.uuid) {
    instIdx = items.length;
    items.push(newItem({ ...BK.nodeInstance(a.uuid), node: node.uuid }));
  }
  // the allocation's consumer takes the node's unit (BAREMETAL_SCHEDULER=placement)
  const link = await links.plan({ before: node, after: { ...node, instance_uuid: a.uuid, allocation_uuid: a.uuid }, claim: a });
  if ('error' in link) return link;
  const base = items.length;
  items.push(...link.items);
  const bound = { ...node, instance_uuid: a.uuid, allocation_uuid: a.uuid, ver: node.ver + 1 };
  const change = withLink(
    { op: 'allocation.backfill', allocations: [recordFact(a.uuid, undefined, a)], nodes: [recordFact(node.uuid, node, bound)] },
    link,
  );
  const out = await transact(items, { ...BM_TX, change });
  if (out.ok) return { ok: true };
  const refused = linkFailure(out, link, base);
  if (refused) return refused;
  if (out.failed.includes(0)) return { error: 'duplicate_uuid' };
  if (out.failed.includes(nameIdx)) return { error: 'duplicate_name' };
  if (out.failed.includes(nodeIdx) || out.conflict) return { error: 'stale' };
  if (out.failed.includes(instIdx)) return { error: 'instance_associated', node: await nodeUuidForInstance(a.uuid) };
  return { error: 'stale' };
}
