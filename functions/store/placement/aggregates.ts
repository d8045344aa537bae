/**
 * A provider's aggregate associations (the `aggs` list on its item) and when each
 * aggregate was first seen. Upstream keeps a row per aggregate uuid the first time a
 * provider names it (never deleted) and lists a provider's aggregates by that row's
 * id; Berth keeps an `AGG#<uuid>` item with a creation sequence, written in the same
 * transaction as the association that first names it (condition: absent; a racing
 * first sighting makes the write re-plan and find it), and GET sorts by it.
 * From 1.19 the write is generation-guarded and bumps the generation; before, it is
 * not (upstream keeps the generation there, nova relies on it) but it is still one
 * conditional write on the provider as read, with a change-log entry.
 */
import type { ProviderRecord } from '../../core/placement/model.js';
import { keyId } from '../ddb/batch.js';
import { batchGet } from '../ddb/reads.js';
import { newItem } from '../ddb/expr.js';
import { tableKey } from '../ddb/per-table.js';
import type { TxItem } from '../ddb/tx.js';
import { K } from './keys.js';
import { nextSeq } from './provider-items.js';
import { guardedProviderWrite, type GuardedWriteFailure, type GuardedWriteOptions } from './provider-writes.js';

/**
 * sequences of aggregates seen by this process, per table (endpoint, region, name: a
 * restarted local stack is another table); they never change, aggregate items are
 * never deleted
 */
const seqs = new Map<string, number>();
const seqKey = (u: string) => `${tableKey()}|${u}`;

async function readSequences(uuids: string[]): Promise<Map<string, number>> {
  const unknown = uuids.filter((u) => !seqs.has(seqKey(u)));
  if (unknown.length) {
    const items = await batchGet(unknown.map((u) => K.aggregate(u)));
    for (const u of unknown) {
      const it = items.get(keyId(K.aggregate(u)));
      if (it) seqs.set(seqKey(u), Number(it.seq));
    }
  }
  const out = new Map<string, number>();
  for (const u of uuids) {
    const s = seqs.get(seqKey(u));
    if (s !== undefined) out.set(u, s);
  }
  return out;
}

/**
 * A provider's aggregates in upstream's order: as first seen (aggregates loaded in
 * bulk, which have no item, after the others in the order stored).
 */
export async function inFirstSeenOrder(aggregates: readonly string[]): Promise<string[]> {
  const known = await readSequences([...aggregates]);
  return aggregates
    .map((a, i) => ({ a, i, s: known.get(a) ?? Number.POSITIVE_INFINITY }))
    .sort((x, y) => (x.s === y.s ? x.i - y.i : x.s < y.s ? -1 : 1))
    .map((x) => x.a);
}

export async function setProviderAggregates(
  uuid: string,
  opts: GuardedWriteOptions & { bumpGeneration: boolean },
  aggregates: string[],
): Promise<ProviderRecord | GuardedWriteFailure> {
  const want = [...aggregates];
  return guardedProviderWrite<GuardedWriteFailure>(uuid, opts, async (cur) => {
    const same = cur.aggregates.length === want.length && cur.aggregates.every((a, i) => a === want[i]);
    if (same && !opts.bumpGeneration) return null;
    // aggregates never seen before: recorded with this write, in the request's order
    const added = want.filter((a) => !cur.aggregates.includes(a));
    const known = await readSequences(added);
    const now = new Date().toISOString();
    const extra: TxItem[] = added.filter((a) => !known.has(a)).map((a) => newItem({ ...K.aggregate(a), type: 'AGG', seq: nextSeq(), created: now }));
    return { set: { aggs: want }, bumpGeneration: opts.bumpGeneration, extra, next: { ...cur, aggregates: want } };
  });
}
