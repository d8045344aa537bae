/**
 * The items of a provider's life — created, renamed, moved in its tree, deleted — and the
 * one transaction each is written in, with what a failed condition means. The checks that
 * decide whether to write (a parent that exists, a loop, re-parenting allowed) are the use
 * cases' (functions/usecases/placement/providers.ts); the conditions here keep names
 * unique, trees consistent and in-use providers alive against every concurrent writer.
 */
import type { ProviderRecord } from '../../core/placement/model.js';
import { providerView } from '../../core/feed/change.js';
import { Expr, newItem } from '../ddb/expr.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { logPut, logStamp, stateGuard } from './changelog.js';
import { K } from './keys.js';
import { defItem, type ProviderRead, sharingChanges, stateItem } from './provider-items.js';
import { diffRefs } from '../../core/placement/provider-patch.js';
import { refUpdates } from './refs.js';

/** Add or remove `uuids` to or from the members of root `root`'s tree item (string-set ADD / DELETE commute). */
function treeChange(root: string, op: 'ADD' | 'DELETE', uuids: string[]): TxItem {
  const e = new Expr();
  return (op === 'ADD' ? e.add('members', new Set(uuids)) : e.delete('members', new Set(uuids))).updateItem(K.providerTree(root));
}

/** the name item of provider `uuid` goes (if it is still that provider's) */
function nameRelease(name: string, uuid: string): TxItem {
  const e = new Expr();
  return e.when(e.eq('uuid', uuid)).deleteItem(K.providerName(name));
}

/**
 * A parent's child count moves by `delta` (a child created, moved away or deleted); it must
 * exist, and for a new child of it still be in the tree `root` the child was planned in.
 */
function childrenDelta(parent: string, delta: 1 | -1, root?: string): TxItem {
  const e = new Expr().add('children', delta);
  e.when(e.exists('pk'));
  if (root !== undefined) e.when(e.eq('root', root));
  return e.updateItem(K.provider(parent));
}

/**
 * The tree items of a subtree (`uuid` and its descendants `subtree`) moving from root
 * `from` to root `to`: it leaves `from`'s members (or, when `uuid` was that root, its
 * own tree item goes) and joins `to`'s (or, when `uuid` becomes a root, its own item
 * lists its descendants).
 */
function treeMove(uuid: string, from: string, to: string, subtree: ProviderRecord[]): TxItem[] {
  const moving = [...new Set([uuid, ...subtree.map((d) => d.uuid)])];
  const below = moving.filter((u) => u !== uuid);
  const out: TxItem[] = [];
  if (from !== uuid) out.push(treeChange(from, 'DELETE', moving));
  else out.push(new Expr().deleteItem(K.providerTree(uuid)));
  if (to !== uuid) out.push(treeChange(to, 'ADD', moving));
  else if (below.length) out.push(new Expr().putItem({ ...K.providerTree(uuid), members: new Set(below) }));
  return out;
}

/**
 * The actions that delete provider `cur` (as read): its two items and its name, the
 * parent's child count, its tree item's membership, the refs of its custom traits and
 * classes, its sharing entries. `stateCondition` adds the caller's condition to the
 * state item's delete (deleteProvider's "no allocations, inventory and generation as
 * read"; a node's delete its own).
 */
export function providerDeleteItems(cur: ProviderRecord, stateCondition: (state: Expr) => void): TxItem[] {
  const def = new Expr();
  def.when(def.exists('pk')).when(def.eq('children', 0));
  const state = new Expr();
  state.when(state.exists('pk'));
  stateCondition(state);
  const items: TxItem[] = [def.deleteItem(K.provider(cur.uuid)), state.deleteItem(K.providerState(cur.uuid)), nameRelease(cur.name, cur.uuid)];
  if (cur.parent) items.push(childrenDelta(cur.parent, -1));
  items.push(...sharingChanges(cur.uuid, cur, undefined));
  // its tree's item: a root's goes (it has no children), a descendant leaves its root's
  items.push(cur.root === cur.uuid ? new Expr().deleteItem(K.providerTree(cur.uuid)) : treeChange(cur.root, 'DELETE', [cur.uuid]));
  const refs = refUpdates([...diffRefs('trait', cur.traits, []), ...diffRefs('resource_class', Object.keys(cur.inventories), [])]);
  items.push(...refs.items);
  return items;
}

// ------------------------------------------------------------------ the writes

/** not written: another writer changed what the write was conditioned on — read and decide again */
export type Stale = { error: 'stale' };

