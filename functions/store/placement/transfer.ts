/**
 * The table side of moving a cloud's Placement state in (`berth import-placement`) and
 * out (`berth export-placement`): reading the Placement state a table holds, and
 * writing the state an import pass leaves (functions/core/placement/transfer.ts) as
 * today's items, built by the same builders every other writer uses (defItem,
 * stateItem, treeItems, sharingItems, consumerToItem, allocationRowItem, the usage
 * deltas, customNameItem).
 *
 * FOR A DEPLOYMENT NO CLIENT WRITES TO YET (or an empty table): like the bulk loader,
 * a pass writes with BatchWriteItem (25 requests a call, no conditions), and only items
 * that differ from what the table holds. It compares what it would write with the
 * items themselves (a digest of each, timestamps aside), so a pass that was
 * interrupted is completed by the next one, and a pass over an unchanged source writes
 * nothing. Its phases keep that true: custom names and aggregates first, then
 * allocation rows, consumers, usage, the providers (each write call with a change-log
 * entry naming its providers, so running APIs re-read them) and last what goes away. A
 * provider's state item, which holds the generation the next pass compares with, is
 * written after everything its consumers changed: a pass cut short leaves the old
 * generation there, and the next pass reads that provider again. Allocation rows are
 * not compared (a million of them would not fit in memory): they follow their
 * consumer item, which is written after them; after an interrupted pass the next one
 * also reads every row and repairs any the interruption left (reconcileRows).
 *
 * The import's own item (which source, how many passes, two never at once) is
 * transfer-record.ts; reading what the table holds, transfer-read.ts.
 */
import type { ConsumerRecord } from '../../core/placement/consumers.js';
import { type PlacementState, sameResources } from '../../core/placement/transfer.js';
import { usageDeltas } from '../../core/placement/usage.js';
import { BATCH_WRITE_MAX, batchWrite, type Key, keyId, type WriteRequest } from '../ddb/batch.js';
import { scanTable } from '../ddb/query.js';
import { allocationRowItem } from './allocations.js';
import { customNameItem } from './catalog.js';
import { announceLate, logItemNaming, logStamp } from './changelog.js';
import { consumerToItem } from './consumers.js';
import { K } from './keys.js';
import { defItem, sharingItems, stateItem, treeItems } from './provider-items.js';
import { usageShardOf } from './usage.js';
import { itemDigest, type TableRead } from './transfer-read.js';

// ------------------------------------------------------------------ writing a pass

/** what DynamoDB refuses: an item over 400 KB (kept under it with room for the attribute names' overhead) */
export const MAX_ITEM_BYTES = 350 * 1024;

/** an item's size, roughly (its JSON: an overestimate for numbers, close for strings) */
function approxBytes(item: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(item, (_k, v) => (v instanceof Set ? [...v] : v)));
}

/** An item the import would write that DynamoDB would refuse (too large). */
export class ItemTooLarge extends Error {}

export interface PassWriteOptions {
  /** the pass's time: every item it writes says so */
  now: string;
  /** (provider, consumer) -> the consumer's place in the provider's allocation list as read (orders the provider's allocations) */
  rank: (provider: string, consumer: string) => number | undefined;
  /** BatchWriteItem calls in flight */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
  /** called every few seconds while writing (the import's item says the pass is alive) */
  heartbeat?: () => Promise<void>;
  /** called as each phase begins (a caller attributing what it measures to them) */
  onPhase?: (phase: PassPhase) => void;
}

/** the phases of a pass, in order (the module comment says why that order) */
export type PassPhase = 'catalog' | 'allocations' | 'consumers' | 'usage' | 'providers' | 'gone providers' | 'gone catalog';

export interface PassWriteResult {
  puts: Record<string, number>;
  deletes: Record<string, number>;
  /** change-log entries written */
  logEntries: number;
  /** BatchWriteItem calls repeated for unprocessed requests (throttling) */
  retries: number;
  calls: number;
}

