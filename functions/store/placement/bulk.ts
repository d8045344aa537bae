/**
 * Bulk import of resource providers — FOR LOADING AN EMPTY (OR OFFLINE) DEPLOYMENT
 * ONLY: benchmarks and the operators' bulk-load tool.
 *
 * Unlike every other write in Berth this is NOT a conditioned transaction: it uses
 * BatchWriteItem (25 puts per call, many calls in parallel), which has no conditions.
 * An existing provider or name item with the same key is silently overwritten, a
 * name taken by another provider is not detected across calls, and a parent that
 * exists only in the table (not in the input) is not locked. The input is validated
 * on its own (unique uuids and names, parents earlier in the input or absent), and
 * custom resource classes and traits must already exist (create them through the
 * API first); their reference counts are raised once per name at the end.
 *
 * What it keeps: the provider and name items have the same shape as createProvider
 * and the inventory/trait/aggregate writers produce (so every handler reads them
 * normally), parents' child counts are exact, and each batch also puts a change-log
 * entry naming its providers, so warm provider snapshots in running processes pick
 * the new providers up like any other write; aggregates named for the first time get
 * their first-sighting items (aggregates.ts), in load order.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { INVENTORY_DEFAULTS, type Inventory, type ProviderRecord, providerRecord } from '../../core/placement/model.js';
import { isStandardResourceClass, isStandardTrait } from '../../core/placement/standard.js';
import { missingResourceClasses, missingTraits } from './catalog.js';
import { announceLate, entryTime, logItemNaming, logStamp } from './changelog.js';
import { batchGet, ddb } from '../ddb/reads.js';
import { K } from './keys.js';
import { nextSeq, sharingItems, toItems, treeItems } from './provider-items.js';
import { BATCH_WRITE_MAX, batchPut, keyId } from '../ddb/batch.js';
import { Expr } from '../ddb/expr.js';

export interface BulkProvider {
  uuid: string;
  name: string;
  /** uuid of a provider earlier in the input */
  parent?: string;
  /** class -> inventory (fields default like POST /resource_providers/{u}/inventories) */
  inventories?: Record<string, Partial<Inventory> & { total: number }>;
  traits?: string[];
  aggregates?: string[];
}

export interface BulkOptions {
  /** BatchWriteItem calls in flight (default 32: each call waits on one round trip, so throughput follows concurrency) */
  concurrency?: number;
  onProgress?: (written: number, total: number) => void;
}

export interface BulkResult {
  providers: number;
  batches: number;
  /** BatchWriteItem calls repeated for unprocessed items (throttling) */
  retries: number;
  /** the provider records as written */
  records: ProviderRecord[];
  /** the change-log entries written with them (see imageAfterBulkLoad) */
  logEntries: Array<{ sk: string; ts: number }>;
}

/** 8 providers (their two items and a name item each) + 1 change-log entry = 25 puts, BatchWriteItem's maximum */
const PROVIDERS_PER_BATCH = 8;

export class BulkInputError extends Error {}

/** Build the provider records, checking the input is self-consistent. */
export function bulkRecords(input: BulkProvider[]): ProviderRecord[] {
  const byUuid = new Map<string, ProviderRecord>();
  const names = new Set<string>();
  const now = new Date().toISOString();
  for (const p of input) {
    if (byUuid.has(p.uuid)) throw new BulkInputError(`duplicate provider uuid ${p.uuid}`);
    if (names.has(p.name)) throw new BulkInputError(`duplicate provider name ${p.name}`);
    names.add(p.name);
    let root = p.uuid;
    if (p.parent !== undefined) {
      const parent = byUuid.get(p.parent);
      if (!parent) throw new BulkInputError(`provider ${p.uuid}: parent ${p.parent} must come earlier in the input`);
      parent.children++;
      root = parent.root;
    }
    const inventories: Record<string, Inventory> = {};
    for (const [rc, inv] of Object.entries(p.inventories ?? {})) inventories[rc] = { ...INVENTORY_DEFAULTS, ...inv };
    const traits = [...new Set(p.traits ?? [])];
    const aggregates = [...new Set(p.aggregates ?? [])];
    // one generation per kind of write the API would have needed
    const generation = [Object.keys(inventories).length, traits.length, aggregates.length].filter(Boolean).length;
    byUuid.set(
      p.uuid,
      providerRecord({
        uuid: p.uuid,
        name: p.name,
        generation,
        parent: p.parent,
        root,
        inventories,
        invVersion: Object.keys(inventories).length ? 1 : 0,
        usages: {},
        traits,
        aggregates,
        children: 0,
        allocationCount: 0,
        createdAt: now,
        updatedAt: now,
        seq: nextSeq(),
      }),
    );
  }
  return [...byUuid.values()];
}

