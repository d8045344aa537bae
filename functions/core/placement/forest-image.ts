/**
 * The forest image: every provider of a forest in one compact, versioned document, so
 * a new process (a cold Lambda container) rebuilds its forest from one read instead of
 * reading every provider item (docs/design.md, "Cold start: the forest image").
 *
 * Columnar: one array per field, in creation order, with what providers share written
 * once — inventory definitions, trait and aggregate lists, resource class names and
 * timestamps are tables the per-provider arrays point into, and tree links are
 * positions. A million flat providers with three classes encode to about 60 bytes each
 * before compression. Pure: bytes in, records out (the store compresses, chunks and
 * stores it).
 */
import { Forest, Interner } from './forest.js';
import type { Inventory, ProviderRecord } from './model.js';

export const IMAGE_FORMAT = 'berth-forest-image';
export const IMAGE_VERSION = 1;

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
  uuid: string[];
  name: string[];
  generation: number[];
  /** position of the parent / root in these arrays (-1 none), or its uuid when it is not in the image */
  parent: Array<number | string>;
  root: Array<number | string>;
  invVersion: number[];
  children: number[];
  allocations: number[];
  seq: number[];
  /** positions in `times` */
  created: number[];
  updated: number[];
  times: string[];
  /** resource class names the definitions and usages point into */
  classes: string[];
  /** inventory definitions: [class position, ...InvTuple] per class */
  definitions: Array<Array<[number, ...InvTuple]>>;
  /** position in `definitions`, -1 for none */
  inventory: number[];
  /** per provider: [class position, amount, class position, amount, ...] */
  usage: number[][];
  /** trait and aggregate lists */
  lists: string[][];
  /** positions in `lists`, -1 for empty */
  traits: number[];
  aggregates: number[];
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
export function encodeForest(forest: Forest, takenAt: number, applied: string[] = []): ForestImage {
  const all = forest.all();
  const pos = new Map<string, number>();
  for (const [i, p] of all.entries()) pos.set(p.uuid, i);
  const link = (u: string | undefined) => (u === undefined ? -1 : (pos.get(u) ?? u));
  const times = table<string>((s) => s);
  const classes = table<string>((s) => s);
  const lists = table<readonly string[]>((l) => l.join('\u0000'));
  const defs = new Map<object, number>();
  const definitions: ForestImage['definitions'] = [];
  const img: ForestImage = {
    format: IMAGE_FORMAT,
    version: IMAGE_VERSION,
    takenAt,
    applied,
    uuid: [],
    name: [],
    generation: [],
    parent: [],
    root: [],
    invVersion: [],
    children: [],
    allocations: [],
    seq: [],
    created: [],
    updated: [],
    times: times.values,
    classes: classes.values,
    definitions,
    inventory: [],
    usage: [],
    lists: lists.values as string[][],
    traits: [],
    aggregates: [],
  };
  for (const p of all) {
    img.uuid.push(p.uuid);
    img.name.push(p.name);
    img.generation.push(p.generation);
    img.parent.push(link(p.parent));
    img.root.push(link(p.root));
    img.invVersion.push(p.invVersion);
    img.children.push(p.children);
    img.allocations.push(p.allocationCount);
    img.seq.push(p.seq);
    img.created.push(times.of(p.createdAt));
    img.updated.push(times.of(p.updatedAt));
    const rcs = Object.keys(p.inventories);
    if (!rcs.length) img.inventory.push(-1);
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
      img.inventory.push(d);
    }
    const u: number[] = [];
    for (const [rc, n] of Object.entries(p.usages)) u.push(classes.of(rc), n);
    img.usage.push(u);
    img.traits.push(p.traits.length ? lists.of(p.traits) : -1);
    img.aggregates.push(p.aggregates.length ? lists.of(p.aggregates) : -1);
  }
  return img;
}

export class ImageFormatError extends Error {}

/** A forest holding the image's providers (its interner already knows the shared parts). */
export function decodeForest(img: ForestImage): Forest {
  if (img?.format !== IMAGE_FORMAT || img.version !== IMAGE_VERSION) {
    throw new ImageFormatError(`not a ${IMAGE_FORMAT} version ${IMAGE_VERSION}`);
  }
  const n = img.uuid.length;
  if (!Array.isArray(img.applied)) throw new ImageFormatError('field applied is missing');
  for (const k of [
    'name',
    'generation',
    'parent',
    'root',
    'invVersion',
    'children',
    'allocations',
    'seq',
    'created',
    'updated',
    'inventory',
    'usage',
    'traits',
    'aggregates',
  ] as const) {
    if (img[k]?.length !== n) throw new ImageFormatError(`field ${k} has ${img[k]?.length} entries, not ${n}`);
  }
  const forest = new Forest();
  const intern: Interner = forest.intern;
  const definitions = img.definitions.map((d) => {
    const inv: Record<string, Inventory> = {};
    for (const [c, total, reserved, min_unit, max_unit, step_size, allocation_ratio] of d) {
      inv[img.classes[c]!] = { total, reserved, min_unit, max_unit, step_size, allocation_ratio };
    }
    return intern.inventory(inv) as Record<string, Inventory>;
  });
  const lists = img.lists.map((l) => intern.list(l) as string[]);
  const link = (v: number | string) => (typeof v === 'string' ? v : v < 0 ? undefined : img.uuid[v]);
  const records: ProviderRecord[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const usages: Record<string, number> = {};
    const u = img.usage[i]!;
    for (let k = 0; k < u.length; k += 2) usages[img.classes[u[k]!]!] = u[k + 1]!;
    const inv = img.inventory[i]!;
    const t = img.traits[i]!;
    const a = img.aggregates[i]!;
    const p: ProviderRecord = {
      uuid: img.uuid[i]!,
      name: img.name[i]!,
      generation: img.generation[i]!,
      parent: link(img.parent[i]!),
      root: link(img.root[i]!) ?? img.uuid[i]!,
      inventories: inv < 0 ? (Interner.EMPTY_INV as Record<string, Inventory>) : definitions[inv]!,
      invVersion: img.invVersion[i]!,
      usages,
      traits: t < 0 ? (Interner.EMPTY_LIST as string[]) : lists[t]!,
      aggregates: a < 0 ? (Interner.EMPTY_LIST as string[]) : lists[a]!,
      children: img.children[i]!,
      allocationCount: img.allocations[i]!,
      createdAt: img.times[img.created[i]!]!,
      updatedAt: img.times[img.updated[i]!]!,
      seq: img.seq[i]!,
    };
    records[i] = p;
  }
  forest.loadCompacted(records);
  return forest;
}
