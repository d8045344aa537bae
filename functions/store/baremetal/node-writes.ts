/**
 * Bare-metal node writes: create, save, delete, with the conditions that keep names and
 * instance UUIDs unique and never let two writers interleave on one node (every full
 * write is conditioned on the version it read), and what follows the node (links.ts) in
 * the same transaction.
 */
import type { NodeRecord } from '../../core/baremetal/records.js';
import { recordFact, type ChangeSpec } from '../../core/feed/change.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { Expr, newItem } from '../ddb/expr.js';
import { BK, BM_TX, refuseOversized } from './keys.js';
import { linkFailure, withLink, type AllocationIdentity, type LinkRefusal, type NodeLinks } from './links.js';
import { allocationsDeletedBy } from './facts.js';
import { nodeToItem, nodeUuidForInstance } from './nodes.js';

export type NodeWriteFailure =
  | { error: 'stale' }
  | { error: 'duplicate_uuid' }
  | { error: 'duplicate_name'; name: string }
  | { error: 'instance_associated'; instance: string; node?: string }
  /** what follows the node refuses the change (BAREMETAL_SCHEDULER=placement: its provider or consumer) */
  | LinkRefusal;

export type NodeWrite = { ok: true; node: NodeRecord } | NodeWriteFailure;

interface Uniques {
  actions: TxItem[];
  nameIdx?: number;
  instIdx?: number;
}

/** An expression conditioned on the item (a node, an allocation) still being the version read. */
export function atVersion(ver: number): Expr {
  const e = new Expr();
  return e.when(e.exists('pk')).when(e.eq('ver', ver));
}

/** Delete the item that says `node` holds `instance` (gone already is fine; another node's stays). */
export function instanceRelease(instance: string, node: string): TxItem {
  const e = new Expr();
  return e.when(e.or(e.absent('pk'), e.eq('node', node))).deleteItem(BK.nodeInstance(instance));
}

/** Name / instance-UUID uniqueness items that change between two versions of a node. */
function uniqueness(prev: NodeRecord | undefined, next: NodeRecord | undefined, base: number): Uniques {
  const actions: TxItem[] = [];
  const out: Uniques = { actions };
  if (next?.name && next.name !== prev?.name) {
    out.nameIdx = base + actions.length;
    actions.push(newItem({ ...BK.nodeName(next.name), uuid: next.uuid }));
  }
  if (prev?.name && prev.name !== next?.name) {
    const e = new Expr();
    actions.push(e.when(e.eq('uuid', prev.uuid)).deleteItem(BK.nodeName(prev.name)));
  }
  if (next?.instance_uuid && next.instance_uuid !== prev?.instance_uuid) {
    out.instIdx = base + actions.length;
    actions.push(newItem({ ...BK.nodeInstance(next.instance_uuid), node: next.uuid }));
  }
  if (prev?.instance_uuid && prev.instance_uuid !== next?.instance_uuid) actions.push(instanceRelease(prev.instance_uuid, prev.uuid));
  return out;
}

export interface NodeCreation {
  /** actions committed in the same transaction (a node moved in from Ironic: its allocation's items) */
  extra?: TxItem[];
  /** the allocation whose Placement consumer takes the node's unit in the same transaction (BAREMETAL_SCHEDULER=placement: a node moved in with its active allocation) */
  claim?: AllocationIdentity;
}

