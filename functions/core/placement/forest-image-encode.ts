/**
 * Writing a forest image (forest-image.ts: the format): a whole forest, or a delta of
 * some of its providers, each shared value written once in a table. Pure.
 */
import type { Forest } from './forest.js';
import type { ProviderRecord } from './model.js';
import { column, type ForestImage, IMAGE_FORMAT, IMAGE_VERSION } from './forest-image.js';

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
