/**
 * The change log that keeps every process's provider snapshot current.
 *
 * Every transaction that changes what a provider looks like to the candidates solver
 * (inventory, usage, traits, aggregates, parent, name, existence) also Puts one small
 * log item naming the changed providers. Items are distinct (no counter to fight
 * over), partitioned by minute bucket and a random shard to spread writes:
 *   pk = LOG#<minute>#<shard>, sk = <ms timestamp, 13 digits>#<random>
 * Readers query the buckets since their last refresh with strongly consistent reads,
 * re-reading an overlap window so an entry whose transaction committed after a later
 * timestamp was read cannot be missed (transactions are bounded well below it).
 */
import { queryPartition } from '../ddb/query.js';
import { randomBytes } from 'node:crypto';
import { config } from '../../config.js';
import { tableName } from '../ddb/client.js';
import { K } from './keys.js';
import { asMarker, type TxItem } from '../ddb/tx.js';

export const BUCKET_MS = 60_000;
/**
 * How far back every refresh re-reads; must exceed the longest a write can take from its
 * entry's timestamp to its commit. In AWS a call is three attempts of at most 1.5 s
 * (store/ddb/client.ts) plus the SDK's backoff, about 6.5 s; an outcome still unknown
 * after that is fenced (store/ddb/tx.ts), so nothing commits later. 10 s leaves room for
 * clock differences between writers. Entries already applied are not re-applied (the
 * snapshot remembers them), so the wider window costs one query, not re-reads.
 */
export const OVERLAP_MS = 10_000;
/** log items expire after a day (DynamoDB TTL); readers never look that far back */
export const LOG_TTL_S = 24 * 3600;

export interface LogEntry {
  sk: string;
  ts: number;
  rps: string[];
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
  const shard = Math.floor(Math.random() * config().changeLogShards);
  const list = [...new Set(rps)];
  return asMarker({
    Put: {
      TableName: tableName(),
      Item: {
        pk: K.changeLog(Math.floor(now / BUCKET_MS), shard),
        sk: `${pad(now)}#${randomBytes(8).toString('hex')}`,
        rps: list,
        ttl: Math.floor(now / 1000) + LOG_TTL_S,
      },
    },
  });
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
    return { sk, ts: Number(sk.slice(0, 13)), rps: (it.rps as string[]) ?? [] };
  });
}
