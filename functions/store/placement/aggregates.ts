/**
 * A provider's aggregate associations (the `aggs` list on its item) and when each
 * aggregate was first seen. Upstream keeps a row per aggregate uuid the first time a
 * provider names it (never deleted) and lists a provider's aggregates by that row's
 * id; Berth keeps an `AGG#<uuid>` item with a creation sequence, written in the same
 * transaction as the association that first names it (condition: absent; a racing
 * first sighting makes the write re-plan and find it), and GET sorts by it. The write
 * itself is a provider patch (usecases/placement/provider-aspects.ts replaceAggregates).
 */
import { keyId } from '../ddb/batch.js';
import { batchGet } from '../ddb/reads.js';
import { tableKey } from '../ddb/per-table.js';
import { K } from './keys.js';

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

/** Those of `uuids` recorded already (an aggregate's item: its first sighting). */
export async function knownAggregates(uuids: readonly string[]): Promise<Set<string>> {
  return new Set((await readSequences([...uuids])).keys());
}
