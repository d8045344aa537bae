/**
 * A provider's aggregate associations (the `aggs` list on its item). Aggregates have
 * no item of their own: an aggregate exists while some provider names it.
 * From 1.19 the write is generation-guarded and bumps the generation; before, it is
 * not (upstream keeps the generation there, nova relies on it) but it is still one
 * conditional write on the provider as read, with a change-log entry.
 */
import type { ProviderRecord } from '../../core/placement/model.js';
import { guardedProviderWrite, type GuardedWriteFailure, type GuardedWriteOptions } from './provider-writes.js';

export async function setProviderAggregates(
  uuid: string,
  opts: GuardedWriteOptions & { bumpGeneration: boolean },
  aggregates: string[],
): Promise<ProviderRecord | GuardedWriteFailure> {
  const want = [...aggregates];
  return guardedProviderWrite<GuardedWriteFailure>(uuid, opts, async (cur) => {
    const same = cur.aggregates.length === want.length && cur.aggregates.every((a, i) => a === want[i]);
    if (same && !opts.bumpGeneration) return null;
    return { set: { aggs: want }, bumpGeneration: opts.bumpGeneration, next: { ...cur, aggregates: want } };
  });
}
