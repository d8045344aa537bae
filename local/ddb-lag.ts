/**
 * Index lag for the fault injector (./ddb-faults.ts): what a global secondary index (or
 * an eventually consistent read) would show if it lagged the table by `lagMs`.
 *
 * The injector records, for every item a write touches, the item as it is after the
 * write (read back with a consistent read while writes are held, so the images are in
 * commit order) and, the first time it sees a key, as it was before. A lagging read is
 * forwarded to DynamoDB, then corrected: items written in the last `lagMs` are taken
 * out and replaced by their image as of `now - lagMs` when that image belongs in the
 * answer (in the index, matching the key condition and the filter), so a Query or Scan
 * on an index never sees a write younger than `lagMs` — new items are missing, updated
 * ones are old, deleted ones are still there, exactly as a lagging index in AWS.
 *
 * Items travel in DynamoDB's wire format (attribute-value maps). Key conditions and
 * filters are evaluated for the forms Berth uses (=, <, <=, >, >=, BETWEEN,
 * begins_with, attribute_exists / attribute_not_exists, joined by AND); a lagging read
 * with another form shows its recent items as they were, unfiltered (counted in `unsupported`).
 */
import { GSIS, TABLE_KEYS } from '../functions/store/ddb/table.js';

/** one attribute value on the wire ({ S: 'x' }, { N: '1' }, { M: {...} }, ...) */
export type AttributeValue = Record<string, unknown>;
export type WireItem = Record<string, AttributeValue>;

interface Version {
  t: number;
  image: WireItem | null;
}

export const keyId = (table: string, key: WireItem) =>
  `${table}\u0000${JSON.stringify(key[TABLE_KEYS.pk])}\u0000${JSON.stringify(key[TABLE_KEYS.sk])}`;

export function tableKey(item: WireItem): WireItem {
  return { [TABLE_KEYS.pk]: item[TABLE_KEYS.pk]!, [TABLE_KEYS.sk]: item[TABLE_KEYS.sk]! };
}

/** A key-condition or filter expression as a predicate over a wire item (undefined: a form not understood). */
export type Predicate = (item: WireItem) => boolean;

function scalar(v: AttributeValue | undefined): string | number | undefined {
  if (!v) return undefined;
  if (typeof v.S === 'string') return v.S;
  if (typeof v.N === 'string') return Number(v.N);
  if (typeof v.B === 'string') return v.B;
  return undefined;
}

function compare(a: AttributeValue | undefined, b: AttributeValue | undefined): number | undefined {
  const x = scalar(a);
  const y = scalar(b);
  if (x === undefined || y === undefined || typeof x !== typeof y) return undefined;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** split on top-level AND (not the AND of BETWEEN x AND y) */
function conjuncts(expr: string): string[] {
  const parts: string[] = [];
  const tokens = expr.split(/\s+AND\s+/i);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (/\sBETWEEN\s/i.test(t) && i + 1 < tokens.length) {
      parts.push(`${t} AND ${tokens[++i]}`);
    } else parts.push(t);
  }
  return parts.map((p) =>
    p
      .trim()
      .replace(/^\((.*)\)$/, '$1')
      .trim(),
  );
}

