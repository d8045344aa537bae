/**
 * Resource provider items: reads, and the create / update / delete transactions with
 * the conditions that keep names unique, trees consistent and in-use providers alive.
 * Other writers (inventories, traits, aggregates, allocations) build on the two items'
 * shapes (provider-items.ts).
 */
import { keyId } from '../ddb/batch.js';
import { batchGet } from '../ddb/reads.js';
import { queryPartition } from '../ddb/query.js';
import { newProviderRecord, type ProviderRecord } from '../../core/placement/model.js';
import {
  defItem,
  fromItems,
  nextSeq,
  type ProviderRead,
  readOf,
  sharingChanges,
  type StateRead,
  stateFromItem,
  stateItem,
} from './provider-items.js';
import { logPut, logStamp, stateGuard } from './changelog.js';
import { K, PROVIDER_SHARDS } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { diffRefs, refUpdates } from './refs.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { providerView } from '../../core/feed/change.js';
import { Expr, newItem } from '../ddb/expr.js';
import { RETRY, withRetries } from '../ddb/retry.js';
import { layoutMigrating } from '../layout/state.js';
import { isV1Provider, materializeProviders } from '../layout/v1.js';

/**
 * Both items of one provider: one strongly consistent Query of its partition (1 read unit
 * while they fit 4 KB). While a table migrates from layout 1 a provider may still be one
 * item with its state inline (store/layout/v1.ts): a reader reads it as it is; a writer
 * (`convert`) has it converted first, so the state item it is about to write exists.
 */
export async function readProvider(uuid: string, opts: { convert?: boolean } = {}): Promise<ProviderRead | undefined> {
  return (await readProviderAndTree(uuid, K.providerSks.to, opts.convert))?.read;
}

/** A provider's items, up to sort key `to` (K.providerSks.tree: its tree's members too, when it is a root) */
async function readProviderAndTree(uuid: string, to: string, convert = false): Promise<{ read: ProviderRead; members: string[] } | undefined> {
  if (!keyFits(K.provider(uuid))) return undefined;
  const query = () => queryPartition({ pk: K.provider(uuid).pk, skBetween: [K.providerSks.from, to], consistent: true });
  let items = await query();
  let def = items.find((it) => it.sk === K.provider(uuid).sk);
  // a definition without its state item: a layout-1 provider (converted first for a
  // writer), or one read while it was being converted (a Query sees each item as
  // committed, not every item of a transaction at once): read again
  for (let n = 0; def && !items.some((it) => it.sk === K.providerState(uuid).sk) && (convert || !isV1Provider(def)) && n < 5; n++) {
    if (isV1Provider(def)) await materializeProviders([def]);
    items = await query();
    def = items.find((it) => it.sk === K.provider(uuid).sk);
  }
  if (!def) return undefined;
  const state = items.find((it) => it.sk === K.providerState(uuid).sk) ?? (isV1Provider(def) ? def : undefined);
  const tree = items.find((it) => it.sk === K.providerTree(uuid).sk);
  return { read: readOf(def, state), members: [...((tree?.members as Set<string> | undefined) ?? [])] };
}

/**
 * Every provider of the tree `uuid` is in (undefined when there is no such provider),
 * from the providers' own items: the provider, its root's tree item, the members — no
 * shared partition. A lone root is one Query.
 */
export async function readTree(uuid: string): Promise<ProviderRecord[] | undefined> {
  const mine = await readProviderAndTree(uuid, K.providerSks.tree);
  if (!mine) return undefined;
  const root = mine.read.record.root;
  const top = root === uuid ? mine : await readProviderAndTree(root, K.providerSks.tree);
  const have = new Map<string, ProviderRecord>([[uuid, mine.read.record]]);
  if (top) have.set(root, top.read.record);
  const rest = (top?.members ?? []).filter((u) => !have.has(u));
  for (const [u, r] of await readProviders(rest)) have.set(u, r.record);
  return [...have.values()];
}

/** The provider named `name` (its name item, then the provider), or undefined. */
export async function readProviderNamed(name: string): Promise<ProviderRecord | undefined> {
  if (!keyFits(K.providerName(name))) return undefined;
  const it = (await batchGet([K.providerName(name)])).get(keyId(K.providerName(name)));
  return it ? getProvider(String(it.uuid)) : undefined;
}

/**
 * The providers a list narrowed by uuid, name or tree can answer from (each such filter
 * contributes its providers; the caller filters them): read from their own items.
 */
