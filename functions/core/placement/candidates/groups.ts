/**
 * A request group prepared for matching providers (GroupPlan), and the provider
 * predicates the solver's modules share: traits, aggregates, "could this provider
 * serve this granular group on its own", root_required. Pure; nothing here depends on
 * the anchor being searched.
 */
import type { Forest } from '../forest.js';
import type { RequestGroup, RootTraits } from './request.js';
import type { ProviderView } from './view.js';

export interface GroupPlan {
  /** index of the group in request.groups */
  readonly index: number;
  readonly group: RequestGroup;
  readonly granular: boolean;
  readonly resources: ReadonlyArray<readonly [string, number]>;
  readonly required: readonly (readonly string[])[];
  readonly forbidden: readonly string[];
  readonly memberOf: readonly (readonly string[])[];
  readonly forbiddenAggs: readonly string[];
  /** root of the in_tree provider (resource-bearing groups only) */
  readonly inTreeRoot?: string;
  /** in_tree names a provider that does not exist: nothing can match */
  readonly inTreeMissing: boolean;
  /** a resourceless group without required traits or member_of matches nothing (as upstream) */
  readonly matchesNothing: boolean;
}

export function planGroup(forest: Forest, g: RequestGroup, index: number): GroupPlan {
  let inTreeRoot: string | undefined;
  let inTreeMissing = false;
  if (g.inTree !== undefined) {
    const p = forest.get(g.inTree);
    if (!p) inTreeMissing = true;
    else if (g.resources.length) inTreeRoot = p.root;
  }
  return {
    index,
    group: g,
    granular: g.useSameProvider,
    resources: g.resources,
    required: g.requiredTraits.map((s) => [...s]),
    forbidden: [...g.forbiddenTraits],
    memberOf: g.memberOf.map((s) => [...s]),
    forbiddenAggs: [...g.forbiddenAggs],
    inTreeRoot,
    inTreeMissing,
    matchesNothing: !g.resources.length && !g.requiredTraits.length && !g.memberOf.length,
  };
}

/** p has one trait of each any-set */
export function hasTraits(p: ProviderView, required: readonly (readonly string[])[]): boolean {
  for (const any of required) {
    let ok = false;
    for (const t of any) if (p.traits.has(t)) ok = true;
    if (!ok) return false;
  }
  return true;
}

export function hasAnyTrait(p: ProviderView, names: readonly string[]): boolean {
  for (const t of names) if (p.traits.has(t)) return true;
  return false;
}

/** p is in one aggregate of each any-set */
export function aggsSatisfy(p: ProviderView, memberOf: readonly (readonly string[])[]): boolean {
  for (const any of memberOf) {
    let ok = false;
    for (const a of any) if (p.inAgg(a)) ok = true;
    if (!ok) return false;
  }
  return true;
}

export function inAnyAgg(p: ProviderView, aggs: readonly string[]): boolean {
  for (const a of aggs) if (p.inAgg(a)) return true;
  return false;
}

/** together, the providers of `ps` have one trait of each any-set */
export function collectively(ps: ReadonlyArray<ProviderView>, required: readonly (readonly string[])[]): boolean {
  for (const any of required) {
    let ok = false;
    for (const p of ps) {
      for (const t of any) if (p.traits.has(t)) ok = true;
      if (ok) break;
    }
    if (!ok) return false;
  }
  return true;
}

/** Could provider p satisfy granular group g on its own (anchor-independent)? */
export function granularOk(g: GroupPlan, p: ProviderView): boolean {
  for (const [rc, n] of g.resources) if (!p.fits(rc, n)) return false;
  if (g.inTreeRoot !== undefined && p.root !== g.inTreeRoot) return false;
  if (g.required.length && !hasTraits(p, g.required)) return false;
  if (g.forbidden.length && hasAnyTrait(p, g.forbidden)) return false;
  if (g.memberOf.length && !aggsSatisfy(p, g.memberOf)) return false;
  if (g.forbiddenAggs.length && inAnyAgg(p, g.forbiddenAggs)) return false;
  return true;
}

/** root_required: the anchor root has every required trait and no forbidden one */
export function rootOk(rr: RootTraits | undefined, root: ProviderView): boolean {
  if (!rr) return true;
  for (const t of rr.required) if (!root.traits.has(t)) return false;
  for (const t of rr.forbidden) if (root.traits.has(t)) return false;
  return true;
}
