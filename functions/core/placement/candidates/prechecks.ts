/**
 * Checks made before any search: Placement's replay of unknown names (per request),
 * necessary conditions on an anchor's options (per anchor), and the one candidate of a
 * one-provider tree, which needs no search at all.
 */
import { Problem } from '../../errors.js';
import type { Forest } from '../forest.js';
import { aggsSatisfy, granularOk, hasTraits, rootOk } from './groups.js';
import type { SlotOptions } from './options.js';
import type { SlotPlan } from './plan.js';
import type { CandidatesRequest } from './request.js';
import { viewIn, viewOf, type ProviderView } from './view.js';

const NO_NAMES: ReadonlySet<string> = new Set();

/** names that are neither standard nor existing custom resource classes / traits */
export interface MissingNames {
  missingResourceClasses?: ReadonlySet<string>;
  missingTraits?: ReadonlySet<string>;
}

/**
 * Placement raises unknown names and short-circuits to an empty answer in a fixed
 * order (root_required, then group by group: classes, member_of, traits, in_tree,
 * capacity). That order only shows when a name is unknown, so it is replayed only
 * then. Throws Placement's 400s; returns false when Placement would answer with no
 * candidates first.
 */
export function replayUnknownNames(forest: Forest, req: CandidatesRequest, plan: SlotPlan, missing: MissingNames): boolean {
  const missRC = missing.missingResourceClasses ?? NO_NAMES;
  const missT = missing.missingTraits ?? NO_NAMES;
  const noTrait = (t: string) => new Problem(400, `No such trait(s): ${t}.`);
  const groupMisses = req.groups.map(
    (g) =>
      g.resources.some(([rc]) => missRC.has(rc)) ||
      g.requiredTraits.some((any) => [...any].some((t) => missT.has(t))) ||
      [...g.forbiddenTraits].some((t) => missT.has(t)),
  );
  const rr = req.rootRequired;
  for (const t of [...(rr?.required ?? []), ...(rr?.forbidden ?? [])]) if (missT.has(t)) throw noTrait(t);
  const lastBad = groupMisses.lastIndexOf(true);
  if (lastBad < 0) return true;
  const f = forest;
  const all = () => f.all().map(viewOf);
  if (rr && !f.roots().some((r) => rootOk(rr, viewOf(r)))) return false;
  for (let i = 0; i <= lastBad; i++) {
    const g = req.groups[i]!;
    const group = plan.groups[i]!;
    for (const [rc] of g.resources) {
      if (missRC.has(rc)) throw new Problem(400, `Invalid resource class in resources parameter: No such resource class ${rc}.`);
    }
    if (group.memberOf.length && !all().some((p) => aggsSatisfy(p, group.memberOf))) return false;
    for (const any of g.requiredTraits) for (const t of any) if (missT.has(t)) throw noTrait(t);
    for (const t of g.forbiddenTraits) if (missT.has(t)) throw noTrait(t);
    if (group.inTreeMissing) return false;
    for (const [rc, n] of g.resources) {
      const any = [...(f.byResourceClass.get(rc) ?? [])].some((u) => {
        const p = viewIn(f, u);
        return !!p && p.fits(rc, n) && (group.inTreeRoot === undefined || p.root === group.inTreeRoot);
      });
      if (!any) return false;
    }
    if (i < lastBad && group.granular && !all().some((p) => granularOk(group, p))) return false;
  }
  return true;
}

/**
 * Necessary conditions checked once per anchor on its filled options: the unnumbered
 * group's options together have its required traits; per class asked by several
 * slots, total demand fits the options' total free capacity (and max_unit); isolated
 * granular groups have enough distinct providers.
 */
export function feasible(plan: SlotPlan, options: SlotOptions): boolean {
  const { slots, unsuffixed: u } = plan;
  const { buffers, lens } = options;
  if (u?.required.length) {
    for (const any of u.required) {
      let ok = false;
      for (let i = 0; i < slots.length && !ok; i++) {
        if (slots[i]!.granular) continue;
        const opt = buffers[i]!;
        for (let k = 0; k < lens[i]! && !ok; k++) for (const t of any) if (opt[k]!.traits.has(t)) ok = true;
      }
      if (!ok) return false;
    }
  }
  for (const rc of plan.sharedClasses) {
    let need = 0;
    const providers = new Set<ProviderView>();
    for (let i = 0; i < slots.length; i++) {
      for (const [rc2, n] of slots[i]!.amounts) {
        if (rc2 !== rc) continue;
        need += n;
        for (let k = 0; k < lens[i]!; k++) providers.add(buffers[i]![k]!);
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
  if (plan.isolate && plan.granularSlots > 1) {
    const distinct = new Set<ProviderView>();
    for (let i = 0; i < slots.length; i++) {
      if (slots[i]!.granular) for (let k = 0; k < lens[i]!; k++) distinct.add(buffers[i]![k]!);
    }
    if (distinct.size < plan.granularSlots) return false;
  }
  return true;
}

/**
 * A tree of one provider with no sharing provider associated (flat deployments) has
 * one possible candidate, every slot on its root A: does it hold?
 */
export function loneRootFits(plan: SlotPlan, options: SlotOptions, A: ProviderView, aSat: boolean): boolean {
  const n = plan.slots.length;
  for (let i = 0; i < n; i++) if (!options.accepts(i, A, true, aSat)) return false;
  if (plan.isolate && plan.granularSlots > 1) return false;
  for (const [rc, total] of plan.sharedTotals) if (!A.fitsSum(rc, total)) return false;
  const u = plan.unsuffixed;
  if (u?.required.length && !hasTraits(A, u.required)) return false;
  return true;
}
