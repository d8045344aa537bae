/**
 * The stream processor (docs/design.md, "The change feed"): the table's stream records,
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
import { eventOf, type FeedEvent } from '../core/feed/events.js';
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

/** Handle one shard's batch, in order (see the module comment). */
export async function processRecords(records: StreamRecord[], opts: ProcessOptions): Promise<BatchResult> {
  const host = config().baremetal.conductorName;
  let changes = 0;
  let historyItems = 0;
  let last: string | undefined;
  // events go out in groups (PutEvents takes 10 at a time); the history before them
  let pending: Array<{ seq?: string; event: FeedEvent }> = [];
  const flush = async () => {
    if (!pending.length) return;
    await opts.publisher.publish(pending.map((p) => p.event));
    pending = [];
  };
  for (const r of records) {
    const seq = r.dynamodb?.SequenceNumber;
    try {
      const c = await changeOf(r);
      if (!c) continue;
      if (opts.history !== false) historyItems += await applyToHistory(c);
      pending.push({ seq, event: eventOf(c, { host }) });
      changes++;
      last = c.id > (last ?? '') ? c.id : last;
      if (pending.length >= 10) await flush();
    } catch (e) {
      count('FeedRecordFailed');
      log.error('change feed: a record failed; the batch resumes at it', { sequence: seq, error: (e as Error)?.message ?? String(e) });
      // what was decided before it is published, then the batch stops here
      const firstPending = pending[0]?.seq;
      try {
        await flush();
      } catch {
        return { changes, historyItems, failed: firstPending ?? seq };
      }
      return { changes, historyItems, failed: seq };
    }
  }
  try {
    await flush();
  } catch (e) {
    log.error('change feed: publishing failed; the batch is retried', { error: (e as Error)?.message ?? String(e) });
    return { changes, historyItems, failed: records[0]?.dynamodb?.SequenceNumber };
  }
  if (last && opts.history !== false) await advanceWatermark(last);
  count('FeedChanges', changes);
  return { changes, historyItems };
}
