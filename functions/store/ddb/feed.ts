/**
 * The feed item: a committed change's description (core/feed/change.ts), written in the
 * change's own transaction (tx.ts) so that it exists exactly when the change committed
 * (docs/consistency.md, "The change feed"). The table's stream carries it to the stream
 * processor (functions/feed/), which filters on its key prefix: one stream record, one
 * event, whatever number of items the transaction wrote.
 *
 *   pk = FEED#<shard>   sk = <change id>   c (the description, JSON) | z (gzip) | parts (n), ttl
 *
 * FEED_SHARDS partitions (default 1: every change in one partition, so the stream hands
 * them over in commit order); a change goes to the shard of its first subject (consumer,
 * provider, node, allocation, name), so one subject's changes stay in one partition
 * whatever the count. A description larger than fits an item (a reshape of hundreds of
 * consumers) is stored in parts written before the transaction (`FEEDPART#<id>` / n,
 * outside the stream filter; parts of a change that never commits expire).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import type { Change } from '../../core/feed/change.js';
import { config } from '../../config.js';
import { shardOf } from './keys.js';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { keyId } from './batch.js';
import { batchGet } from './reads.js';

export const FEED_PREFIX = 'FEED#';
export const FEED_KEYS = {
  item: (shard: number, id: string) => ({ pk: `${FEED_PREFIX}${shard}`, sk: id }),
  pk: (shard: number) => `${FEED_PREFIX}${shard}`,
  part: (id: string, n: number) => ({ pk: `FEEDPART#${id}`, sk: String(n).padStart(4, '0') }),
};

/** feed items and parts expire after two days (the stream keeps a record 24 h; the processor reads parts within that) */
export const FEED_TTL_S = 2 * 24 * 3600;
/** a description up to this size is stored as it is (JSON); a larger one compressed */
const PLAIN_BYTES = 1024;
/** compressed bytes per item (an item stops at 400 KB) */
const PART_BYTES = 300_000;

/** Is the change feed on? (CHANGE_FEED; on unless "false") */
export const feedEnabled = (): boolean => config().feed.enabled;

let lastUs = 0;
/**
 * A new change id for a transaction without a change-log entry: the time to the
 * microsecond (after every id this process made) and 64 random bits, as the change log's
 * sort keys (store/placement/changelog.ts), which are the ids of the changes that have one.
 */
export function newChangeId(): string {
  const us = Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), lastUs + 1);
  lastUs = us;
  const ms = String(Math.floor(us / 1000)).padStart(13, '0');
  return `${ms}${String(us % 1000).padStart(3, '0')}#${randomBytes(8).toString('hex')}`;
}

/** the subject whose partition a change goes to */
function subjectOf(c: Change): string {
  return (
    c.consumers?.[0]?.uuid ??
    c.providers?.[0]?.uuid ??
    c.nodes?.[0]?.uuid ??
    c.allocations?.[0]?.uuid ??
    c.names?.[0]?.after ??
    c.names?.[0]?.before ??
    c.id
  );
}

export function feedShard(c: Change): number {
  const n = config().feed.shards;
  return n <= 1 ? 0 : shardOf(subjectOf(c), n);
}

export interface FeedWrite {
  /** the feed item (for the change's transaction) */
  item: Record<string, unknown>;
  /** parts to store before the transaction (a description too large for one item) */
  parts: Record<string, unknown>[];
}

/** The items that record `change`. */
export function feedWrite(change: Change): FeedWrite {
  const json = JSON.stringify(change);
  const ttl = Math.floor(change.at / 1000) + FEED_TTL_S;
  const key = FEED_KEYS.item(feedShard(change), change.id);
  if (Buffer.byteLength(json) <= PLAIN_BYTES) return { item: { ...key, c: json, ttl }, parts: [] };
  const z = gzipSync(Buffer.from(json));
  if (z.length <= PART_BYTES) return { item: { ...key, z, ttl }, parts: [] };
  const parts: Record<string, unknown>[] = [];
  for (let at = 0, n = 0; at < z.length; at += PART_BYTES, n++)
    parts.push({ ...FEED_KEYS.part(change.id, n), z: z.subarray(at, at + PART_BYTES), ttl });
  return { item: { ...key, parts: parts.length, ttl }, parts };
}

/** binary as the SDK (Uint8Array) or a Lambda stream event (base64 text) hands it over */
function bytes(v: unknown): Buffer {
  if (typeof v === 'string') return Buffer.from(v, 'base64');
  if (v instanceof Uint8Array) return Buffer.from(v);
  throw new Error('feed item: binary attribute expected');
}

/**
 * The change a feed item (as unmarshalled from a stream record's new image) records.
 * `readParts` fetches the parts of a large one (strongly consistent: they were written
 * before the transaction committed).
 */
export async function decodeFeedItem(it: Record<string, unknown>, readParts: (id: string, n: number) => Promise<unknown[]>): Promise<Change> {
  if (typeof it.c === 'string') return JSON.parse(it.c) as Change;
  if (it.z !== undefined) return JSON.parse(gunzipSync(bytes(it.z)).toString('utf8')) as Change;
  const n = Number(it.parts ?? 0);
  if (!n) throw new Error(`feed item ${String(it.sk)}: no description`);
  const parts = await readParts(String(it.sk), n);
  return JSON.parse(gunzipSync(Buffer.concat(parts.map(bytes))).toString('utf8')) as Change;
}

/** Is this (unmarshalled) item a feed item? */
export function isFeedItem(it: Record<string, unknown>): boolean {
  return typeof it.pk === 'string' && it.pk.startsWith(FEED_PREFIX);
}

/** The parts of a large description (strongly consistent: written before its transaction committed). */
export async function readFeedParts(id: string, n: number): Promise<unknown[]> {
  const keys = Array.from({ length: n }, (_, i) => FEED_KEYS.part(id, i));
  const got = await batchGet(keys, { consistent: true, raw: true });
  return keys.map((k) => {
    const it = got.get(keyId(k));
    if (!it?.z) throw new Error(`feed item ${id}: part ${k.sk} is missing`);
    return it.z;
  });
}

/** The change a stream record's new image (DynamoDB attribute values) records, or undefined: not a feed item. */
export async function changeOfImage(image: Record<string, unknown>): Promise<Change | undefined> {
  const it = unmarshall(image as never) as Record<string, unknown>;
  return isFeedItem(it) ? decodeFeedItem(it, readFeedParts) : undefined;
}