/** A new provider (and, under `parent` as read, its place in the parent's tree). */
export async function writeNewProvider(
  rec: ProviderRecord,
  parent?: ProviderRecord,
): Promise<{ ok: true } | { error: 'duplicate'; uuid: boolean; name: boolean } | Stale> {
  const stamp = logStamp();
  const items: TxItem[] = [
    newItem(defItem(rec)),
    new Expr().putItem(stateItem(rec, stamp.sk)),
    newItem({ ...K.providerName(rec.name), uuid: rec.uuid }),
  ];
  if (parent) items.push(childrenDelta(parent.uuid, 1, parent.root), treeChange(parent.root, 'ADD', [rec.uuid]));
  items.push(logPut({ rereads: [rec.uuid, ...(parent ? [parent.uuid] : [])] }, stamp));
  const out = await transact(items, { change: { op: 'provider.create', providers: [{ uuid: rec.uuid, before: null, after: providerView(rec) }] } });
  if (out.ok) return { ok: true };
  if (out.conflict) return { error: 'stale' };
  const dupUuid = out.failed.includes(0);
  const dupName = out.failed.includes(2);
  if (dupUuid || dupName) return { error: 'duplicate', uuid: dupUuid, name: dupName };
  // the parent moved or vanished
  return { error: 'stale' };
}

export interface ProviderUpdate {
  /** the provider as read, and as it becomes */
  read: ProviderRead;
  next: ProviderRecord;
  /** its new parent as read (re-parented under it), if any */
  newParent?: ProviderRecord;
  /** its descendants as read (re-parenting moves them to the new root) */
  subtree: ProviderRecord[];
}

/**
 * Rename and/or (re/un)parent a provider in one transaction: the whole subtree's root
 * rewritten, each descendant conditioned on its tree links being as read, so a concurrent
 * child creation or move makes it stale.
 */
export async function writeProviderUpdate(u: ProviderUpdate): Promise<{ ok: true } | { error: 'duplicate_name' } | Stale> {
  const cur = u.read.record;
  const next = u.next;
  const uuid = cur.uuid;
  const items: TxItem[] = [];
  const changed = new Set<string>([uuid]);
  const reparented = next.parent !== cur.parent;
  if (reparented) {
    if (u.newParent) {
      items.push(childrenDelta(u.newParent.uuid, 1, u.newParent.root));
      changed.add(u.newParent.uuid);
    }
    if (cur.parent) {
      items.push(childrenDelta(cur.parent, -1));
      changed.add(cur.parent);
    }
    for (const d of u.subtree) {
      if (d.uuid === uuid) continue;
      const e = new Expr().set('root', next.root);
      items.push(e.when(e.exists('pk')).when(e.eq('root', cur.root)).when(e.eq('children', d.children)).updateItem(K.provider(d.uuid)));
      changed.add(d.uuid);
    }
  }
  let nameIdx = -1;
  if (next.name !== cur.name) {
    nameIdx = items.length;
    items.push(newItem({ ...K.providerName(next.name), uuid }), nameRelease(cur.name, uuid));
  }
  if (next.root !== cur.root) items.push(...treeMove(uuid, cur.root, next.root, u.subtree));
  const selfIdx = items.length;
  const self = new Expr().set('name', next.name).set('root', next.root).set('updated', next.updatedAt);
  if (next.parent) self.set('parent', next.parent);
  else self.remove('parent');
  self.when(self.exists('pk')).when(self.eq('name', cur.name)).when(self.eq('root', cur.root)).when(self.eq('children', cur.children));
  items.push(self.updateItem(K.provider(uuid)));
  // its state item's `last` moves too: the provider's changes keep one order (changelog.ts stateGuard)
  const stamp = logStamp(undefined, [u.read.last]);
  const state = new Expr();
  items.push(stateGuard(stamp, state.when(state.exists('pk'))).updateItem(K.providerState(uuid)));
  items.push(logPut({ rereads: changed }, stamp));
  const moved = u.subtree.filter((d) => d.uuid !== uuid && next.root !== cur.root);
  const out = await transact(items, {
    change: {
      op: 'provider.update',
      providers: [
        { uuid, before: providerView(cur), after: providerView(next) },
        // the descendants of a re-parented provider move to its new root
        ...moved.map((d) => ({ uuid: d.uuid, before: providerView(d), after: providerView({ ...d, root: next.root }) })),
      ],
    },
  });
  if (out.ok) return { ok: true };
  if (out.conflict) return { error: 'stale' };
  // a taken name is final; anything else: read and decide again
  if (nameIdx >= 0 && out.failed.includes(nameIdx) && !out.failed.includes(selfIdx)) return { error: 'duplicate_name' };
  return { error: 'stale' };
}

/** Delete a provider as read: only while it has no allocations and its inventory and generation are as read. */
export async function writeProviderDelete(read: ProviderRead): Promise<{ ok: true } | Stale> {
  const cur = read.record;
  const items = providerDeleteItems(cur, (state) =>
    state.when(state.eq('allocs', 0)).when(state.eq('invVer', cur.invVersion)).when(state.eq('gen', cur.generation)),
  );
  items.push(logPut({ rereads: [cur.uuid, ...(cur.parent ? [cur.parent] : [])] }, logStamp(undefined, [read.last])));
  const out = await transact(items, { change: { op: 'provider.delete', providers: [{ uuid: cur.uuid, before: providerView(cur), after: null }] } });
  return out.ok ? { ok: true } : { error: 'stale' };
}
