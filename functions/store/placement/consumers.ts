/**
 * Consumer items (`CONS#<uuid>` / `CONS`) and the legacy-allocation bookkeeping.
 *
 * A consumer item holds the consumer's project, user, type, generation and its
 * complete allocations (provider -> class -> amount), so one strongly consistent read
 * answers "what does this consumer hold, at which generation" and a claim conditions
 * its whole write on that one item. It exists exactly while the consumer holds
 * allocations.
 *
 * Legacy rows: allocation rows without a consumer item can only come from imported
 * data (importLegacyAllocations in allocations.ts). They are flagged (`legacy`), carry
 * the list of all the consumer's providers (`legacyRps`) and sit in a sparse gsi2
 * partition set (`LEGACYALLOC#<shard>`) the migration reads. A META item says whether
 * any may exist; claims consult it (cached per process for LEGACY_FLAG_TTL_MS) before
 * looking for legacy rows of a consumer that has no item, and an import raises the
 * flag and waits out that TTL before writing its first row.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AllocationMap, ConsumerRecord } from '../../core/placement/consumers.js';
import { tableName, type Item } from '../ddb/client.js';
import { batchGet, ddb } from '../ddb/reads.js';
import { K } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { keyId } from '../ddb/batch.js';
import { sleep } from '../ddb/retry.js';
import { Expr } from '../ddb/expr.js';
import { config } from '../../config.js';

/**
 * The order of a consumer's allocations as they were written: `[[provider, class, …], …]`.
 * GET /allocations/{consumer} answers in that order, as Placement does (its rows come
 * back in insertion order, i.e. the last write's body order); a DynamoDB map keeps no
 * key order, so the item says it in this list.
 */
export function allocationOrder(a: AllocationMap): string[][] {
  return Object.entries(a).map(([rp, res]) => [rp, ...Object.keys(res)]);
}

/** The allocations with their keys in the written order (`ord`); anything `ord` does not name follows, as stored. */
export function inWrittenOrder(a: AllocationMap, ord: unknown): AllocationMap {
  if (!Array.isArray(ord)) return a;
  const out: AllocationMap = {};
  for (const entry of ord) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') continue;
    const [rp, ...rcs] = entry as string[];
    const res = a[rp];
    if (!res || out[rp]) continue;
    const ordered: Record<string, number> = {};
    for (const rc of rcs) if (Object.hasOwn(res, rc)) ordered[rc] = res[rc]!;
    for (const [rc, n] of Object.entries(res)) if (!Object.hasOwn(ordered, rc)) ordered[rc] = n;
    out[rp] = ordered;
  }
  for (const [rp, res] of Object.entries(a)) if (!Object.hasOwn(out, rp)) out[rp] = res;
  return out;
}

export function consumerToItem(c: ConsumerRecord): Record<string, unknown> {
  return {
    ...K.consumer(c.uuid),
    type: 'CONS',
    uuid: c.uuid,
    project: c.project,
    user: c.user,
    ...(c.type !== null ? { ctype: c.type } : {}),
    gen: c.generation,
    allocs: c.allocations,
    ord: allocationOrder(c.allocations),
    created: c.createdAt,
    updated: c.updatedAt,
    ...(c.last ? { last: c.last } : {}),
  };
}

export function consumerFromItem(it: Item): ConsumerRecord {
  return {
    uuid: it.uuid,
    project: it.project,
    user: it.user,
    type: it.ctype ?? null,
    generation: Number(it.gen ?? 0),
    allocations: inWrittenOrder((it.allocs as AllocationMap) ?? {}, it.ord),
    createdAt: it.created,
    updatedAt: it.updated ?? it.created,
    ...(it.last ? { last: String(it.last) } : {}),
  };
}

export async function getConsumer(uuid: string): Promise<ConsumerRecord | undefined> {
  if (!keyFits(K.consumer(uuid))) return undefined;
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.consumer(uuid), ConsistentRead: true }));
  return r.Item ? consumerFromItem(r.Item) : undefined;
}