export async function providersFor(f: { uuid?: string; name?: string; inTree?: string }): Promise<ProviderRecord[]> {
  const [byUuid, byName, tree] = await Promise.all([
    f.uuid !== undefined ? getProvider(f.uuid) : undefined,
    f.name !== undefined ? readProviderNamed(f.name) : undefined,
    f.inTree !== undefined ? readTree(f.inTree) : undefined,
  ]);
  const out = new Map<string, ProviderRecord>();
  for (const p of [byUuid, byName, ...(tree ?? [])]) if (p) out.set(p.uuid, p);
  return [...out.values()];
}

export async function getProvider(uuid: string): Promise<ProviderRecord | undefined> {
  return (await readProvider(uuid))?.record;
}

/** providers read at once by readProviders (one Query each) */
const READ_PARALLELISM = 16;

/**
 * Several providers, each as readProvider reads it (missing ones are absent). Up to one
 * round of parallel Queries (READ_PARALLELISM): one read unit per provider. More — a
 * catch-up after a bulk load, a large tree — in BatchGetItem calls of both items of 50
 * providers each: two read units per provider (each item is rounded up on its own), but
 * 50 times fewer round trips (10,000 providers: 200 calls instead of 10,000 Queries).
 */
export async function readProviders(uuids: Iterable<string>): Promise<Map<string, ProviderRead>> {
  const list = [...new Set(uuids)];
  const out = new Map<string, ProviderRead>();
  if (list.length > READ_PARALLELISM) {
    const fits = list.filter((u) => keyFits(K.provider(u)));
    const items = await batchGet(fits.flatMap((u) => [K.provider(u), K.providerState(u)]));
    // a layout-2 definition without its state item was read while it was being converted: read again
    for (let n = 0; n < 5; n++) {
      const torn = fits.filter(
        (u) => items.has(keyId(K.provider(u))) && !items.has(keyId(K.providerState(u))) && !isV1Provider(items.get(keyId(K.provider(u)))),
      );
      if (!torn.length) break;
      for (const u of torn) items.delete(keyId(K.provider(u)));
      for (const [k, it] of await batchGet(torn.flatMap((u) => [K.provider(u), K.providerState(u)]))) items.set(k, it);
    }
    for (const u of fits) {
      const def = items.get(keyId(K.provider(u)));
      if (!def) continue;
      // a layout-1 provider (a migrating table) carries its state inline
      const state = items.get(keyId(K.providerState(u))) ?? (isV1Provider(def) ? def : undefined);
      out.set(u, readOf(def, state));
    }
    return out;
  }
  await Promise.all(
    list.map(async (u) => {
      const r = await readProvider(u);
      if (r) out.set(u, r);
    }),
  );
  return out;
}

/** Strongly consistent reads of whole providers; missing providers are absent from the map. */
export async function getProviders(uuids: Iterable<string>): Promise<Map<string, ProviderRecord>> {
  const out = new Map<string, ProviderRecord>();
  for (const [u, r] of await readProviders(uuids)) out.set(u, r.record);
  return out;
}

/**
 * Only the state items (generation, inventory, usage): one BatchGetItem, strongly
 * consistent unless asked. While a table migrates from layout 1, a missing state item may
 * be a provider whose state is still inline (store/layout/v1.ts): its definition is read
 * instead — and, for a writer (`convert`), converted first.
 */
export async function getProviderStates(
  uuids: Iterable<string>,
  opts: { consistent?: boolean; convert?: boolean } = {},
): Promise<Map<string, StateRead>> {
  const out = new Map<string, StateRead>();
  const list = [...new Set(uuids)];
  const read = async (us: string[]) => {
    const items = await batchGet(
      us.map((u) => K.providerState(u)),
      { consistent: opts.consistent ?? true },
    );
    for (const it of items.values()) {
      const s = stateFromItem(it);
      out.set(s.uuid, s);
    }
  };
  await read(list);
  let missing = list.filter((u) => !out.has(u) && keyFits(K.provider(u)));
  if (!missing.length || !(await layoutMigrating())) return out;
  for (let n = 0; missing.length && n < 5; n++) {
    const defs = [
      ...(
        await batchGet(
          missing.map((u) => K.provider(u)),
          { consistent: opts.consistent ?? true },
        )
      ).values(),
    ];
    const v1 = defs.filter(isV1Provider);
    if (opts.convert) await materializeProviders(v1);
    else for (const d of v1) out.set(String(d.uuid), stateFromItem(d));
    // converted (by this call, or by another between the two reads): their state items now
    const again = defs.filter((d) => opts.convert || !isV1Provider(d)).map((d) => String(d.uuid));
    if (!again.length) break;
    await read(again);
    missing = again.filter((u) => !out.has(u));
  }
  return out;
}

