/**
 * A committed change, as its writer describes it (docs/consistency.md, "The change feed").
 *
 * Every write transaction of the store carries ONE description of what it changes,
 * written as an item of its own (`FEED#<shard>` / `<change id>`, store/ddb/feed.ts) in
 * the same transaction: it exists exactly when the transaction committed, so the stream
 * processor (functions/feed/) turns each committed change into exactly one event and a
 * fenced or cancelled attempt into none. The writer knows the before-state exactly: every
 * write is conditioned on what it read (a generation, a version, an absence).
 *
 * Pure: no I/O. `id` orders the changes of one provider and of one consumer as they
 * committed (a provider's writes are ordered by its state item's `last`, a consumer's by
 * its item's `last`: both are the id of their latest change, and a new id is stamped
 * after them).
 */
import type { Inventory } from '../placement/model.js';
import type { AllocationMap } from '../placement/consumers.js';

/** the version of this description and of the events made from it (schemas/events/v1/) */
export const CHANGE_VERSION = 1;

/** What the writer did: one per kind of transaction in the store. */
export type ChangeOp =
  | 'provider.create'
  | 'provider.update'
  | 'provider.delete'
  | 'provider.inventories'
  | 'provider.traits'
  | 'provider.aggregates'
  | 'allocations.set'
  | 'allocations.delete'
  | 'allocations.reshape'
  | 'allocations.import'
  | 'allocations.migrate'
  | 'resource_class.create'
  | 'resource_class.update'
  | 'resource_class.delete'
  | 'trait.create'
  | 'trait.delete'
  | 'node.create'
  | 'node.update'
  | 'node.delete'
  | 'allocation.create'
  | 'allocation.update'
  | 'allocation.delete'
  | 'allocation.backfill'
  | 'allocation.reserve'
  | 'allocation.fail'
  /** a node's provider (and its allocation's consumer) brought in line with the node: the scheduler migration */
  | 'node.provider'
  /** a change no API shows (an allocation taken over by orphan recovery, a migration's progress) */
  | 'internal';

/**
 * a provider as an event shows it: identity, links, generation, and what the change is
 * about (name and links are absent where the writer read only the provider's state: a reshape)
 */
export interface ProviderView {
  name?: string;
  parent?: string | null;
  root?: string;
  generation: number;
  inventories?: Record<string, Inventory>;
  traits?: string[];
  aggregates?: string[];
}

export interface ProviderFact {
  uuid: string;
  before: ProviderView | null;
  after: ProviderView | null;
}

export interface ConsumerView {
  project: string;
  user: string;
  /** consumer type; null = none */
  type: string | null;
  generation: number;
  allocations: AllocationMap;
}

export interface ConsumerFact {
  uuid: string;
  /** the id of the change that made `before` (the consumer item's `last`); null: none known */
  prev: string | null;
  before: ConsumerView | null;
  after: ConsumerView | null;
}

/** a custom resource class or trait (a rename has both names) */
export interface NameFact {
  kind: 'resource_class' | 'trait';
  before: string | null;
  after: string | null;
}

/** a bare-metal node or allocation: `after` whole, `before` only the fields that changed (whole when deleted) */
export interface RecordFact {
  uuid: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface Change {
  v: typeof CHANGE_VERSION;
  /** the change id: `<16-digit µs stamp>#<16 hex>`, unique per attempt; the change-log entry's sort key when there is one */
  id: string;
  /** when it was stamped (ms): the change's time in events and history */
  at: number;
  op: ChangeOp;
  providers?: ProviderFact[];
  consumers?: ConsumerFact[];
  names?: NameFact[];
  nodes?: RecordFact[];
  allocations?: RecordFact[];
  /** what an internal change did, in a few words */
  note?: string;
}

/** what a writer says about its change: everything but the id and time, which the transaction stamps */
export type ChangeSpec = Omit<Change, 'v' | 'id' | 'at'>;

/** the ms time of a change id (its first 13 digits) */
export function changeTime(id: string): number {
  return Number(id.slice(0, 13));
}

export function completeChange(spec: ChangeSpec, id: string): Change {
  return { v: CHANGE_VERSION, id, at: changeTime(id), ...spec };
}

/** A provider view from a record (fields beyond identity only when asked). */
export function providerView(
  p: {
    name: string;
    parent?: string;
    root: string;
    generation: number;
    inventories?: Record<string, Inventory>;
    traits?: string[];
    aggregates?: string[];
  },
  with_: Array<'inventories' | 'traits' | 'aggregates'> = [],
): ProviderView {
  const v: ProviderView = { name: p.name, parent: p.parent ?? null, root: p.root, generation: p.generation };
  for (const k of with_) if (p[k] !== undefined) (v as unknown as Record<string, unknown>)[k] = structuredClone(p[k]);
  return v;
}

export function consumerView(c: {
  project: string;
  user: string;
  type: string | null;
  generation: number;
  allocations: AllocationMap;
}): ConsumerView {
  return { project: c.project, user: c.user, type: c.type, generation: c.generation, allocations: structuredClone(c.allocations) };
}

/** fields of bare-metal records nobody outside sees (locks, holds, the execution's bookkeeping) */
const INTERNAL_FIELDS = new Set([
  'lock',
  'lock_action',
  'hold',
  'hold_until',
  'exec',
  'exec_at',
  'resumes',
  'seq',
  'ver',
  'consumer_project',
  'consumer_user',
]);

function visible(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (!INTERNAL_FIELDS.has(k)) out[k] = v === undefined ? null : v;
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * A node's or allocation's fact: the record after whole (visible fields), before only
 * what changed; a deletion keeps the record before whole. `ver` is kept apart: it orders
 * one record's changes (the events' generation).
 */
export function recordFact(uuid: string, before: object | undefined, after: object | undefined): RecordFact {
  const b = before as Record<string, unknown> | undefined;
  const a = after as Record<string, unknown> | undefined;
  if (!a) return { uuid, before: b ? { ...visible(b), ver: b.ver ?? null } : null, after: null };
  const out: RecordFact = { uuid, before: null, after: { ...visible(a), ver: a.ver ?? null } };
  if (b) {
    const changed: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(visible(b)), ...Object.keys(visible(a))])) if (!same(b[k], a[k])) changed[k] = b[k] ?? null;
    out.before = { ...changed, ver: b.ver ?? null };
  }
  return out;
}

/** Did a record fact change anything visible? (only internal fields: a lock, a hold, the execution) */
export function changesVisible(f: RecordFact): boolean {
  if (!f.before || !f.after) return true;
  return Object.keys(f.before).some((k) => k !== 'ver' && k !== 'updated_at');
}
