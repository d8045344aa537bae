/** Small in-memory forests and requests for the solver's unit and property tests. */
import fc from 'fast-check';
import { Forest } from '../../../functions/core/placement/forest.js';
import { INVENTORY_DEFAULTS, type Inventory, type ProviderRecord } from '../../../functions/core/placement/model.js';
import type { CandidatesRequest, RequestGroup } from '../../../functions/core/placement/candidates/request.js';
import { newGroup, parseCandidatesQuery } from '../../../functions/core/placement/candidates/request.js';
import { solveCandidates, type CandidatesResult, type SolveOptions } from '../../../functions/core/placement/candidates/solver.js';
import { renderCandidates, shapeFor } from '../../../functions/core/placement/candidates/render.js';
import { RequestVersion } from '../../../functions/core/microversion.js';
import { parseQuery } from '../../../functions/http/types.js';

export interface ProviderSpec {
  name: string;
  parent?: string;
  inv?: Record<string, Partial<Inventory> & { total: number }>;
  used?: Record<string, number>;
  traits?: string[];
  aggs?: string[];
}

/** deterministic uuid from a name, so failures read well */
export function uuidOf(name: string): string {
  let h = 0;
  for (const ch of name) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  const hex = (h.toString(16) + Buffer.from(name).toString('hex')).padEnd(32, '0').slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function buildForest(specs: ProviderSpec[]): Forest {
  const f = new Forest();
  const byName = new Map<string, ProviderRecord>();
  specs.forEach((s, i) => {
    const parent = s.parent ? byName.get(s.parent) : undefined;
    const uuid = uuidOf(s.name);
    const inventories: Record<string, Inventory> = {};
    for (const [rc, inv] of Object.entries(s.inv ?? {})) inventories[rc] = { ...INVENTORY_DEFAULTS, max_unit: inv.total, ...inv };
    const rec: ProviderRecord = {
      uuid,
      name: s.name,
      generation: 1,
      parent: parent?.uuid,
      root: parent ? parent.root : uuid,
      inventories,
      invVersion: 1,
      usages: { ...(s.used ?? {}) },
      traits: [...(s.traits ?? [])],
      aggregates: [...(s.aggs ?? [])],
      children: 0,
      allocationCount: 0,
      createdAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-01-01T00:00:00.000Z',
      seq: i + 1,
    };
    byName.set(s.name, rec);
    if (parent) {
      // the store keeps a parent's child count exact; mirror it (a new record, as the store would)
      const updated = { ...parent, children: parent.children + 1 };
      byName.set(parent.name, updated);
      f.put(updated);
    }
    f.put(rec);
  });
  return f;
}

export function group(suffix: string, g: Partial<Omit<RequestGroup, 'suffix' | 'useSameProvider'>> = {}): RequestGroup {
  return { ...newGroup(suffix), ...g };
}

export function request(groups: RequestGroup[], wide: Partial<Omit<CandidatesRequest, 'groups'>> = {}): CandidatesRequest {
  return { groups, sameSubtrees: [], nestedAware: true, ...wide };
}

// ------------------------------------------------------------------ arbitraries

const RCS = ['VCPU', 'DISK_GB', 'CUSTOM_VF'];
const TRAITS = ['HW_CPU_X86_AVX', 'HW_CPU_X86_SSE', 'CUSTOM_FOO'];
const AGGS = [uuidOf('aggA'), uuidOf('aggB'), uuidOf('aggC')];
export const SHARES = 'MISC_SHARES_VIA_AGGREGATE';

/** mostly roomy inventories (so requests often succeed), sometimes tight or odd */
const invArb = fc.record({
  total: fc.integer({ min: 1, max: 6 }),
  reserved: fc.constantFrom(0, 0, 0, 1),
  min_unit: fc.constantFrom(1, 1, 1, 2),
  max_unit: fc.constantFrom(6, 6, 6, 1, 2, 3),
  step_size: fc.constantFrom(1, 1, 1, 2),
  allocation_ratio: fc.constantFrom(1, 1, 1.5),
});

const providerArb = fc.record({
  inv: fc.dictionary(fc.constantFrom(...RCS), invArb, { maxKeys: 3 }),
  usedFrac: fc.constantFrom(0, 0, 0, 1, 2, 3),
  traits: fc.subarray(TRAITS),
  aggs: fc.subarray(AGGS, { maxLength: 2 }),
});

type GenProvider = typeof providerArb extends fc.Arbitrary<infer T> ? T : never;

/** 1-3 trees of depth <= 3 plus 0-2 sharing providers (some of them nested) */
export const forestArb = fc
  .record({
    trees: fc.array(
      fc.record({
        root: providerArb,
        kids: fc.array(fc.record({ p: providerArb, kids: fc.array(providerArb, { maxLength: 2 }) }), { maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    sharing: fc.array(fc.record({ p: providerArb, nestedUnder: fc.nat() }), { maxLength: 2 }),
  })
  .map(({ trees, sharing }) => {
    const specs: ProviderSpec[] = [];
    const mk = (name: string, p: GenProvider, parent?: string, extraTraits: string[] = []): ProviderSpec => {
      const used: Record<string, number> = {};
      for (const [rc, inv] of Object.entries(p.inv)) used[rc] = Math.min(inv.total, Math.floor((inv.total * p.usedFrac) / 4));
      return { name, parent, inv: p.inv, used, traits: [...p.traits, ...extraTraits], aggs: p.aggs };
    };
    trees.forEach((t, i) => {
      specs.push(mk(`cn${i}`, t.root));
      t.kids.forEach((k, j) => {
        specs.push(mk(`cn${i}_${j}`, k.p, `cn${i}`));
        for (const [m, g] of k.kids.entries()) specs.push(mk(`cn${i}_${j}_${m}`, g, `cn${i}_${j}`));
      });
    });
    sharing.forEach((s, i) => {
      const parents = specs.filter((x) => !x.parent).map((x) => x.name);
      const parent = s.nestedUnder % 4 === 0 ? parents[s.nestedUnder % parents.length] : undefined;
      specs.push(mk(`ss${i}`, s.p, parent, [SHARES]));
    });
    return specs;
  });

/** the names and amounts random requests draw from */
export interface Vocabulary {
  rcs: string[];
  traits: string[];
  aggs: string[];
  amounts: number[];
}

export const DEFAULT_VOCABULARY: Vocabulary = { rcs: RCS, traits: TRAITS, aggs: AGGS, amounts: [1, 1, 2, 3] };

const resourcesArb = (v: Vocabulary) =>
  fc
    .subarray(v.rcs, { minLength: 1, maxLength: Math.min(2, v.rcs.length) })
    .chain((rcs) => fc.tuple(...rcs.map((rc) => fc.constantFrom(...v.amounts).map((n) => [rc, n] as [string, number]))));

const traitsArb = (v: Vocabulary) =>
  fc.record({
    required: fc.array(fc.subarray(v.traits, { minLength: 1, maxLength: Math.min(2, v.traits.length) }), { maxLength: 1 }),
    forbidden: fc.subarray(v.traits, { maxLength: Math.min(1, v.traits.length) }),
  });
const aggsArb = (v: Vocabulary) =>
  fc.record({
    memberOf: fc.array(fc.subarray(v.aggs, { minLength: 1, maxLength: Math.min(2, v.aggs.length) }), { maxLength: 1 }),
    forbidden: fc.subarray(v.aggs, { maxLength: Math.min(1, v.aggs.length) }),
  });

/** `arb` one time in `1 + none`, null otherwise */
const sometimes = <T>(arb: fc.Arbitrary<T>, none: number) => fc.oneof({ arbitrary: fc.constant(null), weight: none }, { arbitrary: arb, weight: 1 });

const groupArb = (v: Vocabulary, suffix: string, resourceless: boolean) =>
  fc
    .record({
      resources: resourceless ? fc.constant([] as Array<[string, number]>) : resourcesArb(v),
      // a resourceless group must filter on something (or it matches nothing)
      traits: !v.traits.length
        ? fc.constant(null)
        : resourceless
          ? traitsArb(v).map((t) => ({ ...t, required: t.required.length ? t.required : [[v.traits[0]!]] }))
          : sometimes(traitsArb(v), 2),
      aggs: v.aggs.length ? sometimes(aggsArb(v), 2) : fc.constant(null),
      inTree: sometimes(fc.nat(), 5),
    })
    .map((g) => ({ suffix, ...g }));

/** a request over the forest: maybe the unnumbered group, 0-3 granular groups (1.36 features included) */
export const requestArb = (specs: ProviderSpec[], v: Vocabulary = DEFAULT_VOCABULARY) =>
  fc
    .record({
      unnumbered: fc.boolean(),
      granular: fc.array(fc.boolean(), { maxLength: 3 }),
      isolate: fc.boolean(),
      subtree: fc.boolean(),
      subtreeAll: fc.boolean(),
      rootRequired: sometimes(
        fc.record({
          required: fc.subarray(v.traits, { maxLength: Math.min(1, v.traits.length) }),
          forbidden: fc.subarray(v.traits, { maxLength: Math.min(1, v.traits.length) }),
        }),
        4,
      ),
      nestedAware: fc.boolean(),
    })
    .chain((shape) => {
      const suffixes = shape.granular.map((_, i) => `_${i}`);
      // resourceless granular groups are only legal in same_subtree (1.36)
      const resourceless = suffixes.map((_, i) => shape.subtree && shape.granular[i]! && i > 0);
      const arbs = [
        ...(shape.unnumbered || !suffixes.length ? [groupArb(v, '', false)] : []),
        ...suffixes.map((s, i) => groupArb(v, s, resourceless[i]!)),
      ];
      return fc.tuple(...arbs).map((gs) => {
        const groups: RequestGroup[] = gs.map((g) =>
          group(g.suffix, {
            resources: g.resources,
            requiredTraits: (g.traits?.required ?? []).map((s) => new Set(s)),
            forbiddenTraits: new Set(
              (g.traits?.forbidden ?? []).filter((t) => !(g.traits?.required ?? []).some((any) => any.length === 1 && any[0] === t)),
            ),
            memberOf: (g.aggs?.memberOf ?? []).map((s) => new Set(s)),
            forbiddenAggs: new Set(g.aggs?.forbidden ?? []),
            inTree: g.inTree !== null ? uuidOf(specs[g.inTree % specs.length]!.name) : undefined,
          }),
        );
        // same_subtree: every resourceless group, plus all or the first of the others
        const named = suffixes.filter((_, i) => resourceless[i] || shape.subtreeAll || i === 0);
        const rr = shape.rootRequired;
        return request(groups, {
          groupPolicy: shape.isolate ? 'isolate' : 'none',
          sameSubtrees: shape.subtree && named.length ? [named] : [],
          rootRequired:
            rr && (rr.required.length || rr.forbidden.length)
              ? { required: rr.required, forbidden: rr.forbidden.filter((t) => !rr.required.includes(t)) }
              : undefined,
          nestedAware: shape.nestedAware,
        });
      });
    });

// ------------------------------------------------------------------ query helpers

export function version(v: string): RequestVersion {
  const [major, minor] = v.split('.').map(Number) as [number, number];
  return new RequestVersion(major, minor);
}

/** uuid -> name for readable assertions */
export function namesOf(forest: Forest): Map<string, string> {
  return new Map([...forest.providers.values()].map((p) => [p.uuid, p.name]));
}

/**
 * Parse, solve and render a query string; candidates come back as sorted readable
 * strings like "CN1(DISK_GB:50) + NUMA1_1(VCPU:1)" (providers and classes sorted), plus the
 * parsed response body.
 */
export function ask(forest: Forest, qs: string, v = '1.39', opts: SolveOptions = {}) {
  const ver = version(v);
  const req = parseCandidatesQuery(parseQuery(qs), ver);
  const res: CandidatesResult = solveCandidates(forest, req, opts);
  const body = JSON.parse(renderCandidates(res, req, shapeFor(ver)));
  const names = namesOf(forest);
  const readable = (body.allocation_requests as any[]).map((ar) => {
    const entries: Array<[string, Record<string, number>]> = Array.isArray(ar.allocations)
      ? ar.allocations.map((a: any) => [a.resource_provider.uuid, a.resources])
      : Object.entries(ar.allocations).map(([u, a]: [string, any]) => [u, a.resources]);
    return entries
      .map(
        ([u, r]) =>
          `${names.get(u)}(${Object.entries(r)
            .sort()
            .map(([rc, n]) => `${rc}:${n}`)
            .join(',')})`,
      )
      .sort()
      .join(' + ');
  });
  const mappings = (body.allocation_requests as any[]).map((ar) =>
    ar.mappings
      ? Object.fromEntries(Object.entries(ar.mappings as Record<string, string[]>).map(([k, us]) => [k, us.map((u) => names.get(u))]))
      : undefined,
  );
  const summaries = Object.keys(body.provider_summaries).map((u) => names.get(u)!);
  return { body, res, candidates: readable.slice().sort(), mappings, summaries };
}