/**
 * Every provider, through the sharded gsi1 index (eventually consistent), with the state
 * items read in batches (eventually consistent too: the change log replayed after a load
 * fixes what either missed; a state read carries its `last`, so the replay knows which
 * usage changes it holds).
 */
export async function scanAllProviders(): Promise<ProviderRead[]> {
  const shards = Array.from({ length: PROVIDER_SHARDS }, (_, i) => i);
  const parts = await Promise.all(shards.map((s) => queryPartition({ index: 'gsi1', pk: K.providerIndexPk(s) })));
  const defs = parts.flat();
  const states = await batchGet(
    defs.map((d) => K.providerState(String(d.uuid))),
    { consistent: false },
  );
  return defs.map((d) => {
    const st = states.get(keyId(K.providerState(String(d.uuid))));
    // a layout-1 provider (a migrating table) carries its state inline
    return { record: fromItems(d, st ?? (isV1Provider(d) ? d : undefined)), last: st?.last };
  });
}

/** The providers sharing through any of `aggregates`, from the aggregates' own partitions (strongly consistent). */
export async function readSharingProviders(aggregates: string[]): Promise<ProviderRecord[]> {
  const lists = await Promise.all(
    aggregates
      .filter((a) => keyFits(K.aggregate(a)))
      .map((a) => queryPartition({ pk: K.aggregate(a).pk, skBeginsWith: K.sharingPrefix, consistent: true })),
  );
  return [...(await getProviders(lists.flat().map((it) => String(it.uuid)))).values()];
}

// ------------------------------------------------------------------ trees

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

// ------------------------------------------------------------------ create

export type CreateFailure = { error: 'duplicate'; uuid: boolean; name: boolean } | { error: 'parent_missing' };

export async function createProvider(input: { uuid: string; name: string; parent?: string }): Promise<ProviderRecord | CreateFailure> {
  return withRetries(async () => {
    let root = input.uuid;
    let parentRec: ProviderRecord | undefined;
    if (input.parent) {
      parentRec = await getProvider(input.parent);
      if (!parentRec) return { error: 'parent_missing' } as const;
      root = parentRec.root;
    }
    const now = new Date().toISOString();
    const rec = newProviderRecord({ uuid: input.uuid, name: input.name, parent: input.parent, root, seq: nextSeq(), at: now });
    const stamp = logStamp();
    const items: TxItem[] = [
      newItem(defItem(rec)),
      new Expr().putItem(stateItem(rec, stamp.sk)),
      newItem({ ...K.providerName(input.name), uuid: input.uuid }),
    ];
    if (parentRec) items.push(childrenDelta(parentRec.uuid, 1, parentRec.root), treeChange(parentRec.root, 'ADD', [rec.uuid]));
    items.push(logPut({ rereads: [rec.uuid, ...(parentRec ? [parentRec.uuid] : [])] }, stamp));
    const out = await transact(items, { change: { op: 'provider.create', providers: [{ uuid: rec.uuid, before: null, after: providerView(rec) }] } });
    if (out.ok) return rec;
    if (out.conflict) return RETRY;
    const dupUuid = out.failed.includes(0);
    const dupName = out.failed.includes(2);
    if (dupUuid || dupName) return { error: 'duplicate', uuid: dupUuid, name: dupName } as const;
    return RETRY; // the parent moved or vanished: look again
  });
}

// ------------------------------------------------------------------ update

export type UpdateFailure =
  | { error: 'not_found' }
  | { error: 'duplicate_name' }
  | { error: 'parent_missing' }
  | { error: 'reparent_not_allowed' }
  | { error: 'unparent_not_allowed' }
  | { error: 'loop' };

/**
 * Rename and/or (re/un)parent a provider. `parent` undefined = leave as is,
 * null = make it a root. Re-parenting rewrites the root of the whole subtree in the
 * same transaction; `subtree` supplies the current descendants (from a fresh snapshot).
 */
