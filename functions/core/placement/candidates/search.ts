/**
 * The depth-first search over one anchor's slots, as an object that owns its state
 * (each slot's options, the choices so far, where to resume) so it can stop after a
 * candidate and resume later: the solver keeps one per anchor that may have more
 * (breadth-first over anchors, see solver.ts).
 */
import type { Forest } from '../forest.js';
import { collectively } from './groups.js';
import type { SlotPlan } from './plan.js';
import type { ProviderView } from './view.js';

/** the counter the search adds its visited nodes to (SolveStats) */
export interface NodeCounter {
  nodes: number;
}

export class AnchorSearch {
  /** the provider chosen per slot, up to the current depth */
  private readonly chosen: ProviderView[];
  /** per depth, the next option to try */
  private readonly next: Int32Array;
  private depth = 0;
  /** the anchor has no more candidates */
  done = false;
  /** scratch: the unnumbered group's chosen providers */
  private readonly unsuffixedChosen: ProviderView[] = [];

  /** `options[i]`: the providers slot i may take, in the order they are tried (owned by the search) */
  constructor(
    private readonly plan: SlotPlan,
    private readonly forest: Forest,
    private readonly options: readonly ProviderView[][],
    private readonly counter: NodeCounter,
  ) {
    const n = plan.slots.length;
    this.chosen = new Array<ProviderView>(n);
    this.next = new Int32Array(n + 1);
  }

  /**
   * Resume to the next complete assignment (a copy), or undefined when the anchor has
   * no more. Each choice is checked against the earlier ones (running capacity sums,
   * isolate, same tree before 1.29), the unnumbered group's collective traits and
   * same_subtree as soon as they can be.
   */
  step(): ProviderView[] | undefined {
    const n = this.plan.slots.length;
    const { next, options, chosen } = this;
    const { lastUnsuffixedSlot, subtreeChecks } = this.plan;
    let d = this.depth;
    while (d >= 0) {
      if (d === n) {
        this.depth = n - 1;
        return chosen.slice();
      }
      if (next[d]! >= options[d]!.length) {
        next[d] = 0;
        d--;
        continue;
      }
      this.counter.nodes++;
      const p = options[d]![next[d]!++]!;
      if (d > 0 && (!this.fitsWithEarlier(d, p) || this.clashes(d, p))) continue;
      chosen[d] = p;
      if (d === lastUnsuffixedSlot && !this.collectiveTraitsOk()) continue;
      const checks = subtreeChecks[d];
      if (checks) {
        let ok = true;
        for (const idx of checks) if (!this.sameSubtreeOk(idx)) ok = false;
        if (!ok) continue;
      }
      d++;
    }
    this.depth = -1;
    this.done = true;
    return undefined;
  }

  /** Would p still fit slot i given the earlier choices on the same provider? */
  private fitsWithEarlier(i: number, p: ProviderView): boolean {
    const slots = this.plan.slots;
    for (const [rc, n] of slots[i]!.amounts) {
      let sum = n;
      for (let j = 0; j < i; j++) {
        if (this.chosen[j] !== p) continue;
        for (const [rc2, m] of slots[j]!.amounts) if (rc2 === rc) sum += m;
      }
      if (sum !== n && !p.fitsSum(rc, sum)) return false;
    }
    return true;
  }

  /** isolate: granular groups on distinct providers; before 1.29: one provider per tree */
  private clashes(i: number, p: ProviderView): boolean {
    const { slots, isolate, distinctRoots } = this.plan;
    const slot = slots[i]!;
    for (let j = 0; j < i; j++) {
      const q = this.chosen[j]!;
      const other = slots[j]!;
      if (isolate && slot.granular && q === p && other.granular) return true;
      if (distinctRoots && q !== p && q.root === p.root && slot.amounts.length && other.amounts.length) return true;
    }
    return false;
  }

  private collectiveTraitsOk(): boolean {
    const u = this.plan.unsuffixed!;
    if (!u.required.length) return true;
    const ps = this.unsuffixedChosen;
    ps.length = 0;
    const granular = this.plan.slotGranular;
    for (let i = 0; i < granular.length; i++) if (!granular[i]) ps.push(this.chosen[i]!);
    return collectively(ps, u.required);
  }

  /** one of the providers chosen for the set is an ancestor-or-self of all of them */
  private sameSubtreeOk(idx: readonly number[]): boolean {
    for (const i of idx) {
      const top = this.chosen[i]!;
      let all = true;
      for (const j of idx) if (!this.isAncestorOrSelf(top, this.chosen[j]!)) all = false;
      if (all) return true;
    }
    return false;
  }

  private isAncestorOrSelf(top: ProviderView, p: ProviderView): boolean {
    if (top === p) return true;
    if (top.root !== p.root) return false;
    let parent = p.parent;
    for (let guard = 0; parent !== undefined && guard < 10_000; guard++) {
      if (parent === top.uuid) return true;
      parent = this.forest.get(parent)?.parent;
    }
    return false;
  }
}
