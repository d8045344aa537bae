import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Forest } from '../../../functions/core/placement/forest.js';
import {
  filterProviders,
  hasCapacity,
  matchesAggregates,
  matchesTraits,
  type ProviderFilters,
} from '../../../functions/core/placement/provider-filters.js';
import { INVENTORY_DEFAULTS, type ProviderRecord } from '../../../functions/core/placement/model.js';

const CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB'];
const TRAITS = ['T1', 'T2', 'T3'];
const AGGS = ['a1', 'a2', 'a3'];

/** A forest of up to 12 providers in trees, with random inventories, usages, traits, aggregates. */
const forestArb = fc
  .array(
    fc.record({
      parentPick: fc.nat(),
      hasParent: fc.boolean(),
      inv: fc.dictionary(
        fc.constantFrom(...CLASSES),
        fc.record({ total: fc.integer({ min: 1, max: 8 }), step: fc.constantFrom(1, 2), used: fc.integer({ min: 0, max: 8 }) }),
      ),
      traits: fc.subarray(TRAITS),
      aggs: fc.subarray(AGGS),
    }),
    { maxLength: 12 },
  )
  .map((specs) => {
    const recs: ProviderRecord[] = [];
    specs.forEach((s, i) => {
      const uuid = `u${i}`;
      const parent = s.hasParent && recs.length ? recs[s.parentPick % recs.length]! : undefined;
      recs.push({
        uuid,
        name: `n${i % 5}`,
        generation: 0,
        parent: parent?.uuid,
        root: parent ? parent.root : uuid,
        inventories: Object.fromEntries(Object.entries(s.inv).map(([rc, v]) => [rc, { ...INVENTORY_DEFAULTS, total: v.total, step_size: v.step }])),
        invVersion: 0,
        usages: Object.fromEntries(Object.entries(s.inv).map(([rc, v]) => [rc, Math.min(v.used, v.total)])),
        traits: s.traits,
        aggregates: s.aggs,
        children: 0,
        allocationCount: 0,
        createdAt: '2020-01-01T00:00:00Z',
        updatedAt: '2020-01-01T00:00:00Z',
        seq: 1000 - i * 7, // creation order is not insertion order
      });
    });
    return recs;
  });

const anySet = <T>(xs: T[]) => fc.subarray(xs, { minLength: 1 }).map((a) => new Set(a));
/** Each filter present independently; the narrowing ones (name, uuid, in_tree) only now and then. */
const present = <T>(a: fc.Arbitrary<T>, weight: number) =>
  fc.oneof({ weight: 4 - weight, arbitrary: fc.constant(undefined) }, { weight, arbitrary: a });
const rare = <T>(a: fc.Arbitrary<T>) => present(a, 1);
const often = <T>(a: fc.Arbitrary<T>) => present(a, 2);
const filtersArb: fc.Arbitrary<ProviderFilters> = fc
  .record({
    name: rare(fc.constantFrom('n0', 'n1', 'n9')),
    uuid: rare(fc.constantFrom('u0', 'u3', 'zz')),
    inTree: rare(fc.constantFrom('u0', 'u2', 'u5', 'zz')),
    traits: often(
      fc.record({ required: fc.array(anySet(TRAITS), { maxLength: 2 }), forbidden: fc.subarray(TRAITS, { maxLength: 1 }).map((a) => new Set(a)) }),
    ),
    aggregates: often(
      fc.record({ required: fc.array(anySet(AGGS), { maxLength: 2 }), forbidden: fc.subarray(AGGS, { maxLength: 1 }).map((a) => new Set(a)) }),
    ),
    resources: often(fc.dictionary(fc.constantFrom(...CLASSES), fc.integer({ min: 1, max: 4 }), { minKeys: 1 })),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ProviderFilters);

/** The obvious reading of get_all_by_filters: scan everything, in creation order. */
function naive(recs: ProviderRecord[], f: ProviderFilters): string[] {
  const byUuid = new Map(recs.map((p) => [p.uuid, p]));
  const anchor = f.inTree !== undefined ? byUuid.get(f.inTree) : undefined;
  if (f.inTree !== undefined && !anchor) return [];
  return [...recs]
    .sort((a, b) => a.seq - b.seq)
    .filter(
      (p) =>
        (f.name === undefined || p.name === f.name) &&
        (f.uuid === undefined || p.uuid === f.uuid) &&
        (!anchor || p.root === anchor.root) &&
        (!f.traits || matchesTraits(p, f.traits)) &&
        (!f.aggregates || matchesAggregates(p.aggregates, f.aggregates)) &&
        Object.entries(f.resources ?? {}).every(([rc, n]) => hasCapacity(p, rc, n)),
    )
    .map((p) => p.uuid);
}

describe('provider list filters', () => {
  it('index-narrowed filtering equals a full scan, in creation order', () => {
    fc.assert(
      fc.property(forestArb, filtersArb, (recs, f) => {
        const forest = new Forest();
        for (const p of recs) forest.put(p);
        expect(filterProviders(forest, f).map((p) => p.uuid)).toEqual(naive(recs, f));
      }),
      { numRuns: 1500 },
    );
  });

  it('checks capacity left, min/max unit and step size', () => {
    const p = {
      inventories: { VCPU: { ...INVENTORY_DEFAULTS, total: 10, reserved: 2, allocation_ratio: 2, step_size: 2, max_unit: 8 } },
      usages: { VCPU: 10 },
    } as unknown as ProviderRecord;
    expect(hasCapacity(p, 'VCPU', 6)).toBe(true); // (10-2)*2 = 16 >= 10 + 6
    expect(hasCapacity(p, 'VCPU', 8)).toBe(false); // 18 > 16
    expect(hasCapacity(p, 'VCPU', 3)).toBe(false); // step 2
    expect(hasCapacity(p, 'DISK_GB', 1)).toBe(false);
    expect(hasCapacity(p, 'constructor', 1)).toBe(false);
  });
});