export async function createNode(n: NodeRecord, links: NodeLinks, opts: NodeCreation = {}): Promise<NodeWrite> {
  const item = nodeToItem(n);
  refuseOversized(item, 'node', n.uuid);
  const items: TxItem[] = [newItem(item)];
  const u = uniqueness(undefined, n, 1);
  items.push(...u.actions, ...(opts.extra ?? []));
  // its resource provider is created with it, and the claim's consumer (BAREMETAL_SCHEDULER=placement)
  const link = await links.plan({ after: n, claim: opts.claim });
  if ('error' in link) return link;
  const base = items.length;
  items.push(...link.items);
  const out = await transact(items, { ...BM_TX, change: withLink({ op: 'node.create', nodes: [recordFact(n.uuid, undefined, n)] }, link) });
  if (out.ok) return { ok: true, node: n };
  if (out.conflict) return { error: 'stale' };
  const refused = linkFailure(out, link, base);
  if (refused) return refused;
  // both taken: Ironic (its database's constraint order) names the name
  if (u.nameIdx !== undefined && out.failed.includes(u.nameIdx)) return { error: 'duplicate_name', name: n.name! };
  if (out.failed.includes(0)) return { error: 'duplicate_uuid' };
  if (u.instIdx !== undefined && out.failed.includes(u.instIdx)) {
    return { error: 'instance_associated', instance: n.instance_uuid!, node: await nodeUuidForInstance(n.instance_uuid!) };
  }
  return { error: 'stale' };
}

/**
 * Replace a node with its next version if nobody wrote it since `cur` was read
 * (`ver` unchanged). `extra` actions (an allocation deleted alongside) commit in the
 * same transaction. 'stale' asks the caller to re-read and re-apply.
 */
export async function saveNode(cur: NodeRecord, next: NodeRecord, links: NodeLinks, extra: TxItem[] = []): Promise<NodeWrite> {
  const rec: NodeRecord = { ...next, ver: cur.ver + 1 };
  const item = nodeToItem(rec);
  refuseOversized(item, 'node', rec.uuid);
  const items: TxItem[] = [atVersion(cur.ver).putItem(item)];
  const u = uniqueness(cur, rec, 1);
  items.push(...u.actions, ...extra);
  // its provider follows it, and an allocation deleted with `extra` gives its unit back (BAREMETAL_SCHEDULER=placement)
  const release = cur.allocation_uuid && cur.allocation_uuid !== rec.allocation_uuid ? cur.allocation_uuid : undefined;
  const link = await links.plan({ before: cur, after: rec, release });
  if ('error' in link) return link;
  const base = items.length;
  items.push(...link.items);
  const out = await transact(items, { ...BM_TX, change: withLink(nodeChange('node.update', cur, rec, extra), link) });
  if (out.ok) return { ok: true, node: rec };
  const refused = linkFailure(out, link, base);
  if (refused) return refused;
  if (out.conflict || out.failed.includes(0)) return { error: 'stale' };
  if (u.nameIdx !== undefined && out.failed.includes(u.nameIdx)) return { error: 'duplicate_name', name: rec.name! };
  if (u.instIdx !== undefined && out.failed.includes(u.instIdx)) {
    return { error: 'instance_associated', instance: rec.instance_uuid!, node: await nodeUuidForInstance(rec.instance_uuid!) };
  }
  return { error: 'stale' };
}

/**
 * Delete a node (and whatever `extra` removes with it) if it is still the version read;
 * its provider goes with it, and its allocation's consumer (BAREMETAL_SCHEDULER=placement:
 * refused while other consumers hold allocations on the provider).
 */
export async function deleteNodeItems(
  cur: NodeRecord,
  links: NodeLinks,
  extra: TxItem[] = [],
): Promise<{ ok: true } | { error: 'stale' } | LinkRefusal> {
  const items: TxItem[] = [atVersion(cur.ver).deleteItem(BK.node(cur.uuid)), ...uniqueness(cur, undefined, 1).actions, ...extra];
  const link = await links.plan({ before: cur, release: cur.allocation_uuid ?? undefined });
  if ('error' in link) return link;
  items.push(...link.items);
  const out = await transact(items, { ...BM_TX, change: withLink(nodeChange('node.delete', cur, undefined, extra), link) });
  return out.ok ? { ok: true } : { error: 'stale' };
}

/** A node write's change: the node before and after, and an allocation its `extra` actions delete. */
function nodeChange(op: 'node.update' | 'node.delete', before: NodeRecord, after: NodeRecord | undefined, extra: TxItem[]): ChangeSpec {
  const deleted = allocationsDeletedBy(extra);
  return { op, nodes: [recordFact(before.uuid, before, after)], ...(deleted.length ? { allocations: deleted } : {}) };
}
