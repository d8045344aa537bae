/**
 * The change log that keeps every process's provider snapshot current.
 *
 * Every transaction that changes what a provider looks like to the candidates solver
 * (inventory, usage, traits, aggregates, parent, name, existence) also Puts one small
 * log item naming the changed providers. Items are distinct (no counter to fight
 * over), partitioned by minute bucket and a random shard to spread writes:
 *   pk = LOG#<minute>#<shard>, sk = <ms timestamp, 13 digits>#<random>
 * Readers query the buckets since their last refresh with strongly consistent reads,
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

export const BUCKET_MS = 60_000;
/**
 * A write whose commit its writer learns more than LATE_MS after its entry's timestamp
 * is announced again before it is answered: a new entry naming the same providers,
 * stamped then (store/ddb/tx.ts LateCommit; the bulk loader and the dump import do the
 * same for their batches, announceLate()). In AWS a transaction answers in tens of
 * milliseconds; retries, a lost answer resolved by a fence, or a throttled batch take
 * longer, and those are the writes announced again.
 */
export const LATE_MS = 2_000;
/** how far two writers' and readers' clocks may differ (Lambda hosts keep NTP time to well under this) */
export const CLOCK_SKEW_MS = 1_000;
/**
 * How far back every refresh re-reads. An acknowledged write has an entry that
 * committed at most LATE_MS after its timestamp (the original, or the one announcing it
 * again), so a refresh that reads from its predecessor's start minus LATE_MS plus the
 * clock skew sees every entry committed after that predecessor read. Entries already
 * applied are not re-applied (the snapshot remembers them); the window's cost is the
 * entries it reads again, so it is kept short.
 */
export const OVERLAP_MS = LATE_MS + CLOCK_SKEW_MS;
/** log items expire after a day (DynamoDB TTL); readers never look that far back */
export const LOG_TTL_S = 24 * 3600;

export interface LogEntry {
  sk: string;
  ts: number;
  rps: string[];
}

/** the timestamp (ms) an entry's sort key starts with */
export function entryTime(sk: string): number {
  return Number(sk.slice(0, 13));
}

function pad(ts: number): string {
  return String(ts).padStart(13, '0');
}

/**
 * A Put to add to a write transaction. Its key is new and random, so it is also the
 * transaction's marker (store/ddb/tx.ts): it exists if and only if the transaction
 * committed, which is how an unknown outcome is resolved.
 */
export function logPut(rps: Iterable<string>, now = Date.now()): TxItem {
  const list = [...new Set(rps)];
  return asMarker({ Put: { TableName: tableName(), Item: logItem(list, now) } }, { stampedAt: now, lateAfterMs: LATE_MS, again: () => logPut(list) });
}

function logItem(rps: string[], now: number): Record<string, unknown> {
  const shard = Math.floor(Math.random() * config().changeLogShards);
  return {
    pk: K.changeLog(Math.floor(now / BUCKET_MS), shard),
    sk: `${pad(now)}#${randomBytes(8).toString('hex')}`,
    rps,
    ttl: Math.floor(now / 1000) + LOG_TTL_S,
  };
}

/**
 * For entries written outside a transaction (BatchWriteItem: the bulk loader, the dump
 * import): once the log items `written` (logPut's) are stored, each one stored later than
 * LATE_MS after its timestamp is written again, stamped now, with `write` — until one is
 * on time. Returns the entries written again (a loader counts them as applied, as its own).
 */
export async function announceLate(
  written: Record<string, unknown>[],
  write: (items: Record<string, unknown>[]) => Promise<unknown>,
): Promise<LogEntry[]> {
  const again: LogEntry[] = [];
  let late = written.filter((it) => Date.now() - entryTime(String(it.sk)) > LATE_MS);
  for (let i = 0; late.length; i++) {
    if (i === LATE_TRIES) {
      // stored: readers that missed them see them at their next full resync
      log.error('late change-log entries could not be announced again in time', { entries: late.length, tries: LATE_TRIES });
      break;
    }
    const now = Date.now();
    const items = late.map((it) => logItem(it.rps as string[], now));
    await write(items);
    for (const it of items) again.push({ sk: String(it.sk), ts: now, rps: it.rps as string[] });
    late = Date.now() - now > LATE_MS ? items : [];
  }
  return again;
}

/** Every entry with timestamp >= since (consistent reads, all shards, all buckets up to now). */
export async function readLogSince(since: number, now = Date.now()): Promise<{ entries: LogEntry[]; reads: number }> {
  const shards = config().changeLogShards;
  const first = Math.floor(since / BUCKET_MS);
  // a writer whose clock runs slightly ahead may already write into the next bucket
  const last = Math.floor((now + OVERLAP_MS) / BUCKET_MS);
  const queries: Promise<LogEntry[]>[] = [];
  let reads = 0;
  for (let b = first; b <= last; b++) {
    for (let s = 0; s < shards; s++) {
      reads++;
      queries.push(queryAll(K.changeLog(b, s), pad(since)));
    }
  }
  const entries = (await Promise.all(queries)).flat();
  entries.sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
  return { entries, reads };
}

async function queryAll(pk: string, fromSk: string): Promise<LogEntry[]> {
  return (await queryPartition({ pk, skFrom: fromSk, consistent: true })).map((it) => {
    const sk = String(it.sk);
    // a fence (tx.ts: an attempt that never committed) names no provider
    return { sk, ts: entryTime(sk), rps: (it.rps as string[]) ?? [] };
  });
}