/** Import providers with BatchWriteItem (see the module comment: empty deployments only). */
export async function bulkLoadProviders(input: BulkProvider[], opts: BulkOptions = {}): Promise<BulkResult> {
  const records = bulkRecords(input);
  const customRcs = new Map<string, number>();
  const customTraits = new Map<string, number>();
  for (const r of records) {
    for (const rc of Object.keys(r.inventories)) if (!isStandardResourceClass(rc)) customRcs.set(rc, (customRcs.get(rc) ?? 0) + 1);
    for (const t of r.traits) if (!isStandardTrait(t)) customTraits.set(t, (customTraits.get(t) ?? 0) + 1);
  }
  const [mrc, mt] = await Promise.all([missingResourceClasses(customRcs.keys()), missingTraits(customTraits.keys())]);
  if (mrc.length || mt.length) {
    throw new BulkInputError(`create these custom names first: ${[...mrc, ...mt].join(', ')}`);
  }
  // aggregates seen for the first time: their items, in load order (aggregates.ts)
  const aggs = [...new Set(records.flatMap((r) => r.aggregates))];
  const seenAggs = await batchGet(aggs.map((a) => K.aggregate(a)));
  const now = new Date().toISOString();
  const aggItems = aggs
    .filter((a) => !seenAggs.has(keyId(K.aggregate(a))))
    .map((a) => ({ ...K.aggregate(a), type: 'AGG', seq: nextSeq(), created: now }));
  for (let i = 0; i < aggItems.length; i += BATCH_WRITE_MAX) await batchPut(aggItems.slice(i, i + BATCH_WRITE_MAX));
  const batches: ProviderRecord[][] = [];
  for (let i = 0; i < records.length; i += PROVIDERS_PER_BATCH) batches.push(records.slice(i, i + PROVIDERS_PER_BATCH));
  let next = 0;
  let written = 0;
  let retries = 0;
  const logEntries: BulkResult['logEntries'] = [];
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      const items: Record<string, unknown>[] = [];
      const stamp = logStamp();
      for (const r of batch) items.push(...toItems(r, stamp.sk), { ...K.providerName(r.name), uuid: r.uuid });
      const log = logItemNaming(
        batch.map((r) => r.uuid),
        stamp,
      );
      items.push(log);
      logEntries.push({ sk: String(log.sk), ts: entryTime(String(log.sk)) });
      retries += await batchPut(items);
      // a batch stored late (throttled, retried) is announced again, as a late transaction is
      for (const e of await announceLate([log], batchPut)) logEntries.push(e);
      written += batch.length;
      opts.onProgress?.(written, records.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 32) }, worker));
  // each tree's members (lists narrowed to a tree read them: providers.ts readTree), each
  // aggregate's sharing providers (readSharingProviders)
  const trees = [...treeItems(records), ...sharingItems(records)];
  for (let i = 0; i < trees.length; i += BATCH_WRITE_MAX) retries += await batchPut(trees.slice(i, i + BATCH_WRITE_MAX));
  for (const [kind, counts] of [
    ['rc', customRcs],
    ['trait', customTraits],
  ] as const) {
    for (const [name, n] of counts) {
      const e = new Expr().add('refs', n);
      const key = kind === 'rc' ? K.customResourceClass(name) : K.customTrait(name);
      await ddb().send(new UpdateCommand(e.when(e.exists('pk')).updateInput(key)));
    }
  }
  return { providers: records.length, batches: batches.length, retries, records, logEntries };
}
