/**
 * The allocation-candidates solver: a parsed GET /allocation_candidates request + the
 * provider forest -> allocation requests + the providers to summarise. Pure (no I/O).
 *
 * Semantics are Placement's (objects/allocation_candidate.py, research_context.py),
 * restated per anchor (the root of the non-sharing tree an allocation request lives
 * in, see docs/design.md "Allocation candidates"):
 *   - a granular group (resources<S>, use_same_provider) is one provider that has
 *     every requested resource itself, has its traits, and is itself in its member_of
 *     aggregates; in_tree<S> restricts that provider's tree. It serves the anchor of
 *     its own tree, and, if it is a sharing provider (MISC_SHARES_VIA_AGGREGATE),
 *     every tree that has a provider in one of its aggregates.
 *   - the unnumbered group takes each resource class from one provider of the
 *     anchor's tree or from a sharing provider associated with the tree (and itself
 *     in member_of); member_of / forbidden aggregates count on the provider or on the
 *     anchor root (an aggregate on the root spans the tree); the providers it uses
 *     must together have the required traits, and none a forbidden trait.
 *   - groups combine per anchor; amounts of one class on one provider add up and
 *     must still fit (capacity, max_unit); group_policy=isolate keeps granular groups
 *     on distinct providers; each same_subtree set must have one of its providers
 *     above (or equal to) all the others; root_required filters anchors; before 1.29
 *     two providers of one tree never give resources to one request.
 *
 * Search: instead of building every group's candidate list and taking the cartesian
 * product, it prepares anchors in creation order and, per anchor, runs a resumable
 * depth-first search over "slots" (one per granular group, one per resource class of
 * the unnumbered group) whose options are that anchor's matching providers. Each
 * choice reduces what later slots can take from the same provider (capacity and
 * max_unit are checked on the running sum), constraints are checked as soon as their
 * slots are filled, and an anchor whose total demand exceeds its options' total free
 * capacity is skipped. Anchors are visited breadth-first (the first candidate of
 * every anchor, then the second, ...) so a small `limit` still spreads over trees, and
 * the search stops as soon as `limit` (or the global cap) is met.
 */
import type { Forest } from '../forest.js';
import { Problem } from '../../errors.js';
import { pickAnchors, Trees, type AnchorList } from './anchors.js';
import { aggsSatisfy, collectively, granularOk, hasAnyTrait, hasTraits, inAnyAgg, rootOk, type GroupPlan } from './groups.js';
import type { CandidatesRequest } from './request.js';
import { planSlots, type Slot, type SlotPlan } from './plan.js';
import { summarise } from './summaries.js';
import { viewIn, viewOf, type ProviderView } from './view.js';
import type { CustomOrder } from '../standard.js';

export interface SolveOptions {
  /** global cap on the candidates generated per request; undefined or <= 0 = none */
  maxCandidates?: number;
  /** randomize_allocation_candidates: sample `limit` from everything generated */
  randomize?: boolean;
  /** random source for `randomize` (tests pass a seeded one) */
  random?: () => number;
  /** names that are neither standard nor existing custom resource classes / traits */
  missingResourceClasses?: ReadonlySet<string>;
  missingTraits?: ReadonlySet<string>;
  /** creation order of custom classes (the unnumbered group's classes may render in class order) */
  order?: CustomOrder;
}

export interface SolveStats {
  anchorsVisited: number;
  nodes: number;
  /** the global cap stopped the search */
  capped: boolean;
}

export interface CandidatesResult {
  /** the search's slots; every candidate has one provider per slot, in this order */
  slots: readonly Slot[];
  /** slot indices in request-group order (how allocations and mappings are rendered) */
  renderOrder: readonly number[];
  candidates: ProviderView[][];
  /** providers to summarise, in output order */
  summaries: ProviderView[];
  /** every resource class any group asked for (summaries before 1.27 show only these) */
  requestedResources: ReadonlySet<string>;
  stats: SolveStats;
}

const NO_NAMES: ReadonlySet<string> = new Set();
const STOP = Symbol('stop');
const NONE_LEFT = Symbol('none');

