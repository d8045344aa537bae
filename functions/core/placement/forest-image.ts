/**
 * The forest image: every provider of a forest in one compact, versioned document, so
 * a new process (a cold Lambda container) rebuilds its forest from one read instead of
 * reading every provider item (docs/consistency.md, "Cold start: the forest image").
 *
 * Columnar: one array per field, in creation order, with what providers share written
 * once — inventory definitions, trait and aggregate lists, resource class names and
 * timestamps are tables the per-provider arrays point into, and tree links are
 * positions. A million flat providers with three classes encode to about 60 bytes each
 * before compression. Pure: bytes in, records out (the store compresses, chunks and
 * stores it).
 *
 * The same document also carries a delta (encodeDelta): the records of some providers
 * and the uuids of deleted ones, which a reader puts into (and deletes from) the forest
 * of a full image — the base it names in the store (docs/consistency.md, "Delta images").
 */
import { Forest } from './forest.js';
import { Interner } from './forest-interner.js';
import { type Inventory, type ProviderRecord, providerRecord } from './model.js';

export const IMAGE_FORMAT = 'berth-forest-image';
export const IMAGE_VERSION = 4;

/** [total, reserved, min_unit, max_unit, step_size, allocation_ratio] */
type InvTuple = [number, number, number, number, number, number];

export interface ForestImage {
  format: typeof IMAGE_FORMAT;
  version: typeof IMAGE_VERSION;
  /** every write committed before this instant (ms) is in the image */
  takenAt: number;
  /**
   * change-log entries (their sort keys) of the last moments before takenAt whose changes
   * the image already holds: a reader replaying the log's overlap window need not re-read
   * their providers (after a bulk load, thousands)
   */
  applied: string[];
  /**
   * providers whose state the image holds as read from the table in those moments: the
   * `last` change-log entry their state item held then (store/placement/changelog.ts
   * stateGuard). A reader adds a logged usage change of such a provider only when its
   * entry is later than that: the read already held the earlier ones.
   */
  lasts: Record<string, string>;
  /** a delta's: providers deleted since its base (none in a full image) */
  deleted: string[];
  /** every uuid, 36 characters each, one after the other (an array when one is not 36 long) */
  uuid: string | string[];
  name: string[];
  generation: Column;
  /** position of the parent / root in these arrays (-1 none), or its uuid when it is not in the image */
  parent: Column<number | string>;
  root: Column<number | string>;
  invVersion: Column;
  children: Column;
  allocations: Column;
  /** creation sequence as differences from the previous provider's (the first from 0): mostly 1 */
  seq: Column;
  /** positions in `times` */
  created: Column;
  updated: Column;
  times: string[];
  /** resource class names the definitions and usages point into */
  classes: string[];
  /** inventory definitions: [class position, ...InvTuple] per class */
  definitions: Array<Array<[number, ...InvTuple]>>;
  /** position in `definitions`, -1 for none */
  inventory: Column;
  /** the providers with usage (differences of their positions) and theirs: [class position, amount, ...] */
  usageAt: Column;
  usage: number[][];
  /** trait and aggregate lists */
  lists: string[][];
  /** positions in `lists`, -1 for empty */
  traits: Column;
  aggregates: Column;
}

/**
 * A column of per-provider values: as they are, or as runs `[value, count, value, count,
 * ...]` when that is shorter (most columns of a large flat cloud are a few long runs) —
 * a million providers then parse as a few numbers instead of a million.
 */
export type Column<T = number> = T[] | { runs: T[] };

function column<T>(xs: T[]): Column<T> {
  const runs: T[] = [];
  for (let i = 0; i < xs.length; ) {
    let j = i + 1;
    while (j < xs.length && xs[j] === xs[i]) j++;
    runs.push(xs[i]!, (j - i) as T);
    if (runs.length >= xs.length) return xs;
    i = j;
  }
  return { runs };
}

