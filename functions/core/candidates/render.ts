/**
 * The GET /allocation_candidates response body, built as a string (it can be tens of
 * MB): allocation_requests in the shape of the request's microversion (list before
 * 1.12, dict from 1.12, + mappings from 1.34) and provider_summaries (requested
 * classes only before 1.27, traits from 1.17, parent/root from 1.29).
 *
 * A provider's summary fragment depends only on the provider record and the
 * microversion shape, so it is cached per record object (a WeakMap: the forest puts
 * a new record for every change, so a cached fragment can never be stale).
 */
import { capacity, type ProviderRecord } from '../model.js';
import type { CandidatesRequest, VersionLike } from './request.js';
import type { CandidatesResult } from './solver.js';

export interface Shape {
  /** >= 1.12: allocations keyed by provider */
  dict: boolean;
  /** >= 1.34 */
  mappings: boolean;
  /** >= 1.17 */
  traits: boolean;
  /** >= 1.27: every inventory, not just the requested classes */
  allResources: boolean;
  /** >= 1.29 */
  tree: boolean;
}

export function shapeFor(v: VersionLike): Shape {
  return {
    dict: v.atLeast(1, 12),
    mappings: v.atLeast(1, 34),
    traits: v.atLeast(1, 17),
    allResources: v.atLeast(1, 27),
    tree: v.atLeast(1, 29),
  };
}

const q = JSON.stringify;
const fragments = new WeakMap<ProviderRecord, Map<string, string>>();

/** `"<uuid>":{...}` for provider_summaries; cached per record and shape */
export function summaryFragment(p: ProviderRecord, shape: Shape, requested: ReadonlySet<string>): string {
  const key = `${shape.traits ? 't' : ''}${shape.tree ? 'n' : ''}${shape.allResources ? '*' : [...requested].sort().join(',')}`;
  let m = fragments.get(p);
  if (!m) fragments.set(p, (m = new Map()));
  let s = m.get(key);
  if (s !== undefined) return s;
  const res: string[] = [];
  for (const [rc, inv] of Object.entries(p.inventories)) {
    if (!shape.allResources && !requested.has(rc)) continue;
    res.push(`${q(rc)}:{"capacity":${Math.trunc(capacity(inv))},"used":${Math.trunc(p.usages[rc] ?? 0)}}`);
  }
  s = `${q(p.uuid)}:{"resources":{${res.join(',')}}`;
  if (shape.traits) s += `,"traits":[${[...p.traits].sort().map((t) => q(t)).join(',')}]`;
  if (shape.tree) s += `,"parent_provider_uuid":${p.parent ? q(p.parent) : 'null'},"root_provider_uuid":${q(p.root)}`;
  s += '}';
  m.set(key, s);
  return s;
}

/**
 * Render the solver's answer. Allocations and mappings list groups in request order
 * (classes in request order within a group); amounts of one class on one provider
 * are added up.
 */
export function renderCandidates(res: CandidatesResult, req: CandidatesRequest, shape: Shape): string {
  const { slots, renderOrder } = res;
  const suffixes = req.groups.map((g) => g.suffix);
  // the common case: every slot on one provider -> a precomputed body around its uuid
  const totals = new Map<string, number>();
  for (const i of renderOrder) for (const [rc, n] of slots[i]!.amounts) totals.set(rc, (totals.get(rc) ?? 0) + n);
  const singleResources = `{${[...totals].map(([rc, n]) => `${q(rc)}:${n}`).join(',')}}`;
  const mappedSuffixes = [...new Set(renderOrder.map((i) => suffixes[slots[i]!.group]!))];

  const out: string[] = [];
  for (const c of res.candidates) {
    let single: ProviderRecord | undefined = c[0];
    for (let i = 1; i < c.length; i++) if (c[i] !== single) single = undefined;
    if (single) {
      const u = q(single.uuid);
      if (!shape.dict) {
        out.push(`{"allocations":[{"resource_provider":{"uuid":${u}},"resources":${singleResources}}]}`);
        continue;
      }
      let s = `{"allocations":{${u}:{"resources":${singleResources}}}`;
      if (shape.mappings) s += `,"mappings":{${mappedSuffixes.map((x) => `${q(x)}:[${u}]`).join(',')}}`;
      out.push(s + '}');
      continue;
    }
    const allocs = new Map<ProviderRecord, Map<string, number>>();
    const maps = new Map<string, ProviderRecord[]>();
    for (const i of renderOrder) {
      const p = c[i]!;
      const slot = slots[i]!;
      const sfx = suffixes[slot.group]!;
      let l = maps.get(sfx);
      if (!l) maps.set(sfx, (l = []));
      if (!l.includes(p)) l.push(p);
      if (!slot.amounts.length) continue;
      let a = allocs.get(p);
      if (!a) allocs.set(p, (a = new Map()));
      for (const [rc, n] of slot.amounts) a.set(rc, (a.get(rc) ?? 0) + n);
    }
    const resources = (a: Map<string, number>) => `{${[...a].map(([rc, n]) => `${q(rc)}:${n}`).join(',')}}`;
    if (!shape.dict) {
      const list = [...allocs].map(([p, a]) => `{"resource_provider":{"uuid":${q(p.uuid)}},"resources":${resources(a)}}`);
      out.push(`{"allocations":[${list.join(',')}]}`);
      continue;
    }
    let s = `{"allocations":{${[...allocs].map(([p, a]) => `${q(p.uuid)}:{"resources":${resources(a)}}`).join(',')}}`;
    if (shape.mappings) s += `,"mappings":{${[...maps].map(([x, ps]) => `${q(x)}:[${ps.map((p) => q(p.uuid)).join(',')}]`).join(',')}}`;
    out.push(s + '}');
  }
  const sums = res.summaries.map((p) => summaryFragment(p, shape, res.requestedResources));
  return `{"allocation_requests":[${out.join(',')}],"provider_summaries":{${sums.join(',')}}}`;
}
