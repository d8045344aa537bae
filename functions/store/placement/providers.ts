/**
 * Resource providers as read: both items of one (readProvider), trees, names, many at once,
 * the sharing lists. How a provider is created, renamed, moved and deleted is
 * provider-tree.ts (the items and their transactions) under the use cases
 * (functions/usecases/placement/providers.ts); other writers (inventories, traits,
 * aggregates, allocations) build on the two items' shapes (provider-items.ts).
 */
import { keyId } from '../ddb/batch.js';
import { batchGet } from '../ddb/reads.js';
import { queryPartition } from '../ddb/query.js';
import type { ProviderRecord } from '../../core/placement/model.js';
import { fromItems, type ProviderRead, readOf, type StateRead, stateFromItem } from './provider-items.js';
import { K, PROVIDER_SHARDS } from './keys.js';
import { keyFits } from '../ddb/keys.js';
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
