/**
 * A per-record, read-optimised view of a provider for the solver and the renderer:
 * inventory definitions and trait sets (shared between providers that have the same),
 * usage lookups, the sharing flag, the quoted uuid and cached provider_summaries
 * fragments (both created when first needed). Records in the forest are immutable (a change puts a
 * new record object), so a view cached per record object (WeakMap) is never stale and
 * dies with its record.
 */
import type { Forest } from '../forest.js';
import { capacity, type ProviderRecord } from '../model.js';

export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';

/** One class of an inventory definition: what does not change with usage. */
export class InvDef {
  constructor(
    /** (total - reserved) * allocation_ratio, as Placement's SQL computes it */
    readonly cap: number,
    readonly min: number,
    readonly max: number,
    readonly step: number,
  ) {}
}

/**
 * Inventory definitions and trait sets are shared by the records that have them (the
 * forest interns them), so their read-optimised forms are shared too: one Map per
 * distinct definition, one Set per distinct trait list.
 */
const defsOf = new WeakMap<object, ReadonlyMap<string, InvDef>>();
function defs(inventories: ProviderRecord['inventories']): ReadonlyMap<string, InvDef> {
  let d = defsOf.get(inventories);
  if (!d) {
    const m = new Map<string, InvDef>();
    for (const [rc, i] of Object.entries(inventories)) m.set(rc, new InvDef(capacity(i), i.min_unit, i.max_unit, i.step_size));
    defsOf.set(inventories, (d = m));
  }
  return d;
}
const traitSets = new WeakMap<readonly string[], ReadonlySet<string>>();
function traitSet(traits: readonly string[]): ReadonlySet<string> {
  let t = traitSets.get(traits);
  if (!t) traitSets.set(traits, (t = new Set(traits)));
  return t;
}

export class ProviderView {
  readonly uuid: string;
  readonly root: string;
  readonly parent: string | undefined;
  readonly seq: number;
  /** the inventory definition, by class (shared with every provider of the same definition) */
  readonly inv: ReadonlyMap<string, InvDef>;
  private readonly usages: Readonly<Record<string, number>>;
  readonly traits: ReadonlySet<string>;
  readonly aggs: readonly string[];
  readonly sharing: boolean;
  /** a root without children: its tree is itself (the store keeps `children` exact) */
  readonly alone: boolean;
  private quoted: string | undefined = undefined;
  /** rendered provider_summaries entries, by shape key (created when first rendered) */
  fragments: Map<string, string> | undefined = undefined;
  /** scratch mark for one synchronous pass (see nextMark): de-duplication without Sets */
  mark = 0;
  /** the text of this provider's last all-on-one-provider allocation request, and its template */
  areqTemplate = 0;
  areqText: string | undefined = undefined;

  constructor(readonly record: ProviderRecord) {
    this.uuid = record.uuid;
    this.root = record.root;
    this.parent = record.parent;
    this.seq = record.seq;
    this.inv = defs(record.inventories);
    this.usages = record.usages;
    this.traits = traitSet(record.traits);
    this.aggs = record.aggregates;
    this.sharing = this.traits.has(SHARING_TRAIT);
    this.alone = record.parent === undefined && record.children === 0;
  }

  /** JSON string literal of the uuid */
  get json(): string {
    this.quoted ??= JSON.stringify(this.uuid);
    return this.quoted;
  }

  used(rc: string): number {
    return this.usages[rc] ?? 0;
  }

  /** would `amount` more of `rc` fit, honouring min/max unit and step size (model.fits) */
  fits(rc: string, amount: number): boolean {
    const i = this.inv.get(rc);
    if (!i) return false;
    return this.used(rc) + amount <= i.cap && i.min <= amount && i.max >= amount && amount % i.step === 0;
  }

  /** would a running total of `sum` of `rc` (several groups on one provider) still fit */
  fitsSum(rc: string, sum: number): boolean {
    const i = this.inv.get(rc)!;
    return this.used(rc) + sum <= i.cap && sum <= i.max;
  }

  inAgg(a: string): boolean {
    return this.aggs.includes(a);
  }
}

let marks = 0;
/** a fresh mark value; a pass sets view.mark = m to say "seen in this pass" */
export function nextMark(): number {
  return ++marks;
}

const views = new WeakMap<ProviderRecord, ProviderView>();

export function viewOf(p: ProviderRecord): ProviderView {
  let v = views.get(p);
  if (!v) views.set(p, (v = new ProviderView(p)));
  return v;
}

const rootViews = new WeakMap<readonly ProviderRecord[], ProviderView[]>();

/**
 * Views of forest.roots(), index for index, filled lazily (a request that stops after
 * a few anchors builds or checks only those). The forest replaces records in that list
 * in place, so an entry is checked against its record (a pointer compare) when read.
 */
export class RootViews {
  private readonly views: ProviderView[];
  constructor(readonly roots: readonly ProviderRecord[]) {
    let vs = rootViews.get(roots);
    if (!vs) rootViews.set(roots, (vs = []));
    this.views = vs;
  }
  get length(): number {
    return this.roots.length;
  }
  at(i: number): ProviderView {
    const r = this.roots[i]!;
    let v = this.views[i];
    if (v?.record !== r) this.views[i] = v = viewOf(r);
    return v;
  }
}

/** the view of the provider with this uuid in the forest, if any */
export function viewIn(forest: Forest, uuid: string): ProviderView | undefined {
  const p = forest.get(uuid);
  return p ? viewOf(p) : undefined;
}

export const bySeq = (a: { seq: number; uuid: string }, b: { seq: number; uuid: string }) =>
  a.seq - b.seq || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0);
