/**
 * The allocation-candidates solver: a parsed GET /allocation_candidates request + the
 * provider forest -> allocation requests + the providers to summarise. Pure (no I/O).
 *
 * Semantics are Placement's (objects/allocation_candidate.py, research_context.py),
 * restated per anchor (the root of the non-sharing tree an allocation request lives
 * in, see docs/placement.md "Allocation candidates"):
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
 *
 * This module coordinates; the parts live beside it:
 *   groups.ts     a request group prepared for matching, the provider predicates
 *   plan.ts       the frozen slot plan (slots, their checks, render order)
 *   anchors.ts    which anchors to visit; a tree's providers and sharing providers
 *   options.ts    each slot's options at one anchor
 *   prechecks.ts  unknown names (Placement's order), per-anchor bounds, one-provider trees
 *   search.ts     the resumable depth-first search over one anchor's slots
 *   summaries.ts  which providers provider_summaries lists, in upstream's order
 */
import type { Forest } from '../forest.js';
import type { CustomOrder } from '../standard.js';
import { pickAnchors, Trees, type AnchorList } from './anchors.js';
import { aggsSatisfy, inAnyAgg, rootOk } from './groups.js';
import { SlotOptions } from './options.js';
import { planSlots, type Slot, type SlotPlan } from './plan.js';
import { feasible, loneRootFits, replayUnknownNames, type MissingNames } from './prechecks.js';
import type { CandidatesRequest } from './request.js';
import { AnchorSearch } from './search.js';
import { summarise } from './summaries.js';
import type { ProviderView } from './view.js';

export interface SolveOptions extends MissingNames {
  /** global cap on the candidates generated per request; undefined or <= 0 = none */
  maxCandidates?: number;
  /** randomize_allocation_candidates: sample `limit` from everything generated */
  randomize?: boolean;
  /** random source for `randomize` (tests pass a seeded one) */
  random?: () => number;
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

/** prepare(): the anchor cannot give a candidate; or enough candidates were found */
const NONE_LEFT = Symbol('none');
const STOP = Symbol('stop');

class CandidateSolver {
  private readonly plan: SlotPlan;
  private readonly trees: Trees;
  private readonly options: SlotOptions;
  /** the global cap (MAX_ALLOCATION_CANDIDATES) */
  private readonly cap: number;
  /** how many candidates to generate: the cap, and `limit` unless randomised (sampled later) */
  private readonly stopAt: number;
  private readonly out: ProviderView[][] = [];
  private readonly seenSharedOnly = new Set<string>();
  private readonly stats: SolveStats = { anchorsVisited: 0, nodes: 0, capped: false };

  constructor(
    private readonly forest: Forest,
    private readonly req: CandidatesRequest,
    private readonly opts: SolveOptions,
  ) {
    this.plan = planSlots(forest, req, opts.order);
    this.trees = new Trees(forest);
    this.options = new SlotOptions(this.plan);
    this.cap = opts.maxCandidates !== undefined && opts.maxCandidates > 0 ? opts.maxCandidates : Infinity;
    const limit = req.limit !== undefined && req.limit > 0 ? req.limit : Infinity;
    this.stopAt = opts.randomize ? this.cap : Math.min(this.cap, limit);
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
    if (!replayUnknownNames(this.forest, this.req, plan, this.opts)) return result([]);
    if (plan.groups.some((g) => g.inTreeMissing || g.matchesNothing)) return result([]);
    this.roundRobin(pickAnchors(this.forest, plan.groups, this.req.rootRequired));
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

  /**
   * Prepare anchor A: a suspended search over its slots' options, or NONE_LEFT when
   * some slot has no option or A cannot work. A one-provider tree with no sharing
   * provider associated (flat deployments) needs no search: its only possible
   * candidate (every slot on A) is recorded at once (STOP: enough candidates).
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
    if (tree.length === 1 && !shared.length) {
      if (!loneRootFits(this.plan, this.options, A, aSat)) return NONE_LEFT;
      this.stats.nodes++;
      const c = new Array<ProviderView>(this.plan.slots.length);
      for (let i = 0; i < c.length; i++) c[i] = A;
      return this.push(c) === 'stop' ? STOP : NONE_LEFT;
    }
    if (!this.options.fill(tree, shared, aSat) || !feasible(this.plan, this.options)) return NONE_LEFT;
    return new AnchorSearch(this.plan, this.forest, this.options.take(), this.stats);
  }

  /** the search's next new candidate, recorded; true = enough candidates */
  private produce(s: AnchorSearch): boolean {
    for (;;) {
      const c = s.step();
      if (!c) return false;
      const r = this.push(c);
      if (r !== 'dup') return r === 'stop';
    }
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
