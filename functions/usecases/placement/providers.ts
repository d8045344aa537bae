/**
 * A resource provider's create, update and delete as use cases: read through the store,
 * decide by Placement's rules (a parent that exists, re-parenting allowed since 1.37, no
 * loop, no children or allocations left), write once through the store
 * (store/placement/provider-tree.ts), and when the write was stale — another writer
 * changed what it was conditioned on — read and decide again (bounded; running out is a
 * 409 placement.concurrent_update).
 */
import { newProviderRecord, type ProviderRecord } from '../../core/placement/model.js';
import { RETRY, withRetries } from '../../store/ddb/retry.js';
import { nextSeq } from '../../store/placement/provider-items.js';
import { writeNewProvider, writeProviderDelete, writeProviderUpdate } from '../../store/placement/provider-tree.js';
import { getProvider, readProvider } from '../../store/placement/providers.js';

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
    const out = await writeNewProvider(rec, parentRec);
    if ('ok' in out) return rec;
    return out.error === 'stale' ? RETRY : out;
  });
}

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
    let subtree: ProviderRecord[] = [];
    let newParent: ProviderRecord | undefined;
    if (change.parent !== undefined && (change.parent ?? undefined) !== cur.parent) {
      if (change.parent !== null) {
        newParent = await getProvider(change.parent);
        if (!newParent) return { error: 'parent_missing' } as const;
        if (cur.parent !== undefined && !opts.allowReparenting) return { error: 'reparent_not_allowed' } as const;
        subtree = await opts.subtree(uuid);
        if (subtree.some((s) => s.uuid === change.parent)) return { error: 'loop' } as const;
        next.parent = change.parent;
        next.root = newParent.root;
      } else {
        if (!opts.allowReparenting) return { error: 'unparent_not_allowed' } as const;
        subtree = await opts.subtree(uuid);
        next.parent = undefined;
        next.root = uuid;
      }
    }
    if (change.name !== undefined && change.name !== cur.name) next.name = change.name;
    if (next.name === cur.name && next.parent === cur.parent) return cur;
    next.updatedAt = new Date().toISOString();
    const out = await writeProviderUpdate({ read, next, newParent, subtree });
    if ('ok' in out) return next;
    return out.error === 'stale' ? RETRY : out;
  });
}

export type DeleteFailure = { error: 'not_found' } | { error: 'has_children' } | { error: 'in_use' } | { error: 'managed_elsewhere'; by: string };

export async function deleteProvider(uuid: string): Promise<true | DeleteFailure> {
  return withRetries(async () => {
    const read = await readProvider(uuid, { convert: true });
    if (!read) return { error: 'not_found' } as const;
    const cur = read.record;
    // a provider managed elsewhere goes with its manager (core/placement/managed.ts)
    if (read.managedBy) return { error: 'managed_elsewhere', by: read.managedBy } as const;
    if (cur.children > 0) return { error: 'has_children' } as const;
    if (cur.allocationCount > 0) return { error: 'in_use' } as const;
    // stale: something moved under us (a child, an allocation, a rename, a node taking it): decide again
    return 'ok' in (await writeProviderDelete(read)) ? true : RETRY;
  });
}
