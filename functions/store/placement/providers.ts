/**
 * Resource provider items: reads, and the create / update / delete transactions with
 * the conditions that keep names unique, trees consistent and in-use providers alive.
 * Other writers (inventories, traits, aggregates, allocations) build on `providerKey`,
 * `fromItem` and `toItem` here.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from '../ddb/batch.js';
import { queryPartition } from '../ddb/query.js';
import type { ProviderRecord } from '../../core/placement/model.js';
import { ddb, tableName, type Item } from '../ddb/client.js';
import { logPut } from './changelog.js';
import { K, PROVIDER_SHARDS } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { diffRefs, refUpdates } from './refs.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { RETRY, withRetries } from '../ddb/retry.js';

export const providerKey = K.provider;

let seqCounter = 0;
/** creation order: ms timestamp scaled, plus a per-process counter for same-ms creations */
export function nextSeq(): number {
  seqCounter = (seqCounter + 1) % 1000;
  return Date.now() * 1000 + seqCounter;
}

export function toItem(p: ProviderRecord): Record<string, unknown> {
  return {
    ...K.provider(p.uuid),
    ...K.providerIndex(p.uuid),
    type: 'RP',
    uuid: p.uuid,
    name: p.name,
    gen: p.generation,
    parent: p.parent,
    root: p.root,
    inv: p.inventories,
    invVer: p.invVersion,
    used: p.usages,
    traits: p.traits,
    aggs: p.aggregates,
    children: p.children,
    allocs: p.allocationCount,
    created: p.createdAt,
    updated: p.updatedAt,
    seq: p.seq,
  };
}

export function fromItem(it: Item): ProviderRecord {
  return {
    uuid: it.uuid,
    name: it.name,
    generation: Number(it.gen ?? 0),
    parent: it.parent ?? undefined,
    root: it.root ?? it.uuid,
    inventories: it.inv ?? {},
    invVersion: Number(it.invVer ?? 0),
    usages: it.used ?? {},
    traits: it.traits ?? [],
    aggregates: it.aggs ?? [],
    children: Number(it.children ?? 0),
    allocationCount: Number(it.allocs ?? 0),
    createdAt: it.created,
    updatedAt: it.updated ?? it.created,
    seq: Number(it.seq ?? 0),
  };
}

export async function getProvider(uuid: string): Promise<ProviderRecord | undefined> {
  if (!keyFits(K.provider(uuid))) return undefined;
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.provider(uuid), ConsistentRead: true }));
  return r.Item ? fromItem(r.Item) : undefined;
}

/** Strongly consistent batch read; missing providers are absent from the map. */
export async function getProviders(uuids: Iterable<string>): Promise<Map<string, ProviderRecord>> {
  const out = new Map<string, ProviderRecord>();
  for (const it of (await batchGet([...new Set(uuids)].map((u) => K.provider(u)))).values()) out.set(String(it.uuid), fromItem(it));
  return out;
}

