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
 * The import's own item, `META` / `import-placement`, says which source the table's
 * Placement items came from, how many passes ran and when the last one ended; a pass
 * begins and ends with a conditional write of it, so two passes never run at once.
 */
import { createHash, randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ConsumerRecord } from '../../core/placement/consumers.js';
import { type PlacementState, emptyState, sameResources } from '../../core/placement/transfer.js';
import { usageDeltas } from '../../core/placement/usage.js';
import { BATCH_WRITE_MAX, batchWrite, type Key, keyId, type WriteRequest } from '../ddb/batch.js';
import { tableName, type Item } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { Expr } from '../ddb/expr.js';
import { scanTable } from '../ddb/query.js';
import { allocationRowItem } from './allocations.js';
import { customNameFromItem, customNameItem } from './catalog.js';
import { announceLate, entryTime, logItemNaming, logStamp, readLogSince } from './changelog.js';
import { consumerFromItem, consumerToItem } from './consumers.js';
import { K } from './keys.js';
import { defItem, fromItems, MANAGED_BY, sharingItems, stateItem, treeItems } from './provider-items.js';
import { usageShardOf } from './usage.js';

export const IMPORT_META = 'import-placement';

/** What the import's own item says (`META` / `import-placement`). */
export interface ImportRecord {
  /** the source's Placement endpoint */
  source: string;
  /** the microversion the source was read at */
  version: string;
  /** passes begun (the current one included) */
  passes: number;
  /** 'writing' while a pass writes (and after one that was cut short), else 'done' */
  phase: 'writing' | 'done';
  /** the pass that holds the item (a random id) */
  owner: string;
  startedAt: string;
  passStartedAt: string;
  /** when the pass last said it was writing (every few seconds) */
  lastWriteAt: string;
  /** when the last pass that finished ended */
  lastPassEnd?: string;
  /** whether that pass was a final one (the source frozen, every allocation read again) */
  final: boolean;
  /** the last passes, newest last (counts of what each read and wrote) */
  history: Array<Record<string, unknown>>;
}

/** the import's own item, or undefined */
export async function readImportRecord(): Promise<ImportRecord | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.meta(IMPORT_META), ConsistentRead: true }));
  return r.Item ? recordFromItem(r.Item) : undefined;
}

function recordFromItem(it: Item): ImportRecord {
  return {
    source: String(it.source),
    version: String(it.version),
    passes: Number(it.passes ?? 0),
    phase: it.phase === 'writing' ? 'writing' : 'done',
    owner: String(it.owner ?? ''),
    startedAt: String(it.startedAt),
    passStartedAt: String(it.passStartedAt ?? it.startedAt),
    lastWriteAt: String(it.lastWriteAt ?? it.passStartedAt ?? it.startedAt),
    lastPassEnd: it.lastPassEnd ? String(it.lastPassEnd) : undefined,
    final: it.final === true,
    history: Array.isArray(it.history) ? it.history : [],
  };
}

/** A pass may not start (someone else's rows, another source, a pass running). */
export class ImportRefused extends Error {}

const HISTORY_KEPT = 20;

/**
 * Take the import's item for a new pass: created for the first pass, else only if no
 * other pass took it since `prev` was read (passes unchanged).
 */
export async function beginPass(prev: ImportRecord | undefined, source: string, version: string, now: string): Promise<ImportRecord> {
  const rec: ImportRecord = {
    source,
    version,
    passes: (prev?.passes ?? 0) + 1,
    phase: 'writing',
    owner: randomUUID(),
    startedAt: prev?.startedAt ?? now,
    passStartedAt: now,
    lastWriteAt: now,
    lastPassEnd: prev?.lastPassEnd,
    final: prev?.final ?? false,
    history: prev?.history ?? [],
  };
  const e = new Expr()
    .set('source', source)
    .set('version', version)
    .set('passes', rec.passes)
    .set('phase', 'writing')
    .set('owner', rec.owner)
    .set('startedAt', rec.startedAt)
    .set('passStartedAt', now)
    .set('lastWriteAt', now);
  e.when(prev ? e.eq('passes', prev.passes) : e.absent('pk'));
  await conditional(e, 'another import pass began on this table meanwhile');
  return rec;
}

/** The pass is still writing (what the next pass's check of who wrote what goes by). */
export async function heartbeat(rec: ImportRecord, at: string): Promise<void> {
  const e = new Expr().set('lastWriteAt', at);
  e.when(e.eq('owner', rec.owner));
  await conditional(e, 'another import pass took this table over');
  rec.lastWriteAt = at;
}

/** The pass ended: its counts go into the history. */
export async function endPass(rec: ImportRecord, final: boolean, summary: Record<string, unknown>, at: string): Promise<void> {
  const history = [...rec.history, { pass: rec.passes, final, startedAt: rec.passStartedAt, endedAt: at, ...summary }].slice(-HISTORY_KEPT);
  const e = new Expr().set('phase', 'done').set('lastPassEnd', at).set('lastWriteAt', at).set('final', final).set('history', history);
  e.when(e.eq('owner', rec.owner));
  await conditional(e, 'another import pass took this table over');
  Object.assign(rec, { phase: 'done', lastPassEnd: at, lastWriteAt: at, final, history });
}

async function conditional(e: Expr, refused: string): Promise<void> {
  try {
    await ddb().send(new UpdateCommand(e.updateInput(K.meta(IMPORT_META))));
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new ImportRefused(refused);
    throw err;
  }
}

