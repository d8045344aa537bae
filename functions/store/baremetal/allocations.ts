/**
 * Bare-metal allocation items and the transactions that tie them to nodes.
 *
 * The reservation (holding a node, then ONE transaction) is reservation.ts.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryPartition } from '../ddb/query.js';
import { ALLOCATION_STATES } from '../../core/baremetal/allocations.js';
import { isoNow, type AllocationRecord, type NodeRecord } from '../../core/baremetal/records.js';
import { S } from '../../core/baremetal/states.js';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { BK, BM_INDEX_SHARDS, BM_TX, refuseOversized } from './keys.js';
import { nodeUuidForInstance } from './nodes.js';
import { atVersion, instanceRelease } from './node-writes.js';
import { transact, type TxItem } from '../ddb/tx.js';
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
