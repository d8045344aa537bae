/**
 * Test oracles for the allocation-candidates solver.
 *
 * `bruteForce` re-implements Placement's own algorithm structure (objects/
 * allocation_candidate.py): a full candidate list per request group (single-provider
 * path for granular groups, per-tree cartesian product for the unnumbered group,
 * sharing providers copied to every anchor), then, per anchor, the cartesian product
 * of all groups filtered by group_policy, same_subtree and the consolidated capacity
 * check, de-duplicated as a set. Exponential, fine for small forests: it is the
 * reference the pruning search must match exactly when no limit applies.
 *
 * `checkCandidate` independently verifies one rendered candidate against the forest.
 */
import type { Forest } from '../../../functions/core/placement/forest.js';
import { capacity, fits, type ProviderRecord } from '../../../functions/core/placement/model.js';
import type { CandidatesRequest, RequestGroup } from '../../../functions/core/placement/candidates/request.js';
import type { CandidatesResult } from '../../../functions/core/placement/candidates/solver.js';

const SHARES = 'MISC_SHARES_VIA_AGGREGATE';

/** provider uuid -> class -> amount, and suffix -> provider uuids */
export interface Flat {
  allocations: Record<string, Record<string, number>>;
  mappings: Record<string, string[]>;
}

export function canonical(f: Flat): string {
  const allocs = Object.keys(f.allocations)
    .sort()
    .map((u) => [u, Object.entries(f.allocations[u]!).sort()]);
  const maps = Object.keys(f.mappings)
    .sort()
    .map((s) => [s, [...new Set(f.mappings[s])].sort()]);
  return JSON.stringify([allocs, maps]);
}

/** the solver's candidates in the same flat form */
export function flatten(res: CandidatesResult, req: CandidatesRequest): Flat[] {
  return res.candidates.map((c) => {
    const f: Flat = { allocations: {}, mappings: {} };
    res.slots.forEach((slot, i) => {
      const p = c[i]!;
      const suffix = req.groups[slot.group]!.suffix;
      (f.mappings[suffix] ??= []).push(p.uuid);
      for (const [rc, n] of slot.amounts) {
        const a = (f.allocations[p.uuid] ??= {});
        a[rc] = (a[rc] ?? 0) + n;
      }
    });
    return f;
  });
}

interface Areq {
  anchor: string;
  granular: boolean;
  suffix: string;
  /** (provider, class, amount) */
  rrs: Array<[ProviderRecord, string, number]>;
  providers: ProviderRecord[];
}

const hasAll = (have: Set<string>, required: Set<string>[]) => required.every((any) => [...any].some((t) => have.has(t)));
const aggOk = (p: ProviderRecord, memberOf: Set<string>[]) => memberOf.every((any) => p.aggregates.some((a) => any.has(a)));
const inAgg = (p: ProviderRecord, aggs: Set<string>) => p.aggregates.some((a) => aggs.has(a));
const fitsOne = (p: ProviderRecord, rc: string, n: number) => !!p.inventories[rc] && fits(p.inventories[rc]!, p.usages[rc] ?? 0, n);

function product<T>(lists: T[][]): T[][] {
  let out: T[][] = [[]];
  for (const l of lists) out = out.flatMap((prefix) => l.map((x) => [...prefix, x]));
  return out;
}

