/**
 * What the change feed adds at a projected rate (docs/cost.md, "The change feed"): the
 * feed items are part of every write transaction, so the measured write units of
 * claims and deletes already include them (2 transactional units each under 1 KB); this
 * adds what runs after the commit — the stream processor's Lambda, EventBridge's events,
 * the history's writes — and sizes the feed partitions.
 *
 * Counted from the code, not guessed: the history items a change writes come from
 * functions/core/feed/history.ts (historyWrites) on the changes Nova's workload makes (a
 * new instance's claim on one provider, its delete), the description's size from
 * store/ddb/feed.ts (feedWrite). Assumptions (printed with the figures): a batch of up
 * to 100 records or 1 s (the event source mapping's settings, cdk/lib/feed.ts), 512 MB,
 * and a batch's time measured here locally per change (PROCESSOR_MS_PER_CHANGE).
 */
import { completeChange, type Change } from '../../functions/core/feed/change.js';
import { historyWrites } from '../../functions/core/feed/history.js';
import { feedWrite } from '../../functions/store/ddb/feed.js';
import { PRICES, SECONDS_PER_MONTH } from './prices.js';

/** EventBridge custom events: $1.00 per million, each 64 KB of an event one more (looked up 2026-11-28) */
export const EVENTBRIDGE = {
  perMillionEvents: 1.0,
  chunkBytes: 64 * 1024,
  source: 'https://aws.amazon.com/eventbridge/pricing/ — custom events $1.00 per million; each 64 KB chunk of a payload is billed as one event',
};

/** the processor's settings (cdk/lib/feed.ts) */
const PROCESSOR = { memoryMb: 512, batchSize: 100, batchWindowS: 1 };
/**
 * processor time per change in a batch (ms): history writes go 16 at a time, about three
 * items of ~1 KB per change at ~6 ms a call in Lambda, plus decoding and the event; an
 * assumption, stated with the figures
 */
export const PROCESSOR_MS_PER_CHANGE = 2;
/** a partition takes 1,000 write units per second; the feed partitions are sized to 75 % of it */
const PARTITION_WRITE_UNITS = 1000;
const HEADROOM = 0.75;

const RP = '8c2d7f10-5e8b-4b57-a2a9-1c64bd0b5e3d';
const C = '0f9a3b1c-7d42-4e21-9f6b-6a0c2d8e4b17';
const view = {
  project: 'a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1',
  user: 'f1e2d3c4b5a69788796a5b4c3d2e1f00',
  type: 'INSTANCE',
  generation: 1,
  allocations: { [RP]: { DISK_GB: 10, MEMORY_MB: 512, VCPU: 1 } },
};
const id = '1795859300154019#e8a61b0251cdd999';
/** the two changes of Nova's workload: an instance claimed, then deleted */
const NOVA_CHANGES: Change[] = [
  completeChange({ op: 'allocations.set', consumers: [{ uuid: C, prev: null, before: null, after: view }] }, id),
  completeChange({ op: 'allocations.delete', consumers: [{ uuid: C, prev: id, before: view, after: null }] }, id),
];

/** history items (each under 1 KB: one write unit) per change of Nova's workload */
export function historyItemsPerChange(): number {
  const items = NOVA_CHANGES.map((c) => historyWrites(c).writes.reduce((n, w) => n + 2 + Object.keys(w.interval.allocations).length, 0));
  return items.reduce((a, b) => a + b, 0) / items.length;
}

/** bytes of one feed item (what the stream carries, and the size its write is billed on) */
export function feedItemBytes(): number {
  const sizes = NOVA_CHANGES.map((c) => JSON.stringify(feedWrite(c).item).length);
  return sizes.reduce((a, b) => a + b, 0) / sizes.length;
}

export interface FeedProjection {
  changesPerS: number;
  eventsPerS: number;
  historyWriteUnitsPerS: number;
  /** the feed items' write units/s (already inside the measured claims and deletes) */
  feedItemWriteUnitsPerS: number;
  shards: number;
  partitionUtilisation: number;
  invocationsPerS: number;
  gbSecondsPerS: number;
  monthly: { eventbridge: number; lambda: number; historyWrites: number; total: number };
}

/** The feed at `changesPerS` committed changes a second. */
export function projectFeed(changesPerS: number): FeedProjection {
  const itemUnits = 2 * Math.ceil(feedItemBytes() / 1024);
  const feedUnits = changesPerS * itemUnits;
  const shards = Math.max(1, Math.ceil(feedUnits / (PARTITION_WRITE_UNITS * HEADROOM)));
  const perShard = changesPerS / shards;
  // a shard's batches: full ones at high rates, one a second (the batching window) at low ones
  const invocationsPerS = shards * Math.max(perShard > 0 ? 1 / PROCESSOR.batchWindowS : 0, perShard / PROCESSOR.batchSize);
  const secondsPerS = (changesPerS * PROCESSOR_MS_PER_CHANGE) / 1000 + invocationsPerS * 0.02;
  const gbSecondsPerS = secondsPerS * (PROCESSOR.memoryMb / 1024);
  const history = changesPerS * historyItemsPerChange();
  const month = SECONDS_PER_MONTH;
  const monthly = {
    eventbridge: (changesPerS * month * EVENTBRIDGE.perMillionEvents) / 1e6,
    lambda: (invocationsPerS * month * PRICES.lambda.perMillionRequests) / 1e6 + gbSecondsPerS * month * PRICES.lambda.perGbSecondArm,
    historyWrites: (history * month * PRICES.dynamodb.perMillionWriteUnits) / 1e6,
    total: 0,
  };
  monthly.total = monthly.eventbridge + monthly.lambda + monthly.historyWrites;
  return {
    changesPerS,
    eventsPerS: changesPerS,
    historyWriteUnitsPerS: history,
    feedItemWriteUnitsPerS: feedUnits,
    shards,
    partitionUtilisation: feedUnits / shards / PARTITION_WRITE_UNITS,
    invocationsPerS,
    gbSecondsPerS,
    monthly,
  };
}
