/**
 * The change log that keeps every process's provider snapshot current
 * (docs/consistency.md, "Reading at scale: the provider snapshot").
 *
 * Every transaction that changes what a provider looks like to the candidates solver
 * (inventory, usage, traits, aggregates, parent, name, existence) also Puts one small
 * log item, in one of CHANGE_LOG_SHARDS partitions (random, to spread writes):
 *   pk = LOG#<shard>, sk = <ms timestamp, 13 digits>#<random>
 * An entry CARRIES what a claim or a delete changed (`d`: per provider the usage,
 * generation and allocation-count deltas), so a reader adds it to the provider it holds
 * instead of reading the provider again; anything else (inventory, traits, aggregates,
 * tree links, a new or deleted provider) it NAMES (`rps`), and readers re-read those.
 *
 * Deltas are exact because every write of a provider's state item sets its `last` to the
 * entry's sort key under the condition `last < sk` (stateGuard): the writes of one
 * provider commit in sort-key order, so a state item read with `last = L` holds exactly
 * the entries of that provider with sort key <= L, and a reader adds the others.
 *
 * Readers query every shard since their last refresh with strongly consistent reads,
 * re-reading a short overlap window so an entry whose transaction committed after a later
 * timestamp was read cannot be missed: a write that commits later than LATE_MS after its
 * entry's timestamp is announced again, stamped anew, before it is answered.
 */
import { queryPartition } from '../ddb/query.js';
import { randomBytes } from 'node:crypto';
import { config } from '../../config.js';
import { tableName } from '../ddb/client.js';
import { K } from './keys.js';
import { asMarker, LATE_TRIES, type TxItem } from '../ddb/tx.js';
import { log } from '../../observability/log.js';
import type { ProviderDelta } from '../../core/placement/model.js';
import type { Expr } from '../ddb/expr.js';

/**
 * A write whose commit its writer learns more than lateMs() after its entry's timestamp
 * is announced again before it is answered: a new entry naming the same providers,
 * stamped then (store/ddb/tx.ts LateCommit; the bulk loader and the dump import do the
 * same for their batches, announceLate()). CHANGE_LOG_LATE_MS (functions/config.ts has
 * its values; docs/consistency.md, "Reading at scale", the late-write window): a transaction
 * answers in tens of milliseconds; retries, a lost answer resolved by a fence, or a
 * throttled batch take longer, and those are the writes announced again.
 */
export const lateMs = () => config().changeLogLateMs;
/** how far two writers' and readers' clocks may differ (CLOCK_SKEW_MS) */
export const clockSkewMs = () => config().clockSkewMs;
/**
 * How far back every refresh re-reads. An acknowledged write has an entry that
 * committed at most lateMs() after its timestamp (the original, or the one announcing it
 * again), so a refresh that reads from its predecessor's start minus lateMs() plus the
 * clock skew sees every entry committed after that predecessor read. Entries already
 * applied are not re-applied (the snapshot remembers them); the window's cost is the
 * entries it reads again, so it is kept short.
 */
export const overlapMs = () => lateMs() + clockSkewMs();
/** log items expire after a day (DynamoDB TTL); readers never look that far back */
export const LOG_TTL_S = 24 * 3600;

export interface LogEntry {
  sk: string;
  ts: number;
  /** providers to read again */
  rps: string[];
  /** providers whose usage changed, and by how much (readers add it to what they hold) */
  deltas: Array<[string, ProviderDelta]>;
}

/** the timestamp (ms) an entry's sort key starts with */
export function entryTime(sk: string): number {
  return Number(sk.slice(0, 13));
}

function pad(ts: number): string {
  return String(ts).padStart(13, '0');
}

/** Where an entry goes: its partition and its sort key (unique to one attempt). */
export interface LogStamp {
  pk: string;
  sk: string;
  ts: number;
}

/** the sort key's time: 13 digits of ms and 3 of µs (entryTime() reads the ms) */
const stampOf = (us: number) => `${pad(Math.floor(us / 1000))}${String(us % 1000).padStart(3, '0')}`;
const usOf = (sk: string) => Number(sk.slice(0, 13)) * 1000 + (/^\d{16}/.test(sk) ? Number(sk.slice(13, 16)) : 999);
let lastUs = 0;

/**
 * A new entry's key, stamped now to the microsecond and after every stamp this process
 * made before (claims a process sends one after the other are stamped in that order, so
 * they rarely commit in the opposite order: stateGuard), or at `now` (ms) when given — and
 * in either case just after the latest `last` among `after` (the state items the writer
 * read): a writer whose clock is behind the one that wrote a provider last must still come
 * after it on that provider.
 */
export function logStamp(now?: number, after: Iterable<string | undefined> = []): LogStamp {
  let us = now === undefined ? Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), lastUs + 1) : now * 1000;
  for (const l of after) if (l !== undefined) us = Math.max(us, usOf(l) + 1);
  if (now === undefined) lastUs = us;
  const shard = Math.floor(Math.random() * config().changeLogShards);
  return { pk: K.changeLog(shard), sk: `${stampOf(us)}#${randomBytes(8).toString('hex')}`, ts: Math.floor(us / 1000) };
}

/**
 * What every write of a provider's state item carries: it comes after the last one (its
 * condition) and becomes the last one (its SET).
 */
export function stateGuard(stamp: LogStamp, e: Expr): Expr {
  const sk = e.v(stamp.sk);
  return e.when(`(${e.absent('last')} OR ${e.n('last')} < ${sk})`).setTo('last', sk);
}

