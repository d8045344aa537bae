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
 *
 * This module is the document's format (its fields, the run-length columns, the error a
 * reader raises); forest-image-encode.ts writes one, forest-image-decode.ts reads one.
 */

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

/** `xs` as a column: runs when they are shorter */
export function column<T>(xs: T[]): Column<T> {
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

export class ImageFormatError extends Error {}

/** a column's values (`n` of them, when given; ImageFormatError otherwise) */
export function expand<T>(c: Column<T> | undefined, name: string, n?: number): T[] {
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