// ------------------------------------------------------------------ reading the table

/** Placement's item families: what makes a table "not empty" for an import, and what a pass may write */
const PLACEMENT_PKS = /^(RP|RPNAME|CONS|RCS|TRAITS|AGG|USAGE)#/;

/** attributes a comparison leaves out: when an item was written, not what it says */
const VOLATILE = new Set(['created', 'updated', 'last']);

function canonical(v: unknown): unknown {
  if (v instanceof Set) return { $set: [...v].map(String).sort() };
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) if ((v as Record<string, unknown>)[k] !== undefined) out[k] = canonical((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/** What an item says (its timestamps aside), as a short digest: two items with one digest need no write. */
export function itemDigest(item: Record<string, unknown>): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!VOLATILE.has(k)) rest[k] = v;
  return createHash('sha1')
    .update(JSON.stringify(canonical(rest)))
    .digest('base64');
}

/** the time an item says it was written (ms), for the check of who wrote it */
function writtenAt(it: Item): number {
  let t = 0;
  for (const a of ['created', 'updated']) {
    const v = Date.parse(String(it[a] ?? ''));
    if (!Number.isNaN(v)) t = Math.max(t, v);
  }
  if (typeof it.last === 'string') t = Math.max(t, entryTime(it.last));
  return t;
}

export interface TableRead {
  state: PlacementState;
  /** keyId -> digest of every Placement item but allocation rows */
  digests: Map<string, string>;
  /** Placement items read (allocation rows not counted) */
  placementItems: number;
  record?: ImportRecord;
  /** items written by something other than the import after its last pass (a few, as examples) */
  foreign: string[];
  foreignCount: number;
}

/** how long after its last sign of life a pass that was cut short may still have written */
export const INTERRUPTED_MARGIN_MS = 60_000;

/** The instant after which whatever wrote a Placement item was not the import. */
export function ownWritesEnd(rec: ImportRecord): number {
  return rec.phase === 'done' && rec.lastPassEnd ? Date.parse(rec.lastPassEnd) : Date.parse(rec.lastWriteAt) + INTERRUPTED_MARGIN_MS;
}

/**
 * Every Placement item of the table but allocation rows (one parallel Scan): the state
 * as records, a digest of each item, the import's item, and any item written after the
 * import's last pass (by an API, the bare-metal scheduler: not the import's own rows).
 */
export async function readTable(opts: { segments?: number; onProgress?: (items: number) => void } = {}): Promise<TableRead> {
  const record = await readImportRecord();
  const end = record ? ownWritesEnd(record) : undefined;
  const defs = new Map<string, Item>();
  const states = new Map<string, Item>();
  const digests = new Map<string, string>();
  const state = emptyState();
  const foreign: string[] = [];
  let foreignCount = 0;
  let scanned = 0;
  let placementItems = 0;
  await scanTable({
    segments: opts.segments,
    sk: { beginsWith: K.providerAllocationPrefix, not: true },
    onPage: (items) => {
      for (const it of items) {
        const pk = String(it.pk);
        const sk = String(it.sk);
        if (!PLACEMENT_PKS.test(pk)) continue;
        placementItems++;
        digests.set(keyId({ pk, sk }), itemDigest(it));
        // who wrote it: anything after the import's last pass is someone else's
        if (end !== undefined && (writtenAt(it) > end || it[MANAGED_BY] !== undefined)) {
          foreignCount++;
          if (foreign.length < 5) foreign.push(`${pk} / ${sk}${it[MANAGED_BY] !== undefined ? " (a bare-metal node's provider)" : ''}`);
        }
        if (pk.startsWith('RP#')) {
          const uuid = pk.slice(3);
          if (sk === K.provider(uuid).sk) defs.set(uuid, it);
          else if (sk === K.providerState(uuid).sk) states.set(uuid, it);
        } else if (pk.startsWith('CONS#')) {
          const c = consumerFromItem(it);
          state.consumers.set(c.uuid, c);
        } else if (pk.startsWith('RCS#')) {
          const c = customNameFromItem(it);
          state.classes.set(c.name, c);
        } else if (pk.startsWith('TRAITS#')) {
          const c = customNameFromItem(it);
          state.traits.set(c.name, c);
        } else if (pk.startsWith('AGG#') && sk === 'AGG') {
          state.aggregates.set(pk.slice(4), Number(it.seq ?? 0));
        }
      }
      scanned += items.length;
      opts.onProgress?.(scanned);
    },
  });
  for (const [uuid, def] of defs) state.providers.set(uuid, fromItems(def, states.get(uuid)));
  if (end !== undefined) {
    // a change-log entry after it: a Placement write (deleting something leaves no item)
    const { entries } = await readLogSince(end + 1);
    if (entries.length) {
      foreignCount += entries.length;
      if (foreign.length < 5)
        foreign.push(`${entries.length} change-log entr${entries.length === 1 ? 'y' : 'ies'} since ${new Date(end).toISOString()}`);
    }
  }
  return { state, digests, placementItems, record, foreign, foreignCount };
}

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

/** The Placement state of the table (export-placement's source): readTable's, without the digests. */
export async function readPlacementState(opts: { segments?: number } = {}): Promise<PlacementState> {
  return (await readTable(opts)).state;
}