export function predicate(expr: string | undefined, names: Record<string, string> = {}, values: WireItem = {}): Predicate | undefined {
  if (!expr) return () => true;
  if (/\bOR\b|\bNOT\b|\bIN\b|\bcontains\s*\(|\bsize\s*\(|\battribute_type\s*\(/i.test(expr)) return undefined;
  const name = (n: string) => (n.startsWith('#') ? names[n] : n);
  const tests: Predicate[] = [];
  for (const c of conjuncts(expr)) {
    let m: RegExpExecArray | null;
    if ((m = /^(attribute_exists|attribute_not_exists)\s*\(\s*([#\w.]+)\s*\)$/i.exec(c))) {
      const attr = name(m[2]!);
      if (!attr || attr.includes('.')) return undefined;
      const want = m[1]!.toLowerCase() === 'attribute_exists';
      tests.push((it) => (it[attr] !== undefined) === want);
    } else if ((m = /^begins_with\s*\(\s*([#\w]+)\s*,\s*(:\w+)\s*\)$/i.exec(c))) {
      const attr = name(m[1]!);
      const v = scalar(values[m[2]!]);
      if (!attr || typeof v !== 'string') return undefined;
      tests.push((it) => {
        const x = scalar(it[attr]);
        return typeof x === 'string' && x.startsWith(v);
      });
    } else if ((m = /^([#\w]+)\s+BETWEEN\s+(:\w+)\s+AND\s+(:\w+)$/i.exec(c))) {
      const attr = name(m[1]!);
      const lo = values[m[2]!];
      const hi = values[m[3]!];
      if (!attr) return undefined;
      tests.push((it) => {
        const a = compare(it[attr], lo);
        const b = compare(it[attr], hi);
        return a !== undefined && b !== undefined && a >= 0 && b <= 0;
      });
    } else if ((m = /^([#\w]+)\s*(=|<>|<=|>=|<|>)\s*(:\w+)$/.exec(c))) {
      const attr = name(m[1]!);
      const v = values[m[3]!];
      const op = m[2]!;
      if (!attr) return undefined;
      tests.push((it) => {
        const r = compare(it[attr], v);
        if (r === undefined) return op === '<>';
        return op === '=' ? r === 0 : op === '<>' ? r !== 0 : op === '<' ? r < 0 : op === '<=' ? r <= 0 : op === '>' ? r > 0 : r >= 0;
      });
    } else return undefined;
  }
  return (it) => tests.every((t) => t(it));
}

/** the attributes a ProjectionExpression keeps (top-level names only; undefined: everything) */
export function projection(expr: string | undefined, names: Record<string, string> = {}): ((it: WireItem) => WireItem) | undefined {
  if (!expr) return (it) => it;
  const attrs = expr.split(',').map((a) => a.trim());
  if (attrs.some((a) => !/^[#\w]+$/.test(a))) return undefined;
  const keep = attrs.map((a) => (a.startsWith('#') ? names[a] : a)).filter((a): a is string => !!a);
  return (it) => Object.fromEntries(Object.entries(it).filter(([k]) => keep.includes(k)));
}

export interface LagStats {
  /** reads corrected (at least one recent item taken out or put back) */
  corrected: number;
  /** recent items taken out of answers */
  hidden: number;
  /** older images put back into answers */
  restored: number;
  /** lagging reads whose expressions are not understood (recent items only removed) */
  unsupported: number;
}

/** The history of recently written items and the as-of view of them. */
export class LagView {
  private readonly versions = new Map<string, Version[]>();
  /** ids with a write inside the lag window (last write time); older ones are dropped as they are met */
  private readonly hot = new Map<string, number>();
  readonly stats: LagStats = { corrected: 0, hidden: 0, restored: 0, unsupported: 0 };

  constructor(readonly lagMs: number) {}

  /** has the key been seen (its state before the first write we forwarded is known)? */
  known(id: string): boolean {
    return this.versions.has(id);
  }

  /** the state of a key before the first write the injector saw (read before that write) */
  baseline(id: string, image: WireItem | null): void {
    if (!this.versions.has(id)) this.versions.set(id, [{ t: 0, image }]);
  }

  /** the state of a key after a write committed at `t` */
  record(id: string, image: WireItem | null, t = Date.now()): void {
    const list = this.versions.get(id) ?? [{ t: 0, image: null }];
    list.push({ t, image });
    this.prune(list, t);
    this.versions.set(id, list);
    this.hot.set(id, t);
  }

  private prune(list: Version[], now: number): void {
    const cutoff = now - this.lagMs;
    // keep the newest version at or before the cutoff, and everything after it
    let keepFrom = 0;
    for (let i = 0; i < list.length; i++) if (list[i]!.t <= cutoff) keepFrom = i;
    if (keepFrom > 0) list.splice(0, keepFrom);
  }

  /** ids written within the lag window, with the image each had at the cutoff */
  recent(now = Date.now(), table?: string): Map<string, WireItem | null> {
    const cutoff = now - this.lagMs;
    const out = new Map<string, WireItem | null>();
    for (const [id, last] of this.hot) {
      if (last <= cutoff) {
        this.hot.delete(id);
        continue;
      }
      if (table !== undefined && !id.startsWith(`${table}\u0000`)) continue;
      const list = this.versions.get(id)!;
      let asOf: WireItem | null = null;
      for (const v of list) if (v.t <= cutoff) asOf = v.image;
      out.set(id, asOf);
    }
    return out;
  }

  /** the key's newest image the injector recorded (undefined: none recorded) */
  private latest(id: string): WireItem | null | undefined {
    const list = this.versions.get(id);
    return list?.length ? list[list.length - 1]!.image : undefined;
  }

  /**
   * Correct the answer of a Query or Scan (of an index, or an eventually consistent
   * one of the table) so it shows no write younger than the lag: each recent item of the
   * page is replaced where it stands by its image as of the cutoff (or taken out when
   * that image does not belong in the answer: absent, not in the index, not matching);
   * an image that belongs but whose item no longer does (deleted, moved out of the key
   * range or the filter) appears in no page of DynamoDB's answer, so it is put back on
   * the last page (of segment 0 in a parallel scan). An item that existed before the
   * window is never lost from a paged answer, however long its pages take.
   */
  correctList(
    table: string,
    input: {
      IndexName?: string;
      KeyConditionExpression?: string;
      FilterExpression?: string;
      ProjectionExpression?: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues?: WireItem;
      Select?: string;
      Segment?: number;
    },
    output: { Items?: WireItem[]; Count?: number; ScannedCount?: number; LastEvaluatedKey?: WireItem },
  ): void {
    const recent = this.recent(Date.now(), table);
    if (!recent.size) return;
    const items = output.Items ?? [];
    const names = input.ExpressionAttributeNames ?? {};
    const values = input.ExpressionAttributeValues ?? {};
    const keyCond = predicate(input.KeyConditionExpression, names, values);
    const filter = predicate(input.FilterExpression, names, values);
    const project = projection(input.ProjectionExpression, names);
    const understood =
      keyCond && filter && project && (!input.Select || input.Select === 'ALL_ATTRIBUTES' || input.Select === 'ALL_PROJECTED_ATTRIBUTES')
        ? { keyCond, filter, project }
        : undefined;
    if (!understood) this.stats.unsupported++;
    const index = input.IndexName ? GSIS.find((g) => g.name === input.IndexName) : undefined;
    const inIndex = (it: WireItem) => !index || (it[index.pk] !== undefined && it[index.sk] !== undefined);
    // (an expression not understood: the item as it was, in its place, or nothing when it did not exist)
    const belongs = (it: WireItem | null | undefined): it is WireItem =>
      !!it && inIndex(it) && (!understood || (understood.keyCond(it) && understood.filter(it)));
    const shown = (it: WireItem) => (understood ? understood.project(it) : it);
    let hidden = 0;
    let restored = 0;
    const seen = new Set<string>();
    const kept: WireItem[] = [];
    for (const it of items) {
      const id = keyId(table, it);
      if (!recent.has(id)) {
        kept.push(it);
        continue;
      }
      seen.add(id);
      hidden++;
      const image = recent.get(id);
      if (belongs(image)) {
        kept.push(shown(image));
        restored++;
      }
    }
    if (!output.LastEvaluatedKey && !input.Segment && understood) {
      for (const [id, image] of recent) {
        if (seen.has(id) || !belongs(image) || belongs(this.latest(id))) continue;
        kept.push(shown(image));
        restored++;
      }
    }
    if (!hidden && !restored) return;
    if (restored && input.KeyConditionExpression) {
      const skName = index ? index.sk : TABLE_KEYS.sk;
      kept.sort(
        (a, b) =>
          (compare(a[skName], b[skName]) ?? 0) ||
          (compare(a[TABLE_KEYS.pk], b[TABLE_KEYS.pk]) ?? 0) ||
          (compare(a[TABLE_KEYS.sk], b[TABLE_KEYS.sk]) ?? 0),
      );
    }
    this.stats.corrected++;
    this.stats.hidden += hidden;
    this.stats.restored += restored;
    output.Items = kept;
    output.Count = kept.length;
    if (output.ScannedCount !== undefined) output.ScannedCount = Math.max(output.ScannedCount, kept.length);
  }

  /** the image an eventually consistent GetItem would return (undefined: not recent, DynamoDB's answer stands) */
  asOf(table: string, key: WireItem): WireItem | null | undefined {
    const id = keyId(table, key);
    const recent = this.recent(Date.now(), table);
    return recent.has(id) ? recent.get(id)! : undefined;
  }
}
