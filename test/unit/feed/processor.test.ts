/**
 * The stream processor's batch rule (functions/feed/processor.ts) with the history's store
 * replaced: a watermark that does not move fails the batch, so the history never stays
 * behind what was published.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { completeChange } from '../../../functions/core/feed/change.js';
import type { FeedEvent } from '../../../functions/core/feed/event-envelope.js';
import { feedWrite } from '../../../functions/store/ddb/feed.js';

const store = vi.hoisted(() => ({ watermarkFails: false, moved: [] as string[] }));
vi.mock('../../../functions/store/history/history.js', () => ({
  applyToHistory: async () => 3,
  advanceWatermark: async (id: string) => {
    if (store.watermarkFails) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
    store.moved.push(id);
  },
}));

const { processRecords } = await import('../../../functions/feed/processor.js');

const RP = '11111111-1111-4111-8111-111111111111';
function record(seq: number) {
  const change = completeChange(
    { op: 'provider.create', providers: [{ uuid: RP, before: null, after: { name: 'cn1', generation: 0 } }] } as never,
    `${String(1_800_000_000_000_000 + seq).padStart(16, '0')}#${'ab'.repeat(8)}`,
  );
  return { eventName: 'INSERT', dynamodb: { SequenceNumber: String(seq), NewImage: marshall(feedWrite(change).item) } };
}

describe('the stream processor', () => {
  beforeEach(() => {
    store.watermarkFails = false;
    store.moved = [];
  });

  it('moves the history watermark past the batch it published', async () => {
    const published: FeedEvent[] = [];
    const out = await processRecords([record(1), record(2)] as never, { publisher: { publish: async (e) => void published.push(...e) } });
    expect(out.failed).toBeUndefined();
    expect(published).toHaveLength(2);
    expect(store.moved).toHaveLength(1);
    expect(store.moved[0]).toMatch(/^1800000000000002#/);
  });

  it('fails the batch at its first record when the watermark does not move', async () => {
    store.watermarkFails = true;
    const out = await processRecords([record(1), record(2)] as never, { publisher: { publish: async () => undefined } });
    expect(out.failed).toBe('1');
  });
});