function expand<T>(c: Column<T> | undefined, name: string, n?: number): T[] {
  let out: T[];
  if (Array.isArray(c)) out = c;
  else if (c && Array.isArray(c.runs) && c.runs.length % 2 === 0) {
    let total = 0;
    for (let k = 1; k < c.runs.length; k += 2) total += c.runs[k] as number;
    if (n !== undefined && total !== n) throw new ImageFormatError(`field ${name} has ${total} entries, not ${n}`);
    out = new Array(total);
    let at = 0;
    for (let k = 0; k < c.runs.length; k += 2) {
      const v = c.runs[k]!;
      const end = at + (c.runs[k + 1] as number);
      while (at < end) out[at++] = v;
    }
  } else throw new ImageFormatError(`field ${name} is not a column`);
  if (n !== undefined && out.length !== n) throw new ImageFormatError(`field ${name} has ${out.length} entries, not ${n}`);
  return out;
}

function table<T>(key: (v: T) => string) {
  const at = new Map<string, number>();
  const values: T[] = [];
  return {
    values,
    of(v: T): number {
      const k = key(v);
      let i = at.get(k);
      if (i === undefined) {
        i = values.length;
        values.push(v);
        at.set(k, i);
      }
      return i;
    },
  };
}

/** The image of `forest` as of `takenAt` (every write committed before it is in the forest). */
export function encodeForest(forest: Forest, takenAt: number, applied: string[] = [], lasts: Record<string, string> = {}): ForestImage {
  return encodeRecords(forest.all(), takenAt, applied, lasts, []);
}

/**
 * A delta of `forest` as of `takenAt`: the records of the providers of `changed` it holds
 * (in creation order; a link to a provider outside them is its uuid) and the uuids of
 * those it does not (deleted).
 */