/** a depth-first search over one anchor's slots that can stop and resume */
interface AnchorSearch {
  options: ProviderView[][];
  optLen: number[];
  chosen: ProviderView[];
  /** per depth, the next option to try */
  next: Int32Array;
  depth: number;
  done: boolean;
}

export class CandidateSolver {
  private readonly plan: SlotPlan;
  private readonly trees: Trees;
  /** the global cap (MAX_ALLOCATION_CANDIDATES) */
  private readonly cap: number;
  /** how many candidates to generate: the cap, and `limit` unless randomised (sampled later) */
  private readonly stopAt: number;
  private readonly out: ProviderView[][] = [];
  private readonly seenSharedOnly = new Set<string>();
  private readonly stats: SolveStats = { anchorsVisited: 0, nodes: 0, capped: false };
  // the search being prepared or stepped (see AnchorSearch); the predicates read these
  private options: ProviderView[][];
  /** number of valid entries of options[i] */
  private optLen: number[];
  private chosen: ProviderView[];
  /** option buffers reused while preparing anchors */
  private readonly buffers: ProviderView[][];
  private readonly bufferLen: number[];
  private readonly unsuffixedChosen: ProviderView[] = [];
  /** per group, granularOk of sharing providers (met again from every anchor they serve) */
  private readonly memo: Array<Map<ProviderView, boolean>>;

  constructor(
    private readonly forest: Forest,
    private readonly req: CandidatesRequest,
    private readonly opts: SolveOptions = {},
  ) {
    this.plan = planSlots(forest, req, opts.order);
    this.memo = this.plan.groups.map(() => new Map());
    this.trees = new Trees(forest);
    this.buffers = this.plan.slots.map(() => []);
    this.bufferLen = this.plan.slots.map(() => 0);
    this.options = this.buffers;
    this.optLen = this.bufferLen;
    this.chosen = new Array(this.plan.slots.length);
    this.cap = opts.maxCandidates !== undefined && opts.maxCandidates > 0 ? opts.maxCandidates : Infinity;
    const limit = req.limit !== undefined && req.limit > 0 ? req.limit : Infinity;
    this.stopAt = opts.randomize ? this.cap : Math.min(this.cap, limit);
  }

  // ------------------------------------------------------------ predicates

  private granularOkMemo(g: GroupPlan, p: ProviderView): boolean {
    const memo = this.memo[g.index]!;
    let v = memo.get(p);
    if (v === undefined) memo.set(p, (v = granularOk(g, p)));
    return v;
  }

  /**
   * Can provider p serve slot i for the current anchor? `viaTree`: p is in the
   * anchor's tree (else it is a sharing provider associated with it). `aSat`: the
   * anchor root satisfies the unnumbered group's member_of (which then spans the tree).
   */
  private accepts(i: number, p: ProviderView, viaTree: boolean, aSat: boolean): boolean {
    const g = this.plan.slotGroup[i]!;
    if (this.plan.slotGranular[i]) return viaTree ? granularOk(g, p) : this.granularOkMemo(g, p);
    if (!p.fits(this.plan.slotRc[i]!, this.plan.slotAmount[i]!)) return false;
    if (!viaTree && g.inTreeRoot !== undefined) return false;
    if (g.forbidden.length && hasAnyTrait(p, g.forbidden)) return false;
    if (g.memberOf.length && !(viaTree && aSat) && !aggsSatisfy(p, g.memberOf)) return false;
    if (g.forbiddenAggs.length && inAnyAgg(p, g.forbiddenAggs)) return false;
    return true;
  }