export async function updateProvider(
  uuid: string,
  change: { name?: string; parent?: string | null },
  opts: { allowReparenting: boolean; subtree: (uuid: string) => Promise<ProviderRecord[]> },
): Promise<ProviderRecord | UpdateFailure> {
  return withRetries(async () => {
    const read = await readProvider(uuid);
    if (!read) return { error: 'not_found' } as const;
    const cur = read.record;
    const next: ProviderRecord = { ...cur };
    const items: TxItem[] = [];
    const changed = new Set<string>([uuid]);
    let subtree: ProviderRecord[] = [];
    if (change.parent !== undefined && (change.parent ?? undefined) !== cur.parent) {
      const newParent = change.parent;
      if (newParent !== null) {
        const p = await getProvider(newParent);
        if (!p) return { error: 'parent_missing' } as const;
        if (cur.parent !== undefined && !opts.allowReparenting) return { error: 'reparent_not_allowed' } as const;
        subtree = await opts.subtree(uuid);
        if (subtree.some((s) => s.uuid === newParent)) return { error: 'loop' } as const;
        next.parent = newParent;
        next.root = p.root;
        items.push(childrenDelta(p.uuid, 1, p.root));
        changed.add(p.uuid);
      } else {
        if (!opts.allowReparenting) return { error: 'unparent_not_allowed' } as const;
        subtree = await opts.subtree(uuid);
        next.parent = undefined;
        next.root = uuid;
      }
      if (cur.parent) {
        items.push(childrenDelta(cur.parent, -1));
        changed.add(cur.parent);
      }
      // every descendant gets the new root; each is conditioned on its tree links
      // being what we saw, so a concurrent child creation or move retries us.
      for (const d of subtree) {
        if (d.uuid === uuid) continue;
        const e = new Expr().set('root', next.root);
        items.push(e.when(e.exists('pk')).when(e.eq('root', cur.root)).when(e.eq('children', d.children)).updateItem(K.provider(d.uuid)));
        changed.add(d.uuid);
      }
    }
    if (change.name !== undefined && change.name !== cur.name) {
      next.name = change.name;
      items.push(newItem({ ...K.providerName(change.name), uuid }), nameRelease(cur.name, uuid));
    }
    if (!items.length) return cur;
    if (next.root !== cur.root) items.push(...treeMove(uuid, cur.root, next.root, subtree));
    next.updatedAt = new Date().toISOString();
    const selfIdx = items.length;
    const self = new Expr().set('name', next.name).set('root', next.root).set('updated', next.updatedAt);
    if (next.parent) self.set('parent', next.parent);
    else self.remove('parent');
    self.when(self.exists('pk')).when(self.eq('name', cur.name)).when(self.eq('root', cur.root)).when(self.eq('children', cur.children));
    items.push(self.updateItem(K.provider(uuid)));
    // its state item's `last` moves too: the provider's changes keep one order (changelog.ts stateGuard)
    const stamp = logStamp(undefined, [read.last]);
    const state = new Expr();
    items.push(stateGuard(stamp, state.when(state.exists('pk'))).updateItem(K.providerState(uuid)));
    items.push(logPut({ rereads: changed }, stamp));
    const moved = subtree.filter((d) => d.uuid !== uuid && next.root !== cur.root);
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
    if (out.ok) return next;
    if (out.conflict) return RETRY;
    // which condition failed? a taken name is final; anything else: re-read and retry
    const nameIdx = items.findIndex((it) => it.Put && (it.Put.Item as { pk: string }).pk.startsWith('RPNAME#'));
    if (nameIdx >= 0 && out.failed.includes(nameIdx) && !out.failed.includes(selfIdx)) return { error: 'duplicate_name' } as const;
    return RETRY;
  });
}

// ------------------------------------------------------------------ delete

export type DeleteFailure = { error: 'not_found' } | { error: 'has_children' } | { error: 'in_use' } | { error: 'managed_elsewhere'; by: string };

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

export async function deleteProvider(uuid: string): Promise<true | DeleteFailure> {
  return withRetries(async () => {
    const read = await readProvider(uuid, { convert: true });
    if (!read) return { error: 'not_found' } as const;
    const cur = read.record;
    // a provider managed elsewhere goes with its manager (core/placement/managed.ts)
    if (read.managedBy) return { error: 'managed_elsewhere', by: read.managedBy } as const;
    if (cur.children > 0) return { error: 'has_children' } as const;
    if (cur.allocationCount > 0) return { error: 'in_use' } as const;
    const items = providerDeleteItems(cur, (state) =>
      state.when(state.eq('allocs', 0)).when(state.eq('invVer', cur.invVersion)).when(state.eq('gen', cur.generation)),
    );
    items.push(logPut({ rereads: [uuid, ...(cur.parent ? [cur.parent] : [])] }, logStamp(undefined, [read.last])));
    const out = await transact(items, { change: { op: 'provider.delete', providers: [{ uuid, before: providerView(cur), after: null }] } });
    if (out.ok) return true;
    return RETRY; // something moved under us (a child, an allocation, a rename, a node taking it): re-evaluate
  });
}