/** how the pass's counts name an item's family */
const familyOf = (pk: string, sk: string) =>
  pk.startsWith('RP#')
    ? sk.startsWith(K.providerAllocationPrefix)
      ? 'allocation'
      : 'provider'
    : pk.startsWith('AGG#') && sk.startsWith(K.sharingPrefix)
      ? 'sharing'
      : ({ RPNAME: 'name', CONS: 'consumer', RCS: 'class', TRAITS: 'trait', AGG: 'aggregate', USAGE: 'usage' }[pk.replace(/#.*$/, '')] ?? pk);

/**
 * Write `next` over what `table` holds (see the module comment for the phases).
 * Items equal to the table's are not written; items the table has and `next` has not
 * are deleted (aggregates' first sightings stay, as upstream's rows).
 */
export async function writePass(table: TableRead, next: PlacementState, opts: PassWriteOptions): Promise<PassWriteResult> {
  const prev = table.state;
  const seen = new Set<string>();
  const result: PassWriteResult = { puts: {}, deletes: {}, logEntries: 0, retries: 0, calls: 0 };
  const tooLarge: string[] = [];
  /** a put of `item` onto `list`, unless the table holds it already */
  const want = (list: WriteRequest[], item: Record<string, unknown>): boolean => {
    const id = keyId(item as Key);
    seen.add(id);
    if (table.digests.get(id) === itemDigest(item)) return false;
    if (approxBytes(item) > MAX_ITEM_BYTES) tooLarge.push(`${item.pk} / ${item.sk}`);
    list.push({ put: item });
    return true;
  };

  // custom names and aggregates' first sightings
  const catalog: WriteRequest[] = [];
  for (const c of next.classes.values()) want(catalog, customNameItem('rc', c));
  for (const c of next.traits.values()) want(catalog, customNameItem('trait', c));
  for (const [a, seq] of next.aggregates) {
    if (prev.aggregates.get(a) !== seq) catalog.push({ put: { ...K.aggregate(a), type: 'AGG', seq, created: opts.now } });
  }

  // consumers, and the allocation rows of those that change
  const rows: WriteRequest[] = [];
  const consumers: WriteRequest[] = [];
  const rowItem = (c: ConsumerRecord, rp: string) =>
    allocationRowItem(
      { provider: rp, consumer: c.uuid, resources: c.allocations[rp], generation: c.generation },
      opts.now,
      opts.rank(rp, c.uuid) ?? UNRANKED,
    );
  for (const c of next.consumers.values()) {
    if (!want(consumers, consumerToItem({ ...c, updatedAt: opts.now }))) continue;
    for (const rp of Object.keys(c.allocations)) rows.push({ put: rowItem(c, rp) });
    const had = prev.consumers.get(c.uuid);
    for (const rp of Object.keys(had?.allocations ?? {}))
      if (!Object.hasOwn(c.allocations, rp)) rows.push({ delete: K.providerAllocation(rp, c.uuid) });
  }
  for (const had of prev.consumers.values()) {
    if (next.consumers.has(had.uuid)) continue;
    for (const rp of Object.keys(had.allocations)) rows.push({ delete: K.providerAllocation(rp, had.uuid) });
  }

  // usage: every user's item in every shard, from the consumers
  const usage: WriteRequest[] = [];
  for (const d of usageDeltas(
    [...next.consumers.values()].map((c) => ({ uuid: c.uuid, after: c })),
    usageShardOf,
  ))
    want(usage, { ...K.usage(d.project, d.shard, d.user), project: d.project, user: d.user, ...d.add });

  // providers: their two items, name, tree, sharing entries (a changed item says when it changed)
  const records = [...next.providers.values()];
  const byProvider = new Map<string, WriteRequest[]>();
  const of = (uuid: string) => {
    let l = byProvider.get(uuid);
    if (!l) byProvider.set(uuid, (l = []));
    return l;
  };
  for (const r of records) {
    const touched = { ...r, updatedAt: opts.now };
    want(of(r.uuid), defItem(touched));
    want(of(r.uuid), stateItem(touched, ''));
    want(of(r.uuid), { ...K.providerName(r.name), uuid: r.uuid });
  }
  for (const it of treeItems(records)) want(of(String(it.pk).slice(3)), it);
  for (const it of sharingItems(records)) want(of(String(it.uuid)), it);
  if (tooLarge.length) {
    throw new ItemTooLarge(
      `${tooLarge.length} item(s) would pass DynamoDB's item size (${MAX_ITEM_BYTES} bytes kept as the bound), e.g. ${tooLarge.slice(0, 3).join(', ')}: a consumer on very many providers, a tree with very many members, or a provider with very many traits or aggregates; Berth cannot hold it either`,
    );
  }

  // what goes: every item of the families the pass writes that `next` does not have
  const goneProviders = new Map<string, WriteRequest[]>();
  const goneCatalog: WriteRequest[] = [];
  for (const id of table.digests.keys()) {
    if (seen.has(id)) continue;
    const [pk, sk] = id.split('\u0000') as [string, string];
    const del: WriteRequest = { delete: { pk, sk } };
    if (pk.startsWith('AGG#') && sk === 'AGG') continue;
    if (pk.startsWith('CONS#')) consumers.push(del);
    else if (pk.startsWith('USAGE#')) usage.push(del);
    else if (/^(RCS|TRAITS)#/.test(pk)) goneCatalog.push(del);
    else {
      // a provider's items, its name (the provider it named is re-read), a sharing entry
      const provider = pk.startsWith('RP#') ? pk.slice(3) : sk.startsWith(K.sharingPrefix) ? sk.slice(K.sharingPrefix.length) : String(pk);
      let l = goneProviders.get(provider);
      if (!l) goneProviders.set(provider, (l = []));
      l.push(del);
    }
  }

  const total = [catalog, rows, consumers, usage, goneCatalog, ...byProvider.values(), ...goneProviders.values()].reduce((n, l) => n + l.length, 0);
  let done = 0;
  opts.onProgress?.(0, total);
  let beat = Date.now();
  const sent = async (reqs: WriteRequest[]) => {
    for (const r of reqs) {
      const [kind, key] = 'put' in r ? (['puts', r.put as Key] as const) : (['deletes', r.delete] as const);
      const f = familyOf(String(key.pk), String(key.sk));
      result[kind][f] = (result[kind][f] ?? 0) + 1;
    }
    done += reqs.length;
    opts.onProgress?.(done, total);
    if (opts.heartbeat && Date.now() - beat > HEARTBEAT_MS) {
      beat = Date.now();
      await opts.heartbeat();
    }
  };
  const plain = async (reqs: WriteRequest[]) => {
    const calls: WriteRequest[][] = [];
    for (let i = 0; i < reqs.length; i += BATCH_WRITE_MAX) calls.push(reqs.slice(i, i + BATCH_WRITE_MAX));
    await inParallel(calls, opts.concurrency, async (call) => {
      result.retries += await batchWrite(call);
      result.calls++;
      await sent(call);
    });
  };
  /**
   * calls of providers' requests, each with a change-log entry naming its providers
   * (and that entry's key as the `last` of the state items it writes)
   */
  const announced = async (writes: Map<string, WriteRequest[]>) => {
    const calls: Array<Array<[string, WriteRequest[]]>> = [];
    let call: Array<[string, WriteRequest[]]> = [];
    let size = 0;
    const room = BATCH_WRITE_MAX - 1;
    for (const [uuid, reqs] of writes) {
      for (let i = 0; i < reqs.length; i += room) {
        const part = reqs.slice(i, i + room);
        if (size + part.length > room) {
          calls.push(call);
          call = [];
          size = 0;
        }
        call.push([uuid, part]);
        size += part.length;
      }
    }
    if (call.length) calls.push(call);
    await inParallel(calls, opts.concurrency, async (parts) => {
      const stamp = logStamp();
      const reqs = parts.flatMap(([uuid, part]) =>
        part.map((r): WriteRequest => ('put' in r && r.put.sk === K.providerState(uuid).sk ? { put: { ...r.put, last: stamp.sk } } : r)),
      );
      const log = logItemNaming(
        parts.map(([uuid]) => uuid).filter((u) => !u.includes('#')),
        stamp,
      );
      result.retries += await batchWrite([...reqs, { put: log }]);
      result.calls++;
      result.logEntries++;
      // a call stored late (throttled, retried) is announced again, as a late transaction is
      result.logEntries += (await announceLate([log], (items) => batchWrite(items.map((put) => ({ put }))))).length;
      await sent(reqs);
    });
  };

  const phase = (p: PassPhase) => opts.onPhase?.(p);
  phase('catalog');
  await plain(catalog);
  phase('allocations');
  await plain(rows);
  phase('consumers');
  await plain(consumers);
  phase('usage');
  await plain(usage);
  phase('providers');
  await announced(byProvider);
  phase('gone providers');
  await announced(goneProviders);
  phase('gone catalog');
  await plain(goneCatalog);
  return result;
}

/** the rank of a row whose provider's allocation list the pass did not read: after the others */
const UNRANKED = 999_999;
/** how often a writing pass says it is alive (readTable's INTERRUPTED_MARGIN_MS must cover it) */
const HEARTBEAT_MS = 10_000;

/** `work` over `xs` with at most `concurrency` (default 16) in flight */
async function inParallel<T>(xs: readonly T[], concurrency: number | undefined, work: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < xs.length) await work(xs[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(xs.length, Math.max(1, concurrency ?? 16)) }, worker));
}

/**
 * After a pass that was cut short: every allocation row of the table checked against
 * the consumers of `next` (one Scan of the rows), rows no consumer has deleted and rows
 * missing or different written. Returns what it changed.
 */
export async function reconcileRows(
  next: PlacementState,
  opts: Pick<PassWriteOptions, 'now' | 'rank' | 'concurrency'> & { segments?: number },
): Promise<{ rows: number; deleted: number; written: number }> {
  const requests: WriteRequest[] = [];
  const good = new Map<string, number>();
  let rows = 0;
  await scanTable({
    segments: opts.segments,
    sk: { beginsWith: K.providerAllocationPrefix },
    onPage: (items) => {
      for (const it of items) {
        if (!String(it.pk).startsWith('RP#')) continue;
        rows++;
        const rp = String(it.pk).slice(3);
        const c = next.consumers.get(String(it.consumer));
        const res = c?.allocations[rp];
        if (!c || !res) requests.push({ delete: { pk: String(it.pk), sk: String(it.sk) } });
        else if (Number(it.cgen) === c.generation && !it.legacy && sameResources(it.resources, res)) good.set(c.uuid, (good.get(c.uuid) ?? 0) + 1);
      }
    },
  });
  const deleted = requests.length;
  for (const c of next.consumers.values()) {
    const rps = Object.keys(c.allocations);
    if ((good.get(c.uuid) ?? 0) === rps.length) continue;
    for (const rp of rps)
      requests.push({
        put: allocationRowItem(
          { provider: rp, consumer: c.uuid, resources: c.allocations[rp], generation: c.generation },
          opts.now,
          opts.rank(rp, c.uuid) ?? UNRANKED,
        ),
      });
  }
  const calls: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) calls.push(requests.slice(i, i + BATCH_WRITE_MAX));
  await inParallel(calls, opts.concurrency, async (call) => {
    await batchWrite(call);
  });
  return { rows, deleted, written: requests.length - deleted };
}