  /**
   * Prepare anchor A: fill the option buffers and return a suspended search over them,
   * or NONE when some slot has no option or A cannot work. A tree of one provider with
   * no sharing provider associated (flat deployments) needs no search: its only
   * possible candidate (every slot on A) is pushed at once (STOP: enough candidates).
   */
  private prepare(A: ProviderView): AnchorSearch | typeof NONE_LEFT | typeof STOP {
    if (!rootOk(this.req.rootRequired, A)) return NONE_LEFT;
    const u = this.plan.unsuffixed;
    let aSat = true;
    if (u) {
      if (u.inTreeRoot !== undefined && u.inTreeRoot !== A.uuid) return NONE_LEFT;
      if (u.forbiddenAggs.length && inAnyAgg(A, u.forbiddenAggs)) return NONE_LEFT;
      if (u.memberOf.length) aSat = aggsSatisfy(A, u.memberOf);
    }
    const tree = this.trees.of(A);
    const shared = this.trees.sharedWith(A, tree);
    const n = this.plan.slots.length;
    if (tree.length === 1 && !shared.length) return this.alone(A, aSat) ? STOP : NONE_LEFT;
    this.options = this.buffers;
    this.optLen = this.bufferLen;
    for (let i = 0; i < n; i++) {
      const opt = this.options[i]!;
      let k = 0;
      for (let j = 0; j < tree.length; j++) if (this.accepts(i, tree[j]!, true, aSat)) opt[k++] = tree[j]!;
      for (let j = 0; j < shared.length; j++) if (this.accepts(i, shared[j]!, false, aSat)) opt[k++] = shared[j]!;
      if (!k) return NONE_LEFT;
      this.optLen[i] = k;
    }
    if (!this.feasible()) return NONE_LEFT;
    return {
      options: this.options.map((o, i) => o.slice(0, this.optLen[i])),
      optLen: this.optLen.slice(),
      chosen: new Array<ProviderView>(n),
      next: new Int32Array(n + 1),
      depth: 0,
      done: false,
    };
  }

  /** Every slot on the anchor itself: the only possible candidate of a one-provider tree. */
  private alone(A: ProviderView, aSat: boolean): boolean {
    const n = this.plan.slots.length;
    for (let i = 0; i < n; i++) if (!this.accepts(i, A, true, aSat)) return false;
    if (this.plan.isolate && this.plan.granularSlots > 1) return false;
    for (const [rc, total] of this.plan.sharedTotals) if (!A.fitsSum(rc, total)) return false;
    const u = this.plan.unsuffixed;
    if (u?.required.length && !hasTraits(A, u.required)) return false;
    this.stats.nodes++;
    const c = new Array<ProviderView>(n);
    for (let i = 0; i < n; i++) c[i] = A;
    return this.push(c) === 'stop';
  }

  /**
   * Necessary conditions checked once per anchor: the unnumbered group's options
   * together have its required traits; per class asked by several slots, total
   * demand fits the options' total free capacity; isolated granular groups have
   * enough distinct providers.
   */
  private feasible(): boolean {
    const u = this.plan.unsuffixed;
    if (u?.required.length) {
      for (const any of u.required) {
        let ok = false;
        for (let i = 0; i < this.plan.slots.length && !ok; i++) {
          if (this.plan.slots[i]!.granular) continue;
          const opt = this.options[i]!;
          for (let k = 0; k < this.optLen[i]! && !ok; k++) for (const t of any) if (opt[k]!.traits.has(t)) ok = true;
        }
        if (!ok) return false;
      }
    }
    for (const rc of this.plan.sharedClasses) {
      let need = 0;
      const providers = new Set<ProviderView>();
      for (let i = 0; i < this.plan.slots.length; i++) {
        for (const [rc2, n] of this.plan.slots[i]!.amounts) {
          if (rc2 !== rc) continue;
          need += n;
          for (let k = 0; k < this.optLen[i]!; k++) providers.add(this.options[i]![k]!);
        }
      }
      let supply = 0;
      for (const p of providers) {
        const inv = p.inv.get(rc)!;
        supply += Math.min(inv.cap - p.used(rc), inv.max);
        if (supply >= need) break;
      }
      if (supply < need) return false;
    }
    if (this.plan.isolate && this.plan.granularSlots > 1) {
      const distinct = new Set<ProviderView>();
      for (let i = 0; i < this.plan.slots.length; i++) {
        if (this.plan.slots[i]!.granular) for (let k = 0; k < this.optLen[i]!; k++) distinct.add(this.options[i]![k]!);
      }
      if (distinct.size < this.plan.granularSlots) return false;
    }
    return true;
  }