/** Strongly consistent; missing consumers are absent. */
export async function getConsumers(uuids: string[]): Promise<Map<string, ConsumerRecord>> {
  const items = await batchGet(uuids.map((u) => K.consumer(u)));
  const out = new Map<string, ConsumerRecord>();
  for (const u of uuids) {
    const it = items.get(keyId(K.consumer(u)));
    if (it) out.set(u, consumerFromItem(it));
  }
  return out;
}

// ------------------------------------------------------------------ legacy rows

export const LEGACY_META = 'legacy-allocations';

/** How long a process trusts "no legacy rows" (and how long an import waits before writing). */
export function legacyFlagTtlMs(): number {
  return config().legacyFlagTtlMs;
}

const flagCache = new Map<string, { pending: boolean; at: number }>();

export interface LegacyFlag {
  pending: boolean;
  epoch: number;
}

export async function readLegacyFlag(): Promise<LegacyFlag> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.meta(LEGACY_META), ConsistentRead: true }));
  return { pending: r.Item?.pending === true, epoch: Number(r.Item?.epoch ?? 0) };
}

/** Could any allocation row lack its consumer item? (cached per process) */
export async function legacyRowsMayExist(): Promise<boolean> {
  const hit = flagCache.get(tableName());
  if (hit && Date.now() - hit.at < legacyFlagTtlMs()) return hit.pending;
  const at = Date.now();
  const { pending } = await readLegacyFlag();
  flagCache.set(tableName(), { pending, at });
  return pending;
}

/** Raise the flag, then wait until no process can still trust an older "no". */
export async function beginLegacyImport(): Promise<void> {
  await ddb().send(new UpdateCommand(new Expr().set('pending', true).add('epoch', 1).updateInput(K.meta(LEGACY_META))));
  flagCache.delete(tableName());
  await sleep(legacyFlagTtlMs());
}

/** Lower the flag if no import began since `epoch` was read (the migration found nothing left). */
export async function endLegacyImport(epoch: number): Promise<boolean> {
  try {
    const e = new Expr().set('pending', false);
    await ddb().send(new UpdateCommand(e.when(e.eq('epoch', epoch)).updateInput(K.meta(LEGACY_META))));
    flagCache.delete(tableName());
    return true;
  } catch (e) {
    if ((e as Error).name === 'ConditionalCheckFailedException') return false;
    throw e;
  }
}

export interface LegacyRow {
  provider: string;
  consumer: string;
  resources: Record<string, number>;
}

/**
 * The legacy allocations of a consumer that has no item: find one row through gsi1
 * (all rows of a consumer), then read every row it names (`legacyRps`) consistently.
 */
export async function legacyAllocations(consumer: string): Promise<AllocationMap | undefined> {
  if (!keyFits({ pk: K.allocationByConsumerPk(consumer) })) return undefined;
  const q = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      FilterExpression: 'attribute_exists(#legacy)',
      ExpressionAttributeNames: { '#legacy': 'legacy' },
      ExpressionAttributeValues: { ':p': K.allocationByConsumerPk(consumer) },
    }),
  );
  const rps = new Set<string>();
  for (const it of q.Items ?? []) for (const rp of (it.legacyRps as string[]) ?? [it.provider]) rps.add(rp);
  if (!rps.size) return undefined;
  const rows = await legacyRowsOf(consumer, [...rps]);
  return rows.length ? Object.fromEntries(rows.map((r) => [r.provider, r.resources])) : undefined;
}

/** The consumer's legacy rows among `providers` (strongly consistent). */
export async function legacyRowsOf(consumer: string, providers: string[]): Promise<LegacyRow[]> {
  const items = await batchGet(providers.map((rp) => K.providerAllocation(rp, consumer)));
  const out: LegacyRow[] = [];
  for (const rp of providers) {
    const it = items.get(keyId(K.providerAllocation(rp, consumer)));
    if (it?.legacy) out.push({ provider: rp, consumer, resources: it.resources });
  }
  return out;
}
