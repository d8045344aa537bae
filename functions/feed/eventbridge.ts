/**
 * Events to an EventBridge bus: PutEvents of at most 10 entries and 256 KB a call, every
 * entry retried until accepted (a partial failure sends the failed entries again, in
 * order). An event whose detail would not fit one entry goes out with its `before` and
 * `after` left out and `truncated: true` (the history and the table keep the whole change).
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { FeedEvent } from '../core/feed/event-envelope.js';
import type { Publisher } from './processor.js';

const MAX_ENTRIES = 10;
/** PutEvents' limit on a call's entries (and so on one entry), bytes as EventBridge counts them */
const MAX_BYTES = 256 * 1024;

/** An entry's size as EventBridge computes it: Time 14, Source, DetailType, Detail, Resources in UTF-8. */
export function entrySize(e: PutEventsRequestEntry): number {
  const b = (s: string | undefined) => (s ? Buffer.byteLength(s) : 0);
  return (e.Time ? 14 : 0) + b(e.Source) + b(e.DetailType) + b(e.Detail) + (e.Resources ?? []).reduce((n, r) => n + b(r), 0);
}

export function entryOf(e: FeedEvent, bus: string): PutEventsRequestEntry {
  const entry = { EventBusName: bus, Source: e.source, DetailType: e.detailType, Time: new Date(e.time), Detail: JSON.stringify(e.detail) };
  if (entrySize(entry) <= MAX_BYTES) return entry;
  const { before: _b, after: _a, ...rest } = e.detail;
  return { ...entry, Detail: JSON.stringify({ ...rest, before: {}, after: {}, truncated: true }) };
}

export function eventBridgePublisher(bus: string, client = new EventBridgeClient({})): Publisher {
  return {
    async publish(events) {
      let todo = events.map((e) => entryOf(e, bus));
      while (todo.length) {
        const batch: PutEventsRequestEntry[] = [];
        let bytes = 0;
        while (todo.length && batch.length < MAX_ENTRIES && bytes + entrySize(todo[0]!) <= MAX_BYTES) {
          bytes += entrySize(todo[0]!);
          batch.push(todo.shift()!);
        }
        const r = await client.send(new PutEventsCommand({ Entries: batch }));
        if (r.FailedEntryCount) {
          const failed = batch.filter((_, i) => r.Entries?.[i]?.ErrorCode);
          todo = [...failed, ...todo];
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    },
  };
}
