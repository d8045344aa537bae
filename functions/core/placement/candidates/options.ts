/**
 * Each slot's options at one anchor: the providers of the anchor's tree, then the
 * sharing providers associated with it, that may serve the slot on their own. Filled
 * into buffers reused from anchor to anchor (most anchors are rejected before a
 * search starts); a search gets copies.
 */
import { aggsSatisfy, granularOk, hasAnyTrait, inAnyAgg } from './groups.js';
import type { SlotPlan } from './plan.js';
import type { ProviderView } from './view.js';

export class SlotOptions {
  /** per slot, its options for the anchor being prepared; `lens[i]` entries are valid */
  readonly buffers: ProviderView[][];
  readonly lens: number[];
  /** per group, granularOk of sharing providers (met again from every anchor they serve) */
  private readonly memo: Array<Map<ProviderView, boolean>>;

  constructor(private readonly plan: SlotPlan) {
    this.buffers = plan.slots.map(() => []);
    this.lens = plan.slots.map(() => 0);
    this.memo = plan.groups.map(() => new Map());
  }

  /**
   * Can provider p serve slot i for the current anchor? `viaTree`: p is in the
   * anchor's tree (else it is a sharing provider associated with it). `aSat`: the
   * anchor root satisfies the unnumbered group's member_of (which then spans the tree).
   */
  accepts(i: number, p: ProviderView, viaTree: boolean, aSat: boolean): boolean {
    const plan = this.plan;
    const g = plan.slotGroup[i]!;
    if (plan.slotGranular[i]) {
      if (viaTree) return granularOk(g, p);
      const memo = this.memo[g.index]!;
      let v = memo.get(p);
      if (v === undefined) memo.set(p, (v = granularOk(g, p)));
      return v;
    }
    if (!p.fits(plan.slotRc[i]!, plan.slotAmount[i]!)) return false;
    if (!viaTree && g.inTreeRoot !== undefined) return false;
    if (g.forbidden.length && hasAnyTrait(p, g.forbidden)) return false;
    if (g.memberOf.length && !(viaTree && aSat) && !aggsSatisfy(p, g.memberOf)) return false;
    if (g.forbiddenAggs.length && inAnyAgg(p, g.forbiddenAggs)) return false;
    return true;
  }

  /** fill the buffers for an anchor's tree and sharing providers; false when a slot has no option */
  fill(tree: readonly ProviderView[], shared: readonly ProviderView[], aSat: boolean): boolean {
    const n = this.buffers.length;
    for (let i = 0; i < n; i++) {
      const opt = this.buffers[i]!;
      let k = 0;
      for (let j = 0; j < tree.length; j++) if (this.accepts(i, tree[j]!, true, aSat)) opt[k++] = tree[j]!;
      for (let j = 0; j < shared.length; j++) if (this.accepts(i, shared[j]!, false, aSat)) opt[k++] = shared[j]!;
      if (!k) return false;
      this.lens[i] = k;
    }
    return true;
  }

  /** copies of the filled options, for a search that outlives this anchor's preparation */
  take(): ProviderView[][] {
    return this.buffers.map((o, i) => o.slice(0, this.lens[i]));
  }
}
