/**
 * The stream processor (docs/consistency.md, "The change feed"): the table's stream records,
 * one shard's batch in stream order, become one event per committed change and the
 * allocation history. The same code runs in Lambda (handler.ts, records from the event
 * source mapping) and locally (local/feed.ts, records read from DynamoDB Local's stream).
 *
 * Only feed items count (store/ddb/feed.ts; in AWS the event source mapping's filter
 * passes nothing else): one per committed change, none for an attempt that did not
 * commit. A batch is handled in order; the first change that fails stops it and is
 * reported (`failed`: its sequence number), so the retry starts there and every change
 * before it is neither lost nor done twice by this code. What a retry repeats is
 * harmless: history writes are idempotent (store/history/history.ts) and an event
 * published again carries the same `id` (consumers de-duplicate on it; the local events
 * file does it itself).
 */
import type { Change } from '../core/feed/change.js';
import type { FeedEvent } from '../core/feed/event-envelope.js';
import { eventOf } from '../core/feed/events.js';
import { changeOfImage } from '../store/ddb/feed.js';
import { advanceWatermark, applyToHistory } from '../store/history/history.js';
import { config } from '../config.js';
import { log } from '../observability/log.js';
import { count } from '../observability/powertools.js';

/** one stream record, as Lambda hands it over or the Streams API returns it */
export interface StreamRecord {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, unknown>; SequenceNumber?: string; ApproximateCreationDateTime?: number | Date };
}

/** where events go: EventBridge (eventbridge.ts), or a file (local/feed.ts) */
export interface Publisher {
  /** publish in order; resolves once every event is accepted */
  publish(events: FeedEvent[]): Promise<void>;
}

export interface BatchResult {
  changes: number;
  /** the sequence number of the first record not done (the batch resumes there), if one failed */
  failed?: string;
  /** history items written */
  historyItems: number;
}

/** The change a stream record carries, or undefined (not an insert of a feed item). */
export async function changeOf(r: StreamRecord): Promise<Change | undefined> {
  if (r.eventName !== 'INSERT' || !r.dynamodb?.NewImage) return undefined;
  return changeOfImage(r.dynamodb.NewImage);
}

export interface ProcessOptions {
  publisher: Publisher;
  /** write the allocation history (default true) */
  history?: boolean;
}

/** history writes in flight at once (the changes of a batch are applied concurrently: the history does not depend on their order) */
const HISTORY_PARALLELISM = 16;

/**
 * Handle one shard's batch (see the module comment): decode every record, apply the
 * changes to the history concurrently (its writes commute), then publish the events in
 * stream order. The first record that failed (decoding or its history) ends what is
 * published and is reported; the history of later ones may be written already, which a
 * retry repeats harmlessly.
 */
export async function processRecords(records: StreamRecord[], opts: ProcessOptions): Promise<BatchResult> {
  const host = config().baremetal.conductorName;
  const decoded: Array<{ seq?: string; change?: Change; error?: unknown }> = await Promise.all(
    records.map(async (r) => {
      try {
        return { seq: r.dynamodb?.SequenceNumber, change: await changeOf(r) };
      } catch (error) {
        return { seq: r.dynamodb?.SequenceNumber, error };
      }
    }),
  );
  let historyItems = 0;
  if (opts.history !== false) {
    let next = 0;
    const worker = async () => {
      while (next < decoded.length) {
        const d = decoded[next++]!;
        if (!d.change || d.error) continue;
        try {
          historyItems += await applyToHistory(d.change);
        } catch (error) {
          d.error = error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(HISTORY_PARALLELISM, decoded.length) }, worker));
  }
  const firstFailed = decoded.findIndex((d) => d.error !== undefined);
  const done = firstFailed < 0 ? decoded : decoded.slice(0, firstFailed);
  const events: FeedEvent[] = [];
  let last: string | undefined;
  for (const d of done) {
    if (!d.change) continue;
    events.push(eventOf(d.change, { host }));
    if (!last || d.change.id > last) last = d.change.id;
  }
  try {
    for (let i = 0; i < events.length; i += 10) await opts.publisher.publish(events.slice(i, i + 10));
  } catch (e) {
    log.error('change feed: publishing failed; the batch is retried', { error: (e as Error)?.message ?? String(e) });
    count('FeedPublishFailed');
    return { changes: 0, historyItems, failed: records[0]?.dynamodb?.SequenceNumber };
  }
  // published: the watermark moves past them (sent again on transient failures). One that
  // still fails fails the batch: left behind, readers would hide these changes until some
  // later change moves it, which on a quiet table may never come; the retry writes the
  // history again (idempotent) and publishes the same ids again (consumers de-duplicate)
  if (last && opts.history !== false) {
    try {
      await advanceWatermark(last);
    } catch (e) {
      log.error('change feed: the history watermark did not move; the batch is retried', { error: (e as Error)?.name ?? String(e) });
      count('FeedWatermarkFailed');
      return { changes: 0, historyItems, failed: records[0]?.dynamodb?.SequenceNumber };
    }
  }
  count('FeedChanges', events.length);
  if (firstFailed >= 0) {
    const f = decoded[firstFailed]!;
    count('FeedRecordFailed');
    log.error('change feed: a record failed; the batch resumes at it', { sequence: f.seq, error: (f.error as Error)?.message ?? String(f.error) });
    return { changes: events.length, historyItems, failed: f.seq };
  }
  return { changes: events.length, historyItems };
}
