/**
 * A per-record, read-optimised view of a provider for the solver and the renderer:
 * monomorphic inventory entries, trait set, sharing flag, the quoted uuid and cached
 * provider_summaries fragments. Records in the forest are immutable (a change puts a
 * new record object), so a view cached per record object (WeakMap) is never stale and
 * dies with its record.
 */
import type { Forest } from '../forest.js';
import { capacity, type ProviderRecord } from '../model.js';

export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';

export class InvView {
  constructor(
    /** (total - reserved) * allocation_ratio, as Placement's SQL computes it */
    readonly cap: number,
    readonly used: number,
    readonly min: number,
    readonly max: number,
    readonly step: number,
  ) {}

  /** would `amount` more fit, honouring min/max unit and step size (model.fits) */
  fits(amount: number): boolean {
    return this.used + amount <= this.cap && this.min <= amount && this.max >= amount && amount % this.step === 0;
  }

  /** would a running total of `sum` (several groups on one provider) still fit */
  fitsSum(sum: number): boolean {
    return this.used + sum <= this.cap && sum <= this.max;
  }
}

export class ProviderView {
  readonly uuid: string;
  readonly root: string;
  readonly parent: string | undefined;
  readonly seq: number;
  readonly inv = new Map<string, InvView>();
  readonly traits: ReadonlySet<string>;
  readonly aggs: readonly string[];
  readonly sharing: boolean;
  /** a root without children: its tree is itself (the store keeps `children` exact) */
  readonly alone: boolean;
  /** JSON string literal of the uuid */
  readonly json: string;
  /** rendered provider_summaries entries, by shape key */
  readonly fragments = new Map<string, string>();
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
    for (const [rc, i] of Object.entries(record.inventories)) {
      this.inv.set(rc, new InvView(capacity(i), record.usages[rc] ?? 0, i.min_unit, i.max_unit, i.step_size));
    }
    this.traits = new Set(record.traits);
    this.aggs = record.aggregates;
    this.sharing = this.traits.has(SHARING_TRAIT);
    this.alone = record.parent === undefined && record.children === 0;
    this.json = JSON.stringify(record.uuid);
  }

  fits(rc: string, amount: number): boolean {
    const i = this.inv.get(rc);
    return i?.fits(amount) ?? false;
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