/** Every provider, through the sharded gsi1 index (eventually consistent; the change log fixes up). */
export async function scanAllProviders(): Promise<ProviderRecord[]> {
  const shards = Array.from({ length: PROVIDER_SHARDS }, (_, i) => i);
  const parts = await Promise.all(shards.map((s) => queryPartition({ index: 'gsi1', pk: K.providerIndexPk(s) })));
  return parts.flat().map(fromItem);
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
    const rec: ProviderRecord = {
      uuid: input.uuid,
      name: input.name,
      generation: 0,
      parent: input.parent,
      root,
      inventories: {},
      invVersion: 0,
      usages: {},
      traits: [],
      aggregates: [],
      children: 0,
      allocationCount: 0,
      createdAt: now,
      updatedAt: now,
      seq: nextSeq(),
    };
    const items: TxItem[] = [
      { Put: { TableName: tableName(), Item: toItem(rec), ConditionExpression: 'attribute_not_exists(pk)' } },
      {
        Put: {
          TableName: tableName(),
          Item: { ...K.providerName(input.name), uuid: input.uuid },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ];
    if (parentRec) {
      items.push({
        Update: {
          TableName: tableName(),
          Key: K.provider(parentRec.uuid),
          UpdateExpression: 'ADD #children :one',
          ConditionExpression: 'attribute_exists(pk) AND #root = :root',
          ExpressionAttributeNames: { '#root': 'root', '#children': 'children' },
          ExpressionAttributeValues: { ':one': 1, ':root': parentRec.root },
        },
      });
    }
    items.push(logPut([rec.uuid, ...(parentRec ? [parentRec.uuid] : [])]));
    const out = await transact(items);
    if (out.ok) return rec;
    if (out.conflict) return RETRY;
    const dupUuid = out.failed.includes(0);
    const dupName = out.failed.includes(1);
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
  | { error: 'loop' }
  | { error: 'too_large'; count: number };

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
    const cur = await getProvider(uuid);
    if (!cur) return { error: 'not_found' } as const;
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
        items.push({
          Update: {
            TableName: tableName(),
            Key: K.provider(p.uuid),
            UpdateExpression: 'ADD #children :one',
            ConditionExpression: 'attribute_exists(pk) AND #root = :root',
            ExpressionAttributeNames: { '#root': 'root', '#children': 'children' },
            ExpressionAttributeValues: { ':one': 1, ':root': p.root },
          },
        });
        changed.add(p.uuid);
      } else {
        if (!opts.allowReparenting) return { error: 'unparent_not_allowed' } as const;
        subtree = await opts.subtree(uuid);
        next.parent = undefined;
        next.root = uuid;
      }
      if (cur.parent) {
        items.push({
          Update: {
            TableName: tableName(),
            Key: K.provider(cur.parent),
            UpdateExpression: 'ADD #children :m',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#children': 'children' },
            ExpressionAttributeValues: { ':m': -1 },
          },
        });
        changed.add(cur.parent);
      }
      // every descendant gets the new root; each is conditioned on its tree links
      // being what we saw, so a concurrent child creation or move retries us.
      for (const d of subtree) {
        if (d.uuid === uuid) continue;
        items.push({
          Update: {
            TableName: tableName(),
            Key: K.provider(d.uuid),
            UpdateExpression: 'SET #root = :root',
            ConditionExpression: 'attribute_exists(pk) AND #root = :old AND #children = :c',
            ExpressionAttributeNames: { '#root': 'root', '#children': 'children' },
            ExpressionAttributeValues: { ':root': next.root, ':old': cur.root, ':c': d.children },
          },
        });
        changed.add(d.uuid);
      }
    }
    if (change.name !== undefined && change.name !== cur.name) {
      next.name = change.name;
      items.push({
        Put: {
          TableName: tableName(),
          Item: { ...K.providerName(change.name), uuid },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
      items.push({
        Delete: {
          TableName: tableName(),
          Key: K.providerName(cur.name),
          ConditionExpression: '#uuid = :u',
          ExpressionAttributeNames: { '#uuid': 'uuid' },
          ExpressionAttributeValues: { ':u': uuid },
        },
      });
    }
    if (!items.length) return cur;
    next.updatedAt = new Date().toISOString();
    const selfIdx = items.length;
    items.push({
      Update: {
        TableName: tableName(),
        Key: K.provider(uuid),
        UpdateExpression: next.parent
          ? 'SET #name = :name, #parent = :parent, #root = :root, #updated = :upd'
          : 'SET #name = :name, #root = :root, #updated = :upd REMOVE #parent',
        ConditionExpression: 'attribute_exists(pk) AND #name = :oldname AND #root = :oldroot AND #children = :c',
        ExpressionAttributeNames: { '#name': 'name', '#root': 'root', '#parent': 'parent', '#updated': 'updated', '#children': 'children' },
        ExpressionAttributeValues: {
          ':name': next.name,
          ':root': next.root,
          ':upd': next.updatedAt,
          ':oldname': cur.name,
          ':oldroot': cur.root,
          ':c': cur.children,
          ...(next.parent ? { ':parent': next.parent } : {}),
        },
      },
    });
    items.push(logPut(changed));
    if (items.length > 100) return { error: 'too_large', count: items.length } as const;
    const out = await transact(items);
    if (out.ok) return next;
    if (out.conflict) return RETRY;
    // which condition failed? a taken name is final; anything else: re-read and retry
    const nameIdx = items.findIndex((it) => it.Put && (it.Put.Item as { pk: string }).pk.startsWith('RPNAME#'));
    if (nameIdx >= 0 && out.failed.includes(nameIdx) && !out.failed.includes(selfIdx)) return { error: 'duplicate_name' } as const;
    return RETRY;
  });
}

// ------------------------------------------------------------------ delete

export type DeleteFailure = { error: 'not_found' } | { error: 'has_children' } | { error: 'in_use' } | { error: 'too_large'; count: number };

export async function deleteProvider(uuid: string): Promise<true | DeleteFailure> {
  return withRetries(async () => {
    const cur = await getProvider(uuid);
    if (!cur) return { error: 'not_found' } as const;
    if (cur.children > 0) return { error: 'has_children' } as const;
    if (cur.allocationCount > 0) return { error: 'in_use' } as const;
    const items: TxItem[] = [
      {
        Delete: {
          TableName: tableName(),
          Key: K.provider(uuid),
          ConditionExpression: 'attribute_exists(pk) AND #children = :zero AND #allocs = :zero AND #invVer = :iv AND #gen = :g',
          ExpressionAttributeNames: { '#children': 'children', '#allocs': 'allocs', '#invVer': 'invVer', '#gen': 'gen' },
          ExpressionAttributeValues: { ':zero': 0, ':iv': cur.invVersion, ':g': cur.generation },
        },
      },
      {
        Delete: {
          TableName: tableName(),
          Key: K.providerName(cur.name),
          ConditionExpression: '#uuid = :u',
          ExpressionAttributeNames: { '#uuid': 'uuid' },
          ExpressionAttributeValues: { ':u': uuid },
        },
      },
    ];
    if (cur.parent) {
      items.push({
        Update: {
          TableName: tableName(),
          Key: K.provider(cur.parent),
          UpdateExpression: 'ADD #children :m',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#children': 'children' },
          ExpressionAttributeValues: { ':m': -1 },
        },
      });
    }
    const refs = refUpdates([...diffRefs('trait', cur.traits, []), ...diffRefs('resource_class', Object.keys(cur.inventories), [])]);
    items.push(...refs.items);
    items.push(logPut([uuid, ...(cur.parent ? [cur.parent] : [])]));
    if (items.length > 100) return { error: 'too_large', count: items.length } as const;
    const out = await transact(items);
    if (out.ok) return true;
    return RETRY; // something moved under us (a child, an allocation, a rename): re-evaluate
  });
}