  /** Would p still fit slot i given the earlier choices on the same provider? */
  private fitsWithEarlier(i: number, p: ProviderView): boolean {
    const amounts = this.plan.slots[i]!.amounts;
    for (const [rc, n] of amounts) {
      let sum = n;
      for (let j = 0; j < i; j++) {
        if (this.chosen[j] !== p) continue;
        for (const [rc2, m] of this.plan.slots[j]!.amounts) if (rc2 === rc) sum += m;
      }
      if (sum !== n && !p.fitsSum(rc, sum)) return false;
    }
    return true;
  }

  private clashes(i: number, p: ProviderView): boolean {
    const slot = this.plan.slots[i]!;
    for (let j = 0; j < i; j++) {
      const q = this.chosen[j]!;
      const other = this.plan.slots[j]!;
      if (this.plan.isolate && slot.granular && q === p && other.granular) return true;
      // before 1.29: no two providers of one tree give resources to one request
      if (this.plan.distinctRoots && q !== p && q.root === p.root && slot.amounts.length && other.amounts.length) return true;
    }
    return false;
  }

  private collectiveTraitsOk(): boolean {
    const u = this.plan.unsuffixed!;
    if (!u.required.length) return true;
    const ps = this.unsuffixedChosen;
    ps.length = 0;
    for (let i = 0; i < this.plan.slots.length; i++) if (!this.plan.slots[i]!.granular) ps.push(this.chosen[i]!);
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

  /** record a candidate: 'dup' if already reported, 'stop' when there are enough */
  private push(c: ProviderView[]): 'ok' | 'dup' | 'stop' {
    // an allocation request made only of sharing providers can be reached from
    // several anchors: report it once
    let sharedOnly = true;
    for (const p of c) if (!p.sharing) sharedOnly = false;
    if (sharedOnly) {
      const key = c.map((p) => p.uuid).join(',');
      if (this.seenSharedOnly.has(key)) return 'dup';
      this.seenSharedOnly.add(key);
    }
    this.out.push(c);
    return this.out.length >= this.stopAt ? 'stop' : 'ok';
  }

  /**
   * Resume a suspended depth-first search to its next complete assignment (a copy),
   * or undefined when the anchor has no more. Each choice is checked against the
   * earlier ones (running capacity sums, isolate, same tree before 1.29), the
   * unnumbered group's collective traits and same_subtree as soon as they can be.
   */
  private step(s: AnchorSearch): ProviderView[] | undefined {
    this.options = s.options;
    this.optLen = s.optLen;
    this.chosen = s.chosen;
    const n = this.plan.slots.length;
    const next = s.next;
    let d = s.depth;
    while (d >= 0) {
      if (d === n) {
        s.depth = n - 1;
        return s.chosen.slice();
      }
      if (next[d]! >= s.optLen[d]!) {
        next[d] = 0;
        d--;
        continue;
      }
      this.stats.nodes++;
      const p = s.options[d]![next[d]!++]!;
      if (d > 0 && (!this.fitsWithEarlier(d, p) || this.clashes(d, p))) continue;
      s.chosen[d] = p;
      if (d === this.plan.lastUnsuffixedSlot && !this.collectiveTraitsOk()) continue;
      const checks = this.plan.subtreeChecks[d];
      if (checks) {
        let ok = true;
        for (const idx of checks) if (!this.sameSubtreeOk(idx)) ok = false;
        if (!ok) continue;
      }
      d++;
    }
    s.depth = -1;
    s.done = true;
    return undefined;
  }

  /** the search's next new candidate, recorded; true = enough candidates */
  private produce(s: AnchorSearch): boolean {
    for (;;) {
      const c = this.step(s);
      if (!c) return false;
      const r = this.push(c);
      if (r !== 'dup') return r === 'stop';
    }
  }

  // ------------------------------------------------------------ entry points

  /**
   * Placement raises unknown names and short-circuits to an empty answer in a fixed
   * order (root_required, then group by group: classes, member_of, traits, in_tree,
   * capacity). That order only shows when a name is unknown, so it is replayed only
   * then. Returns false when Placement would answer with no candidates first.
   */
  precheck(): boolean {
    const missRC = this.opts.missingResourceClasses ?? NO_NAMES;
    const missT = this.opts.missingTraits ?? NO_NAMES;
    const noTrait = (t: string) => new Problem(400, `No such trait(s): ${t}.`);
    const groupMisses = this.req.groups.map(
      (g) =>
        g.resources.some(([rc]) => missRC.has(rc)) ||
        g.requiredTraits.some((any) => [...any].some((t) => missT.has(t))) ||
        [...g.forbiddenTraits].some((t) => missT.has(t)),
    );
    const rr = this.req.rootRequired;
    for (const t of [...(rr?.required ?? []), ...(rr?.forbidden ?? [])]) if (missT.has(t)) throw noTrait(t);
    const lastBad = groupMisses.lastIndexOf(true);
    if (lastBad < 0) return true;
    const f = this.forest;
    const all = () => f.all().map(viewOf);
    if (rr && !f.roots().some((r) => rootOk(rr, viewOf(r)))) return false;
    for (let i = 0; i <= lastBad; i++) {
      const g = this.req.groups[i]!;
      const plan = this.plan.groups[i]!;
      for (const [rc] of g.resources) {
        if (missRC.has(rc)) throw new Problem(400, `Invalid resource class in resources parameter: No such resource class ${rc}.`);
      }
      if (plan.memberOf.length && !all().some((p) => aggsSatisfy(p, plan.memberOf))) return false;
      for (const any of g.requiredTraits) for (const t of any) if (missT.has(t)) throw noTrait(t);
      for (const t of g.forbiddenTraits) if (missT.has(t)) throw noTrait(t);
      if (plan.inTreeMissing) return false;
      for (const [rc, n] of g.resources) {
        const any = [...(f.byResourceClass.get(rc) ?? [])].some((u) => {
          const p = viewIn(f, u);
          return !!p && p.fits(rc, n) && (plan.inTreeRoot === undefined || p.root === plan.inTreeRoot);
        });
        if (!any) return false;
      }
      if (i < lastBad && plan.granular && !all().some((p) => granularOk(plan, p))) return false;
    }
    return true;
  }

  solve(): CandidatesResult {
    const plan = this.plan;
    const result = (candidates: ProviderView[][]): CandidatesResult => ({
      slots: plan.slots,
      renderOrder: plan.renderOrder,
      candidates,
      summaries: summarise(this.forest, plan, this.trees, candidates),
      requestedResources: plan.requestedResources,
      stats: this.stats,
    });
    if (!this.precheck()) return result([]);
    if (this.plan.groups.some((p) => p.inTreeMissing || p.matchesNothing)) return result([]);
    this.roundRobin(pickAnchors(this.forest, this.plan.groups, this.req.rootRequired));
    this.stats.capped = this.out.length >= this.cap;
    let candidates = this.out;
    if (this.opts.randomize) candidates = sample(candidates, this.req.limit, this.opts.random ?? Math.random);
    return result(candidates);
  }

  /**
   * Breadth-first over anchors: the first candidate of every anchor (in creation
   * order), then the second of every anchor that has one, and so on, so that a
   * `limit` smaller than the answer still spreads over as many trees as it can (what
   * a scheduler needs; Placement's test_requested_limit_is_hit_result_balanced).
   * Only anchors with more candidates keep a suspended search.
   */
  private roundRobin(anchors: AnchorList): void {
    let live: AnchorSearch[] = [];
    for (let a = 0; a < anchors.length; a++) {
      this.stats.anchorsVisited++;
      const s = this.prepare(anchors.at(a));
      if (s === STOP) return;
      if (s === NONE_LEFT) continue;
      if (this.produce(s)) return;
      if (!s.done) live.push(s);
    }
    while (live.length) {
      const still: AnchorSearch[] = [];
      for (const s of live) {
        if (this.produce(s)) return;
        if (!s.done) still.push(s);
      }
      live = still;
    }
  }
}

/** random.sample / random.shuffle, as Placement's limit_results does */
function sample<T>(items: T[], limit: number | undefined, random: () => number): T[] {
  const a = items.slice();
  const k = limit !== undefined && limit > 0 && limit < a.length ? limit : a.length;
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  a.length = k;
  return a;
}

/** Solve a parsed request against a forest (see the module comment). */
export function solveCandidates(forest: Forest, req: CandidatesRequest, opts: SolveOptions = {}): CandidatesResult {
  return new CandidateSolver(forest, req, opts).solve();
}