export function bruteForce(forest: Forest, req: CandidatesRequest): Flat[] {
  const all = [...forest.providers.values()];
  const get = (u: string) => forest.get(u)!;
  const sharing = all.filter((p) => p.traits.includes(SHARES));
  const hasTrees = all.some((p) => p.parent);
  const existsSharing = sharing.length > 0;
  // anchors_for_sharing_providers: roots of every provider sharing an aggregate
  const anchorsFor = (s: ProviderRecord) => new Set(all.filter((q) => q.aggregates.some((a) => s.aggregates.includes(a))).map((q) => q.root));
  let anchorRoots: Set<string> | undefined;
  if (req.rootRequired) {
    const rr = req.rootRequired;
    anchorRoots = new Set(
      all
        .filter((p) => !p.parent && rr.required.every((t) => p.traits.includes(t)) && !rr.forbidden.some((t) => p.traits.includes(t)))
        .map((p) => p.uuid),
    );
  }
  const anchorOk = (a: string) => !anchorRoots || anchorRoots.has(a);

  const perGroup = new Map<string, Areq[]>();
  for (const g of req.groups) {
    if (g.inTree !== undefined && !forest.get(g.inTree)) return [];
    const areqs = g.useSameProvider || !(existsSharing || hasTrees) ? single(g) : multi(g);
    if (!areqs.length) return [];
    perGroup.set(g.suffix, areqs);
  }

  function single(g: RequestGroup): Areq[] {
    const treeRoot = g.inTree !== undefined && g.resources.length ? get(g.inTree).root : undefined;
    if (!g.resources.length && !g.requiredTraits.length && !g.memberOf.length) return [];
    const out: Areq[] = [];
    for (const p of all) {
      if (!g.resources.every(([rc, n]) => fitsOne(p, rc, n))) continue;
      if (treeRoot !== undefined && p.root !== treeRoot) continue;
      if (!hasAll(new Set(p.traits), g.requiredTraits)) continue;
      if (p.traits.some((t) => g.forbiddenTraits.has(t))) continue;
      if (!aggOk(p, g.memberOf) || inAgg(p, g.forbiddenAggs)) continue;
      const rrs = g.resources.map(([rc, n]) => [p, rc, n] as [ProviderRecord, string, number]);
      const mk = (anchor: string): Areq => ({ anchor, granular: g.useSameProvider, suffix: g.suffix, rrs, providers: [p] });
      if (anchorOk(p.root)) out.push(mk(p.root));
      if (p.traits.includes(SHARES)) for (const a of anchorsFor(p)) if (a !== p.root && anchorOk(a)) out.push(mk(a));
    }
    return out;
  }

  function multi(g: RequestGroup): Areq[] {
    const treeRoot = g.inTree !== undefined ? get(g.inTree).root : undefined;
    // per class: (provider, anchor) pairs
    const perRc = g.resources.map(([rc, n]) => {
      const pairs: Array<[ProviderRecord, string]> = [];
      for (const p of all) {
        if (!fitsOne(p, rc, n)) continue;
        if (treeRoot !== undefined && p.root !== treeRoot) continue;
        pairs.push([p, p.root]);
        const sharingOk = p.traits.includes(SHARES) && (!g.memberOf.length || aggOk(p, g.memberOf));
        if (sharingOk && treeRoot === undefined) for (const a of anchorsFor(p)) if (a !== p.root) pairs.push([p, a]);
      }
      return pairs.filter(([p, a]) => {
        if (!anchorOk(a)) return false;
        if (g.memberOf.length && !aggOk(p, g.memberOf) && !aggOk(get(a), g.memberOf)) return false;
        if (g.forbiddenAggs.size && (inAgg(p, g.forbiddenAggs) || inAgg(get(a), g.forbiddenAggs))) return false;
        return true;
      });
    });
    const anchors = new Set(perRc[0]?.map(([, a]) => a) ?? []);
    for (const l of perRc) {
      const here = new Set(l.map(([, a]) => a));
      for (const a of [...anchors]) if (!here.has(a)) anchors.delete(a);
    }
    const out: Areq[] = [];
    for (const a of anchors) {
      const lists = perRc.map((l) => l.filter(([, x]) => x === a).map(([p]) => p));
      for (const combo of product(lists)) {
        if (combo.some((p) => p.traits.some((t) => g.forbiddenTraits.has(t)))) continue;
        if (!hasAll(new Set(combo.flatMap((p) => p.traits)), g.requiredTraits)) continue;
        out.push({
          anchor: a,
          granular: false,
          suffix: g.suffix,
          rrs: combo.map((p, i) => [p, g.resources[i]![0], g.resources[i]![1]]),
          providers: [...new Set(combo)],
        });
      }
    }
    return out;
  }

  const isAncestorOrSelf = (top: ProviderRecord, p: ProviderRecord): boolean => {
    for (let cur: ProviderRecord | undefined = p; cur; cur = cur.parent ? forest.get(cur.parent) : undefined) if (cur.uuid === top.uuid) return true;
    return false;
  };
  const anchors = new Set([...perGroup.values()].flat().map((a) => a.anchor));
  const results = new Map<string, Flat>();
  const granularCount = req.groups.filter((g) => g.useSameProvider).length;
  for (const anchor of anchors) {
    const lists = req.groups.map((g) => perGroup.get(g.suffix)!.filter((a) => a.anchor === anchor));
    if (lists.some((l) => !l.length)) continue;
    for (const combo of product(lists)) {
      if (req.groupPolicy === 'isolate') {
        const ps = new Set(combo.filter((a) => a.granular).map((a) => a.providers[0]!.uuid));
        if (ps.size !== granularCount) continue;
      }
      let ok = true;
      for (const set of req.sameSubtrees) {
        const ps = [...new Set(combo.filter((a) => set.includes(a.suffix)).flatMap((a) => a.providers))];
        if (ps.length > 1 && !ps.some((top) => ps.every((p) => isAncestorOrSelf(top, p)))) ok = false;
      }
      if (!ok) continue;
      const f: Flat = { allocations: {}, mappings: {} };
      const sums = new Map<string, { p: ProviderRecord; rc: string; n: number }>();
      for (const a of combo) {
        for (const p of a.providers) (f.mappings[a.suffix] ??= []).push(p.uuid);
        for (const [p, rc, n] of a.rrs) {
          const k = `${p.uuid}|${rc}`;
          const cur = sums.get(k);
          if (cur) cur.n += n;
          else sums.set(k, { p, rc, n });
        }
      }
      for (const { p, rc, n } of sums.values()) {
        const inv = p.inventories[rc]!;
        if ((p.usages[rc] ?? 0) + n > Math.floor(capacity(inv)) || n > inv.max_unit) ok = false;
        (f.allocations[p.uuid] ??= {})[rc] = n;
      }
      if (!ok) continue;
      if (!req.nestedAware && hasTrees) {
        const used = Object.keys(f.allocations).map(get);
        if (new Set(used.map((p) => p.root)).size !== used.length) continue;
      }
      results.set(canonical(f), f);
    }
  }
  return [...results.values()];
}

