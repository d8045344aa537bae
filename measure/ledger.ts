/**
 * The accountant's ledger: one record per DynamoDB call the metering proxy saw
 * (./meter/), with the units AWS would bill (functions/store/ddb/units.ts) split by the
 * partition keys the call touched, and who made it (the request header the local
 * containers attach, local/attribution.ts). Pure: types, and the aggregations the
 * capacity bench prints (per request type, per key family, hottest keys, fan-out).
 */
import type { ReadMode } from '../functions/store/ddb/units.js';
import type { Attribution } from '../local/attribution.js';

/** what one call cost on one partition key (of the table, or of an index) */
export interface KeyUse {
  /** 'table', or the index name */
  space: string;
  pk: string;
  sk?: string;
  read: number;
  write: number;
  /** item (or index entry) bytes read or written there */
  bytes: number;
  items: number;
}

export interface CallRecord {
  seq: number;
  /** start and end (ms since the epoch) */
  t: number;
  end: number;
  op: string;
  table: string;
  index?: string;
  mode?: ReadMode;
  who?: Attribution;
  /** ok; condition: a conditional write failed; cancelled: a transaction cancelled by a condition; replay: a transaction repeated with its token; error: nothing billed */
  outcome: 'ok' | 'condition' | 'cancelled' | 'replay' | 'error';
  /** read units (table and index reads) */
  read: number;
  /** write units on the table */
  write: number;
  /** write units on global secondary indexes */
  indexWrite: number;
  keys: KeyUse[];
}

export const UNATTRIBUTED = '(unattributed)';

/**
 * A partition key's family: each '#'-separated segment after the first that varies
 * (a uuid, a number, a hash, any name) becomes '*': `LOG#29345678#2` -> `LOG#*#*`,
 * `RP#<uuid>` -> `RP#*`, `RCS` -> `RCS`, `USAGE#proj` -> `USAGE#*`. The first segment is
 * the item kind, so families follow the key layout whatever it is.
 */
export function keyFamily(pk: string): string {
  const parts = pk.split('#');
  if (parts.length === 1) return pk;
  return [parts[0], ...parts.slice(1).map(() => '*')].join('#');
}

export interface Totals {
  calls: number;
  read: number;
  write: number;
  indexWrite: number;
}

const zero = (): Totals => ({ calls: 0, read: 0, write: 0, indexWrite: 0 });

function add(t: Totals, r: { read: number; write: number; indexWrite?: number }, calls = 1): void {
  t.calls += calls;
  t.read += r.read;
  t.write += r.write;
  t.indexWrite += r.indexWrite ?? 0;
}

export interface LabelTotals extends Totals {
  label: string;
  /** distinct requests of this label that made DynamoDB calls */
  requests: number;
  /** units by key family (index families prefixed with the index name: `gsi1:RPS#*`) */
  byFamily: Record<string, { read: number; write: number; bytes: number; items: number }>;
}

export const familyId = (k: Pick<KeyUse, 'space' | 'pk'>) => (k.space === 'table' ? keyFamily(k.pk) : `${k.space}:${keyFamily(k.pk)}`);
export const keyId = (k: Pick<KeyUse, 'space' | 'pk'>) => (k.space === 'table' ? k.pk : `${k.space}:${k.pk}`);

/** Units per request type (label), and within each by key family. */
export function byLabel(records: Iterable<CallRecord>): Map<string, LabelTotals> {
  const out = new Map<string, LabelTotals>();
  const seen = new Map<string, Set<string>>();
  for (const r of records) {
    const label = r.who?.label ?? UNATTRIBUTED;
    let t = out.get(label);
    if (!t) {
      t = { label, requests: 0, byFamily: {}, ...zero() };
      out.set(label, t);
      seen.set(label, new Set());
    }
    add(t, r);
    const reqs = seen.get(label)!;
    const rid = `${r.who?.container}/${r.who?.request}`;
    if (!reqs.has(rid)) {
      reqs.add(rid);
      t.requests++;
    }
    for (const k of r.keys) {
      const f = (t.byFamily[familyId(k)] ??= { read: 0, write: 0, bytes: 0, items: 0 });
      f.read += k.read;
      f.write += k.write;
      f.bytes += k.bytes;
      f.items += k.items;
    }
  }
  return out;
}

/** Totals over all records, and the same totals summed from the per-key entries (they must agree). */
export function totals(records: Iterable<CallRecord>): { calls: Totals; keys: { read: number; write: number } } {
  const calls = zero();
  const keys = { read: 0, write: 0 };
  for (const r of records) {
    add(calls, r);
    for (const k of r.keys) {
      keys.read += k.read;
      keys.write += k.write;
    }
  }
  return { calls, keys };
}

export interface KeyLoad {
  key: string;
  space: string;
  pk: string;
  family: string;
  read: number;
  write: number;
  /** the most units seen on this key within one second */
  peakReadPerS: number;
  peakWritePerS: number;
}

/** Per partition key: total units, and the busiest second's units (reads and writes). */
export function keyLoads(records: Iterable<CallRecord>): KeyLoad[] {
  const out = new Map<string, KeyLoad>();
  const perSecond = new Map<string, Map<number, { read: number; write: number }>>();
  for (const r of records) {
    const sec = Math.floor(r.end / 1000);
    for (const k of r.keys) {
      const id = keyId(k);
      let l = out.get(id);
      if (!l) {
        l = { key: id, space: k.space, pk: k.pk, family: familyId(k), read: 0, write: 0, peakReadPerS: 0, peakWritePerS: 0 };
        out.set(id, l);
        perSecond.set(id, new Map());
      }
      l.read += k.read;
      l.write += k.write;
      const s = perSecond.get(id)!;
      const cell = s.get(sec) ?? { read: 0, write: 0 };
      cell.read += k.read;
      cell.write += k.write;
      s.set(sec, cell);
    }
  }
  for (const [id, l] of out) {
    for (const c of perSecond.get(id)!.values()) {
      l.peakReadPerS = Math.max(l.peakReadPerS, c.read);
      l.peakWritePerS = Math.max(l.peakWritePerS, c.write);
    }
  }
  return [...out.values()];
}

/**
 * How many partition keys a family's units spread over at once: within each window, the
 * family's units over those of its busiest key (n keys with equal shares -> n; one key
 * taking everything -> 1), averaged over windows weighted by their units. The hottest key
 * of a family carries 1/fan-out of its units.
 */
export function fanOut(records: Iterable<CallRecord>, kind: 'read' | 'write', windowMs = 10_000): Map<string, number> {
  const cells = new Map<string, Map<number, Map<string, number>>>();
  for (const r of records) {
    const w = Math.floor(r.end / windowMs);
    for (const k of r.keys) {
      const u = kind === 'read' ? k.read : k.write;
      if (!u) continue;
      const fam = familyId(k);
      const byWindow = cells.get(fam) ?? new Map<number, Map<string, number>>();
      cells.set(fam, byWindow);
      const byKey = byWindow.get(w) ?? new Map<string, number>();
      byWindow.set(w, byKey);
      byKey.set(k.pk, (byKey.get(k.pk) ?? 0) + u);
    }
  }
  const out = new Map<string, number>();
  for (const [fam, windows] of cells) {
    let weight = 0;
    let acc = 0;
    for (const byKey of windows.values()) {
      const units = [...byKey.values()];
      const total = units.reduce((a, b) => a + b, 0);
      // this window's spread (total / busiest), weighted by its units
      acc += (total / Math.max(...units)) * total;
      weight += total;
    }
    out.set(fam, weight ? acc / weight : 1);
  }
  return out;
}
