import { describe, expect, it } from 'vitest';
import { addedClasses } from '../../../functions/core/placement/inventory.js';
import { newProviderRecord, type ProviderRecord } from '../../../functions/core/placement/model.js';
import {
  addedAggregates,
  diffRefs,
  patched,
  patchedAspect,
  planAggregates,
  planInventories,
  planTraits,
  type ProviderPatch,
} from '../../../functions/core/placement/provider-patch.js';

const inv = (total: number) => ({ total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: 1 });

function provider(over: Partial<ProviderRecord> = {}): ProviderRecord {
  const base = newProviderRecord({ uuid: 'rp-1', name: 'one', root: 'rp-1', seq: 1, at: '2026-01-01T00:00:00.000Z' });
  return { ...base, generation: 4, invVersion: 2, ...over };
}

function asPatch(p: unknown): ProviderPatch {
  expect(p).not.toBeNull();
  expect(p).not.toHaveProperty('error');
  return p as ProviderPatch;
}

describe('provider patches (core/placement/provider-patch.ts)', () => {
  it('counts a reference up for each name gained and down for each lost', () => {
    expect(diffRefs('trait', ['A', 'B'], ['B', 'C'])).toEqual([
      { kind: 'trait', name: 'C', delta: 1 },
      { kind: 'trait', name: 'A', delta: -1 },
    ]);
    expect(diffRefs('resource_class', ['X'], ['X'])).toEqual([]);
  });

  it('plans an inventory replacement: generation and invVersion move, classes gone must stay unused', () => {
    const cur = provider({ inventories: { VCPU: inv(8), CUSTOM_GONE: inv(2) } });
    const next = { VCPU: inv(16), CUSTOM_NEW: inv(1) };
    expect(addedClasses(cur.inventories, next)).toEqual(['CUSTOM_NEW']);
    const p = asPatch(planInventories(cur, next, []));
    expect(p).toMatchObject({ set: { inventories: next }, bumpGeneration: true, bumpInvVersion: true, mustBeUnused: ['CUSTOM_GONE'], firstSeen: [] });
    expect(p.refs).toEqual([
      { kind: 'resource_class', name: 'CUSTOM_NEW', delta: 1 },
      { kind: 'resource_class', name: 'CUSTOM_GONE', delta: -1 },
    ]);
  });

  it('refuses an unknown class before looking at usage, and a class in use that would go away', () => {
    const cur = provider({ inventories: { VCPU: inv(8) }, usages: { VCPU: 3 } });
    expect(planInventories(cur, { CUSTOM_X: inv(1) }, ['CUSTOM_X'])).toEqual({ error: 'unknown_class', name: 'CUSTOM_X' });
    expect(planInventories(cur, {}, [])).toEqual({ error: 'in_use', classes: ['VCPU'] });
    // a class with usage 0 may go
    expect(asPatch(planInventories(provider({ inventories: { VCPU: inv(8) }, usages: { VCPU: 0 } }), {}, [])).mustBeUnused).toEqual(['VCPU']);
  });

  it('plans nothing for unchanged traits (the generation stays) and refuses missing ones', () => {
    const cur = provider({ traits: ['HW_CPU_X86_AVX', 'CUSTOM_A'] });
    expect(planTraits(cur, ['CUSTOM_A', 'HW_CPU_X86_AVX'], [])).toBeNull();
    expect(planTraits(cur, ['CUSTOM_B'], ['CUSTOM_B'])).toEqual({ error: 'unknown_traits', names: ['CUSTOM_B'] });
    const p = asPatch(planTraits(cur, ['CUSTOM_B', 'CUSTOM_B'], []));
    expect(p.set).toEqual({ traits: ['CUSTOM_B'] });
    expect(p.bumpGeneration).toBe(true);
    expect(p.bumpInvVersion).toBe(false);
  });

  it('plans aggregates by microversion: before 1.19 an unchanged list is nothing, from 1.19 it bumps the generation', () => {
    const cur = provider({ aggregates: ['a1', 'a2'] });
    expect(planAggregates(cur, ['a1', 'a2'], false, new Set())).toBeNull();
    expect(asPatch(planAggregates(cur, ['a1', 'a2'], true, new Set()))).toMatchObject({ bumpGeneration: true, firstSeen: [] });
    // the same members in another order is a change (upstream answers with the list it was sent)
    expect(planAggregates(cur, ['a2', 'a1'], false, new Set())).not.toBeNull();
  });

  it('records only aggregates neither the provider nor the table has seen, in the request order', () => {
    const cur = provider({ aggregates: ['a1'] });
    expect(addedAggregates(cur, ['a3', 'a1', 'a2'])).toEqual(['a3', 'a2']);
    const p = asPatch(planAggregates(cur, ['a3', 'a1', 'a2'], false, new Set(['a2'])));
    expect(p.firstSeen).toEqual(['a3']);
    expect(p.bumpGeneration).toBe(false);
  });

  it('gives the provider as written and what of it a manager owns', () => {
    const cur = provider({ inventories: { VCPU: inv(8) }, traits: ['CUSTOM_A'] });
    const p = asPatch(planInventories(cur, { VCPU: inv(9) }, []));
    const after = patched(cur, p, '2026-02-02T00:00:00.000Z');
    expect(after).toMatchObject({ generation: 5, invVersion: 3, updatedAt: '2026-02-02T00:00:00.000Z', inventories: { VCPU: inv(9) } });
    expect(patchedAspect(cur, p)).toBe('inventory');
    const same = asPatch(planInventories(cur, { VCPU: inv(8) }, []));
    expect(patchedAspect(cur, same)).toBeUndefined();
    const agg = asPatch(planAggregates(cur, [], true, new Set()));
    expect(patched(cur, agg, 'later')).toMatchObject({ generation: 5, invVersion: 2, aggregates: [] });
    expect(patchedAspect(cur, agg)).toBeUndefined();
    const pre119 = asPatch(planAggregates(provider({ aggregates: ['a'] }), ['b'], false, new Set()));
    expect(patched(provider({ aggregates: ['a'] }), pre119, 'later')).toMatchObject({ generation: 4, updatedAt: '2026-01-01T00:00:00.000Z' });
    expect(patchedAspect(provider({ aggregates: ['a'] }), pre119)).toBe('aggregates');
  });
});