export interface LogContent {
  /** providers readers must read again */
  rereads?: Iterable<string>;
  /** the sort key of the entry this one announces again (a late commit: not a change of its own) */
  again?: string;
  /** usage changes readers add up (a provider also in `rereads` is read instead) */
  deltas?: ReadonlyMap<string, ProviderDelta>;
}

/** an entry carries deltas up to this size (bytes of `d`); a larger change names its providers instead */
const MAX_DELTA_BYTES = 8 * 1024;

/**
 * A Put to add to a write transaction. Its key is new and random, so it is also the
 * transaction's marker (store/ddb/tx.ts): it exists if and only if the transaction
 * committed, which is how an unknown outcome is resolved. A late commit is announced
 * again by an entry that names every provider (a reader that added the deltas already
 * must not add them twice: it reads the providers instead).
 */
export function logPut(content: LogContent, stamp = logStamp()): TxItem {
  const item = logItem(content, stamp);
  const all = [...new Set([...(content.rereads ?? []), ...(content.deltas?.keys() ?? [])])];
  return asMarker(
    { Put: { TableName: tableName(), Item: item } },
    { stampedAt: stamp.ts, lateAfterMs: lateMs(), again: () => logPut({ rereads: all, again: content.again ?? stamp.sk }) },
    // the entry's sort key is the id of the change it records (store/ddb/feed.ts)
    content.again ? undefined : stamp.sk,
  );
}

function logItem(content: LogContent, stamp: LogStamp): Record<string, unknown> {
  const rps = new Set(content.rereads ?? []);
  let d: string | undefined;
  const deltas = [...(content.deltas ?? [])].filter(([u]) => !rps.has(u));
  if (deltas.length) {
    // (a provider's updatedAt is the entry's own time unless it says otherwise)
    const at = new Date(stamp.ts).toISOString();
    d = JSON.stringify(deltas.map(([u, x]) => [u, x.used, x.generation, x.allocations, ...(x.updatedAt === at ? [] : [x.updatedAt])]));
    if (d.length > MAX_DELTA_BYTES) {
      for (const [u] of deltas) rps.add(u);
      d = undefined;
    }
  }
  return {
    pk: stamp.pk,
    sk: stamp.sk,
    ...(rps.size ? { rps: [...rps] } : {}),
    ...(d ? { d } : {}),
    ...(content.again ? { again: content.again } : {}),
    ttl: Math.floor(stamp.ts / 1000) + LOG_TTL_S,
  };
}

function decodeDeltas(d: unknown, sk: string): Array<[string, ProviderDelta]> {
  if (typeof d !== 'string') return [];
  const at = new Date(entryTime(sk)).toISOString();
  return (JSON.parse(d) as Array<[string, Record<string, number>, number, number, string?]>).map(([u, used, generation, allocations, updatedAt]) => [
    u,
    { used, generation, allocations, updatedAt: updatedAt ?? at },
  ]);
}

/**
 * For entries written outside a transaction (BatchWriteItem: the bulk loader, the dump
 * import): once the log items `written` (logItem's) are stored, each one stored later
 * than lateMs() after its timestamp is written again, stamped now, with `write` — until
 * one is on time. Returns the entries written again (a loader counts them as applied, as
 * its own).
 */
export async function announceLate(
  written: Record<string, unknown>[],
  write: (items: Record<string, unknown>[]) => Promise<unknown>,
): Promise<LogEntry[]> {
  const again: LogEntry[] = [];
  let late = written.filter((it) => Date.now() - entryTime(String(it.sk)) > lateMs());
  for (let i = 0; late.length; i++) {
    if (i === LATE_TRIES) {
      // stored: readers that missed them see them at their next full resync
      log.error('late change-log entries could not be announced again in time', { entries: late.length, tries: LATE_TRIES });
      break;
    }
    const now = Date.now();
    const items = late.map((it) => logItem({ rereads: entryProviders(it) }, logStamp()));
    await write(items);
    for (const it of items) again.push({ sk: String(it.sk), ts: entryTime(String(it.sk)), rps: it.rps as string[], deltas: [] });
    late = Date.now() - now > lateMs() ? items : [];
  }
  return again;
}

/** every provider a stored entry names or changes */
function entryProviders(it: Record<string, unknown>): string[] {
  return [...((it.rps as string[]) ?? []), ...decodeDeltas(it.d, String(it.sk)).map(([u]) => u)];
}

/** A log item for a batch write (not a transaction: no marker), naming `rereads`. */
export function logItemNaming(rereads: Iterable<string>, stamp = logStamp()): Record<string, unknown> {
  return logItem({ rereads }, stamp);
}

/** Every entry with timestamp >= since (consistent reads, every shard). */
export async function readLogSince(since: number): Promise<{ entries: LogEntry[]; reads: number }> {
  const shards = config().changeLogShards;
  const queries: Promise<LogEntry[]>[] = [];
  for (let s = 0; s < shards; s++) queries.push(queryAll(K.changeLog(s), pad(since)));
  const entries = (await Promise.all(queries)).flat();
  entries.sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
  return { entries, reads: shards };
}

async function queryAll(pk: string, fromSk: string): Promise<LogEntry[]> {
  return (await queryPartition({ pk, skFrom: fromSk, consistent: true })).map((it) => {
    const sk = String(it.sk);
    // a fence (tx.ts: an attempt that never committed) names no provider
    return { sk, ts: entryTime(sk), rps: (it.rps as string[]) ?? [], deltas: decodeDeltas(it.d, sk) };
  });
}