/**
 * Independent validity check of one candidate: capacities, and every group's own
 * constraints on the providers its mapping names. Returns a list of violations.
 */
export function checkCandidate(forest: Forest, req: CandidatesRequest, f: Flat): string[] {
  const errs: string[] = [];
  const get = (u: string) => forest.get(u)!;
  for (const [u, res] of Object.entries(f.allocations)) {
    const p = get(u);
    for (const [rc, n] of Object.entries(res)) {
      const inv = p.inventories[rc];
      if (!inv) errs.push(`${p.name} has no ${rc}`);
      else if ((p.usages[rc] ?? 0) + n > capacity(inv) || n > inv.max_unit) errs.push(`${p.name} over capacity for ${rc}`);
    }
  }
  const anchorsOf = (p: ProviderRecord): Set<string> => {
    const s = new Set([p.root]);
    if (p.traits.includes(SHARES)) {
      for (const q of forest.providers.values()) if (q.aggregates.some((a) => p.aggregates.includes(a))) s.add(q.root);
    }
    return s;
  };
  // all providers must agree on one anchor
  const usedProviders = Object.values(f.mappings).flat().map(get);
  const common = usedProviders.map(anchorsOf).reduce((a, b) => new Set([...a].filter((x) => b.has(x))));
  if (!common.size) errs.push('no common anchor');
  if (req.rootRequired) {
    const rr = req.rootRequired;
    const okAnchor = [...common].some((a) => {
      const r = get(a);
      return rr.required.every((t) => r.traits.includes(t)) && !rr.forbidden.some((t) => r.traits.includes(t));
    });
    if (!okAnchor) errs.push('root_required not met');
  }
  for (const g of req.groups) {
    const ps = (f.mappings[g.suffix] ?? []).map(get);
    if (!ps.length) errs.push(`group ${g.suffix} unmapped`);
    if (g.useSameProvider) {
      if (ps.length !== 1) errs.push(`group ${g.suffix} on ${ps.length} providers`);
      const p = ps[0]!;
      for (const [rc, n] of g.resources) if (!fitsOne(p, rc, n)) errs.push(`group ${g.suffix}: ${rc} does not fit ${p.name}`);
      if (!hasAll(new Set(p.traits), g.requiredTraits)) errs.push(`group ${g.suffix}: traits`);
      if (p.traits.some((t) => g.forbiddenTraits.has(t))) errs.push(`group ${g.suffix}: forbidden trait`);
      if (!aggOk(p, g.memberOf) || inAgg(p, g.forbiddenAggs)) errs.push(`group ${g.suffix}: aggregates`);
    } else {
      if (!hasAll(new Set(ps.flatMap((p) => p.traits)), g.requiredTraits)) errs.push('unnumbered: traits');
      if (ps.some((p) => p.traits.some((t) => g.forbiddenTraits.has(t)))) errs.push('unnumbered: forbidden trait');
    }
  }
  if (req.groupPolicy === 'isolate') {
    const ps = req.groups.filter((g) => g.useSameProvider).map((g) => f.mappings[g.suffix]![0]);
    if (new Set(ps).size !== ps.length) errs.push('isolate violated');
  }
  return errs;
}
