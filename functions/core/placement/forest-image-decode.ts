/**
 * Reading a forest image (forest-image.ts: the format): a whole forest, the records of
 * some providers, a delta's records and deletions, or just the uuids — every shared
 * value interned into the forest the records go to. Pure.
 */
import { Forest } from './forest.js';
import { Interner } from './forest-interner.js';
import { type Inventory, type ProviderRecord, providerRecord } from './model.js';
import { expand, type ForestImage, IMAGE_FORMAT, IMAGE_VERSION, ImageFormatError } from './forest-image.js';

/** one shared, frozen usage for every provider without any (records are never changed in place) */
const NO_USAGE: Record<string, number> = Object.freeze({}) as Record<string, number>;

/** A forest holding the image's providers (its interner already knows the shared parts). */
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