export function encodeDelta(
  forest: Forest,
  changed: Iterable<string>,
  takenAt: number,
  applied: string[] = [],
  lasts: Record<string, string> = {},
): ForestImage {
  const records: ProviderRecord[] = [];
  const deleted: string[] = [];
  for (const u of changed) {
    const p = forest.get(u);
    if (p) records.push(p);
    else deleted.push(u);
  }
  records.sort((a, b) => a.seq - b.seq || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  return encodeRecords(records, takenAt, applied, lasts, deleted.sort());
}

function encodeRecords(
  all: readonly ProviderRecord[],
  takenAt: number,
  applied: string[],
  lasts: Record<string, string>,
  deleted: string[],
): ForestImage {
  const pos = new Map<string, number>();
  for (const [i, p] of all.entries()) pos.set(p.uuid, i);
  const link = (u: string | undefined) => (u === undefined ? -1 : (pos.get(u) ?? u));
  const times = table<string>((s) => s);
  const classes = table<string>((s) => s);
  const lists = table<readonly string[]>((l) => l.join('\u0000'));
  const defs = new Map<object, number>();
  const definitions: ForestImage['definitions'] = [];
  const cols = {
    uuid: [] as string[],
    name: [] as string[],
    generation: [] as number[],
    parent: [] as Array<number | string>,
    root: [] as Array<number | string>,
    invVersion: [] as number[],
    children: [] as number[],
    allocations: [] as number[],
    seq: [] as number[],
    created: [] as number[],
    updated: [] as number[],
    inventory: [] as number[],
    usageAt: [] as number[],
    usage: [] as number[][],
    traits: [] as number[],
    aggregates: [] as number[],
  };
  let prevSeq = 0;
  let prevUsage = 0;
  for (const [at, p] of all.entries()) {
    cols.uuid.push(p.uuid);
    cols.name.push(p.name);
    cols.generation.push(p.generation);
    cols.parent.push(link(p.parent));
    cols.root.push(link(p.root));
    cols.invVersion.push(p.invVersion);
    cols.children.push(p.children);
    cols.allocations.push(p.allocationCount);
    cols.seq.push(p.seq - prevSeq);
    prevSeq = p.seq;
    cols.created.push(times.of(p.createdAt));
    cols.updated.push(times.of(p.updatedAt));
    const rcs = Object.keys(p.inventories);
    if (!rcs.length) cols.inventory.push(-1);
    else {
      // the forest shares one object per distinct definition: encode each once
      let d = defs.get(p.inventories);
      if (d === undefined) {
        d = definitions.length;
        definitions.push(
          rcs.map((rc) => {
            const i = p.inventories[rc]!;
            return [classes.of(rc), i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio];
          }),
        );
        defs.set(p.inventories, d);
      }
      cols.inventory.push(d);
    }
    const u: number[] = [];
    for (const [rc, n] of Object.entries(p.usages)) u.push(classes.of(rc), n);
    if (u.length) {
      cols.usageAt.push(at - prevUsage);
      prevUsage = at;
      cols.usage.push(u);
    }
    cols.traits.push(p.traits.length ? lists.of(p.traits) : -1);
    cols.aggregates.push(p.aggregates.length ? lists.of(p.aggregates) : -1);
  }
  return {
    format: IMAGE_FORMAT,
    version: IMAGE_VERSION,
    takenAt,
    applied,
    lasts,
    deleted,
    uuid: cols.uuid.every((u) => u.length === 36) ? cols.uuid.join('') : cols.uuid,
    name: cols.name,
    generation: column(cols.generation),
    parent: column(cols.parent),
    root: column(cols.root),
    invVersion: column(cols.invVersion),
    children: column(cols.children),
    allocations: column(cols.allocations),
    seq: column(cols.seq),
    created: column(cols.created),
    updated: column(cols.updated),
    times: times.values,
    classes: classes.values,
    definitions,
    inventory: column(cols.inventory),
    usageAt: column(cols.usageAt),
    usage: cols.usage,
    lists: lists.values as string[][],
    traits: column(cols.traits),
    aggregates: column(cols.aggregates),
  };
}

export class ImageFormatError extends Error {}

/** A forest holding the image's providers (its interner already knows the shared parts). */
/** one shared, frozen usage for every provider without any (records are never changed in place) */
const NO_USAGE: Record<string, number> = Object.freeze({}) as Record<string, number>;

export function decodeForest(img: ForestImage): Forest {
  const forest = new Forest();
  forest.loadCompacted(decodeRecords(img, forest.intern));
  return forest;
}

/**
 * The records of the providers in `only` that the image holds, and nothing else built (a
 * catch-up that knows which providers changed takes just those from an image). A uuid of
 * `only` the image lacks is a provider that did not exist when it was taken. Given the
 * interner of the forest they go to, their shared parts are already that forest's own.
 */
export function decodeSome(img: ForestImage, only: ReadonlySet<string>, intern = new Interner()): ProviderRecord[] {
  return decodeRecords(img, intern, only).filter((r) => r !== undefined);
}

/** Every record of a delta (or of any image), its shared parts from `intern` (the forest's it goes to), and the uuids it deletes. */
export function decodeDelta(img: ForestImage, intern: Interner): { records: ProviderRecord[]; deleted: string[] } {
  return { records: decodeRecords(img, intern), deleted: img.deleted };
}

/** The uuids of the providers an image holds, in its order. */
export function imageUuids(img: ForestImage): string[] {
  if (typeof img.uuid !== 'string') return expand(img.uuid, 'uuid');
  const out = new Array<string>(img.uuid.length / 36);
  for (let i = 0; i < out.length; i++) out[i] = img.uuid.slice(i * 36, i * 36 + 36);
  return out;
}

/** the seven hex digits of `s` from `at` as an integer (any other character gives some value: a filter, not an identity) */
function hexPrefix(s: string, at: number): number {
  let h = 0;
  for (let k = 0; k < 7; k++) {
    const c = s.charCodeAt(at + k);
    h = (h << 4) | ((c <= 57 ? c - 48 : (c | 32) - 87) & 15);
  }
  return h;
}

function decodeRecords(img: ForestImage, intern: Interner, only?: ReadonlySet<string>): ProviderRecord[] {
  if (img?.format !== IMAGE_FORMAT || img.version !== IMAGE_VERSION) {
    throw new ImageFormatError(`not a ${IMAGE_FORMAT} version ${IMAGE_VERSION}`);
  }
  if (!Array.isArray(img.applied)) throw new ImageFormatError('field applied is missing');
  if (!img.lasts || typeof img.lasts !== 'object' || Array.isArray(img.lasts)) throw new ImageFormatError('field lasts is missing');
  if (!Array.isArray(img.deleted) || img.deleted.some((u) => typeof u !== 'string'))
    throw new ImageFormatError('field deleted is not a list of uuids');
  // a subset decode slices only the uuids it builds or links to (a million slices and
  // Set lookups of them cost more than the records it builds)
  const packed = typeof img.uuid === 'string' ? img.uuid : undefined;
  let uuid: string[];
  let n: number;
  if (packed !== undefined) {
    if (packed.length % 36) throw new ImageFormatError('field uuid is not a run of 36-character uuids');
    n = packed.length / 36;
    uuid = new Array(only ? 0 : n);
    if (!only) for (let i = 0; i < n; i++) uuid[i] = packed.slice(i * 36, i * 36 + 36);
  } else {
    uuid = expand(img.uuid as Exclude<typeof img.uuid, string>, 'uuid');
    n = uuid.length;
  }
  const uuidAt = (i: number): string => (packed !== undefined && only ? packed.slice(i * 36, i * 36 + 36) : uuid[i]!);
  // `only` by the first seven hex digits first (a small integer: a cheap lookup), then whole
  const prefixes =
    only && packed !== undefined && [...only].every((u) => u.length === 36) ? new Set([...only].map((u) => hexPrefix(u, 0))) : undefined;
  const name = expand(img.name, 'name', n);
  const generation = expand(img.generation, 'generation', n);
  const parent = expand(img.parent, 'parent', n);
  const root = expand(img.root, 'root', n);
  const invVersion = expand(img.invVersion, 'invVersion', n);
  const children = expand(img.children, 'children', n);
  const allocations = expand(img.allocations, 'allocations', n);
  const seqs = expand(img.seq, 'seq', n);
  const created = expand(img.created, 'created', n);
  const updated = expand(img.updated, 'updated', n);
  const inventory = expand(img.inventory, 'inventory', n);
  const traits = expand(img.traits, 'traits', n);
  const aggregates = expand(img.aggregates, 'aggregates', n);
  const usageAt = expand(img.usageAt, 'usageAt');
  if (!Array.isArray(img.usage) || usageAt.length !== img.usage.length) throw new ImageFormatError('fields usageAt and usage differ');
  const usageOf = new Array<number[] | undefined>(n);
  for (let k = 0, at = 0; k < usageAt.length; k++) {
    at += usageAt[k]!;
    if (at >= n) throw new ImageFormatError('field usageAt points past the providers');
    usageOf[at] = img.usage[k];
  }
  const definitions = img.definitions.map((d) => {
    const inv: Record<string, Inventory> = {};
    for (const [c, total, reserved, min_unit, max_unit, step_size, allocation_ratio] of d) {
      inv[img.classes[c]!] = { total, reserved, min_unit, max_unit, step_size, allocation_ratio };
    }
    return intern.inventory(inv) as Record<string, Inventory>;
  });
  const lists = img.lists.map((l) => intern.list(l) as string[]);
  const link = (v: number | string) => (typeof v === 'string' ? v : v < 0 ? undefined : uuidAt(v));
  const records: ProviderRecord[] = new Array(n);
  let seq = 0;
  for (let i = 0; i < n; i++) {
    seq += seqs[i]!;
    if (prefixes && !prefixes.has(hexPrefix(packed!, i * 36))) continue;
    const id = uuidAt(i);
    if (only && !only.has(id)) continue;
    const u = usageOf[i];
    let usages = NO_USAGE;
    if (u?.length) {
      usages = {};
      for (let k = 0; k < u.length; k += 2) usages[img.classes[u[k]!]!] = u[k + 1]!;
    }
    const inv = inventory[i]!;
    const t = traits[i]!;
    const a = aggregates[i]!;
    records[i] = providerRecord({
      uuid: id,
      name: name[i]!,
      generation: generation[i]!,
      parent: link(parent[i]!),
      root: link(root[i]!) ?? id,
      inventories: inv < 0 ? (Interner.EMPTY_INV as Record<string, Inventory>) : definitions[inv]!,
      invVersion: invVersion[i]!,
      usages,
      traits: t < 0 ? (Interner.EMPTY_LIST as string[]) : lists[t]!,
      aggregates: a < 0 ? (Interner.EMPTY_LIST as string[]) : lists[a]!,
      children: children[i]!,
      allocationCount: allocations[i]!,
      createdAt: img.times[created[i]!]!,
      updatedAt: img.times[updated[i]!]!,
      seq,
    });
  }
  return records;
}
