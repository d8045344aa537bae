/**
 * What a table holds of Placement, for an import pass (transfer.ts) and for an export:
 * one parallel Scan into records, a digest of every item (a pass writes only what
 * differs), and who wrote what since the import's last pass.
 */
import { createHash } from 'node:crypto';
import { type PlacementState, emptyState } from '../../core/placement/transfer.js';
import { keyId } from '../ddb/batch.js';
import type { Item } from '../ddb/client.js';
import { scanTable } from '../ddb/query.js';
import { customNameFromItem } from './catalog.js';
import { entryTime, readLogSince } from './changelog.js';
import { consumerFromItem } from './consumers.js';
import { K } from './keys.js';
import { fromItems, MANAGED_BY } from './provider-items.js';

import { readImportRecord, type ImportRecord } from './transfer-record.js';

/** Placement's item families: what makes a table "not empty" for an import, and what a pass may write */
const PLACEMENT_PKS = /^(RP|RPNAME|CONS|RCS|TRAITS|AGG|USAGE)#/;

/** attributes a comparison leaves out: when an item was written, not what it says */
const VOLATILE = new Set(['created', 'updated', 'last']);

function canonical(v: unknown): unknown {
  if (v instanceof Set) return { $set: [...v].map(String).sort() };
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) if ((v as Record<string, unknown>)[k] !== undefined) out[k] = canonical((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/** What an item says (its timestamps aside), as a short digest: two items with one digest need no write. */
export function itemDigest(item: Record<string, unknown>): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!VOLATILE.has(k)) rest[k] = v;
  return createHash('sha1')
    .update(JSON.stringify(canonical(rest)))
    .digest('base64');
}

/** the time an item says it was written (ms), for the check of who wrote it */
function writtenAt(it: Item): number {
  let t = 0;
  for (const a of ['created', 'updated']) {
    const v = Date.parse(String(it[a] ?? ''));
    if (!Number.isNaN(v)) t = Math.max(t, v);
  }
  if (typeof it.last === 'string') t = Math.max(t, entryTime(it.last));
  return t;
}

export interface TableRead {
  state: PlacementState;
  /** keyId -> digest of every Placement item but allocation rows */
  digests: Map<string, string>;
  /** Placement items read (allocation rows not counted) */
  placementItems: number;
  record?: ImportRecord;
  /** items written by something other than the import after its last pass (a few, as examples) */
  foreign: string[];
  foreignCount: number;
}

/** how long after its last sign of life a pass that was cut short may still have written */
export const INTERRUPTED_MARGIN_MS = 60_000;

/** The instant after which whatever wrote a Placement item was not the import. */
export function ownWritesEnd(rec: ImportRecord): number {
  return rec.phase === 'done' && rec.lastPassEnd ? Date.parse(rec.lastPassEnd) : Date.parse(rec.lastWriteAt) + INTERRUPTED_MARGIN_MS;
}

/**
 * Every Placement item of the table but allocation rows (one parallel Scan): the state
 * as records, a digest of each item, the import's item, and any item written after the
 * import's last pass (by an API, the bare-metal scheduler: not the import's own rows).
 */
export async function readTable(opts: { segments?: number; onProgress?: (items: number) => void } = {}): Promise<TableRead> {
  const record = await readImportRecord();
  const end = record ? ownWritesEnd(record) : undefined;
  const defs = new Map<string, Item>();
  const states = new Map<string, Item>();
  const digests = new Map<string, string>();
  const state = emptyState();
  const foreign: string[] = [];
  let foreignCount = 0;
  let scanned = 0;
  let placementItems = 0;
  await scanTable({
    segments: opts.segments,
    sk: { beginsWith: K.providerAllocationPrefix, not: true },
    onPage: (items) => {
      for (const it of items) {
        const pk = String(it.pk);
        const sk = String(it.sk);
        if (!PLACEMENT_PKS.test(pk)) continue;
        placementItems++;
        digests.set(keyId({ pk, sk }), itemDigest(it));
        // who wrote it: anything after the import's last pass is someone else's
        if (end !== undefined && (writtenAt(it) > end || it[MANAGED_BY] !== undefined)) {
          foreignCount++;
          if (foreign.length < 5) foreign.push(`${pk} / ${sk}${it[MANAGED_BY] !== undefined ? " (a bare-metal node's provider)" : ''}`);
        }
        if (pk.startsWith('RP#')) {
          const uuid = pk.slice(3);
          if (sk === K.provider(uuid).sk) defs.set(uuid, it);
          else if (sk === K.providerState(uuid).sk) states.set(uuid, it);
        } else if (pk.startsWith('CONS#')) {
          const c = consumerFromItem(it);
          state.consumers.set(c.uuid, c);
        } else if (pk.startsWith('RCS#')) {
          const c = customNameFromItem(it);
          state.classes.set(c.name, c);
        } else if (pk.startsWith('TRAITS#')) {
          const c = customNameFromItem(it);
          state.traits.set(c.name, c);
        } else if (pk.startsWith('AGG#') && sk === 'AGG') {
          state.aggregates.set(pk.slice(4), Number(it.seq ?? 0));
        }
      }
      scanned += items.length;
      opts.onProgress?.(scanned);
    },
  });
  for (const [uuid, def] of defs) state.providers.set(uuid, fromItems(def, states.get(uuid)));
  if (end !== undefined) {
    // a change-log entry after it: a Placement write (deleting something leaves no item)
    const { entries } = await readLogSince(end + 1);
    if (entries.length) {
      foreignCount += entries.length;
      if (foreign.length < 5)
        foreign.push(`${entries.length} change-log entr${entries.length === 1 ? 'y' : 'ies'} since ${new Date(end).toISOString()}`);
    }
  }
  return { state, digests, placementItems, record, foreign, foreignCount };
}

/** The Placement state of the table (export-placement's source): readTable's, without the digests. */
export async function readPlacementState(opts: { segments?: number } = {}): Promise<PlacementState> {
  return (await readTable(opts)).state;
}
