import { describe, expect, it } from 'vitest';
import type { Problem } from '../../../functions/core/errors.js';
import { ask, buildForest, uuidOf, type ProviderSpec } from './forests.js';

/** upstream's TestWideTreeAllocationCandidateExplosion shape */
function wide(computes: number, pfs: number, vfs: number): ProviderSpec[] {
  const out: ProviderSpec[] = [];
  for (let i = 0; i < computes; i++) {
    out.push({ name: `compute${i}`, inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, DISK_GB: { total: 500 } } });
    for (let j = 0; j < pfs; j++) out.push({ name: `compute${i}:PF${j}`, parent: `compute${i}`, inv: { CUSTOM_VF: { total: vfs } } });
  }
  return out;
}
const wideQuery = (groups: number, limit?: number) =>
  'resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2&' +
  Array.from({ length: groups }, (_, i) => `resources${i}=CUSTOM_VF:1`).join('&') +
  '&group_policy=none' +
  (limit ? `&limit=${limit}` : '');

describe('wide trees: search, not a cartesian product', () => {
  it('2x8x8, 2 groups: all 128 (group pairs may share a PF)', () => {
    const r = ask(buildForest(wide(2, 8, 8)), wideQuery(2, 1000), '1.38');
    expect(r.res.candidates).toHaveLength(128);
  });
  it.each([
    [8, 8],
    [21, 8],
  ])('1 compute x %i PFs of 1 VF, %i groups, limit 1000: 1000 distinct valid candidates, few search nodes', (pfs, groups) => {
    const r = ask(buildForest(wide(1, pfs, 1)), wideQuery(groups, 1000), '1.38');
    expect(r.res.candidates).toHaveLength(1000);
    const keys = new Set<string>();
    for (const m of r.mappings) {
      const pfsUsed = Object.entries(m!)
        .filter(([k]) => k !== '')
        .map(([, v]) => v[0]);
      expect(new Set(pfsUsed).size).toBe(groups); // one VF each: capacity forces distinct PFs
      keys.add(JSON.stringify(m));
    }
    expect(keys.size).toBe(1000);
    expect(r.res.stats.nodes).toBeLessThan(20_000);
  });
  it('a limit smaller than the answer spreads over the trees (breadth-first over anchors)', () => {
    // 2 computes x 8 PFs x 8 VFs, 4 groups: 4096 candidates per compute; limit 1000 -> 500 each
    const forest = buildForest(wide(2, 8, 8));
    const r = ask(forest, wideQuery(4, 1000), '1.38');
    expect(r.res.candidates).toHaveLength(1000);
    const roots = r.res.candidates.map((c) => c[0]!.root);
    expect(roots.filter((x) => x === uuidOf('compute0'))).toHaveLength(500);
    expect(roots.filter((x) => x === uuidOf('compute1'))).toHaveLength(500);
    expect(new Set(roots.slice(0, 2)).size).toBe(2);
  });
  it('an infeasible wide request fails at once instead of exploring permutations', () => {
    const r = ask(buildForest(wide(1, 21, 1)), wideQuery(22), '1.38');
    expect(r.res.candidates).toEqual([]);
    expect(r.res.stats.nodes).toBe(0);
  });
});

describe('sharing providers', () => {
  const specs: ProviderSpec[] = [
    { name: 'cn1', inv: { VCPU: { total: 8 } }, aggs: [uuidOf('agg')] },
    { name: 'cn2', inv: { VCPU: { total: 8 } } },
    { name: 'ss', inv: { SRIOV_NET_VF: { total: 8 } }, traits: ['MISC_SHARES_VIA_AGGREGATE'], aggs: [uuidOf('agg')] },
  ];
  it('an unnumbered group served only by a sharing provider combines with every tree it shares with', () => {
    // Placement 8.0.0 keeps such a request for one arbitrary anchor only (set de-duplication);
    // the API reference says any tree associated with the sharing provider qualifies.
    expect(ask(buildForest(specs), 'resources=SRIOV_NET_VF:1&resources1=VCPU:1').candidates).toEqual(['cn1(VCPU:1) + ss(SRIOV_NET_VF:1)']);
  });
  it('and alone it is reported once, whatever the number of anchors', () => {
    expect(ask(buildForest(specs), 'resources=SRIOV_NET_VF:1').candidates).toEqual(['ss(SRIOV_NET_VF:1)']);
  });
  it('isolate never inflates amounts the unnumbered group and a granular group take from one provider', () => {
    const f = buildForest([
      { name: 'cn', inv: { VCPU: { total: 8 } } },
      { name: 'pf1', parent: 'cn', inv: { SRIOV_NET_VF: { total: 4 } } },
      { name: 'pf2', parent: 'cn', inv: { SRIOV_NET_VF: { total: 4 } } },
    ]);
    const r = ask(f, 'resources=VCPU:1,SRIOV_NET_VF:2&resources1=SRIOV_NET_VF:2&resources2=SRIOV_NET_VF:1&group_policy=isolate');
    expect(r.candidates).toEqual(
      [
        'cn(VCPU:1) + pf1(SRIOV_NET_VF:2) + pf2(SRIOV_NET_VF:3)',
        'cn(VCPU:1) + pf1(SRIOV_NET_VF:3) + pf2(SRIOV_NET_VF:2)',
        'cn(VCPU:1) + pf1(SRIOV_NET_VF:4) + pf2(SRIOV_NET_VF:1)',
        'cn(VCPU:1) + pf1(SRIOV_NET_VF:1) + pf2(SRIOV_NET_VF:4)',
      ].sort(),
    );
  });
});

describe("unknown names and Placement's evaluation order", () => {
  const forest = buildForest([{ name: 'cn', inv: { VCPU: { total: 8 } }, traits: ['HW_CPU_X86_AVX'] }]);
  const opts = { missingResourceClasses: new Set(['CUSTOM_NOPE']), missingTraits: new Set(['CUSTOM_BAD']) };
  const refused = (qs: string) => {
    try {
      ask(forest, qs, '1.39', opts);
    } catch (e) {
      return (e as Problem).detail;
    }
    return undefined;
  };
  it('reports an unknown class or trait', () => {
    expect(refused('resources=CUSTOM_NOPE:1')).toBe('Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.');
    expect(refused('resources=VCPU:1&required=CUSTOM_BAD')).toBe('No such trait(s): CUSTOM_BAD.');
    expect(refused('resources=VCPU:1&required=!CUSTOM_BAD')).toBe('No such trait(s): CUSTOM_BAD.');
    expect(refused('resources=VCPU:1&root_required=CUSTOM_BAD')).toBe('No such trait(s): CUSTOM_BAD.');
  });
  it('classes of a group before its traits, groups in order', () => {
    expect(refused('resources=CUSTOM_NOPE:1&required=CUSTOM_BAD')).toContain('No such resource class');
    expect(refused('resources1=VCPU:1&required1=CUSTOM_BAD&resources2=CUSTOM_NOPE:1&group_policy=none')).toBe('No such trait(s): CUSTOM_BAD.');
  });
  it('answers empty where Placement gives up before looking at the name', () => {
    // an earlier group without capacity, an aggregate nobody is in, roots without the root trait
    expect(refused('resources1=VCPU:100&resources2=CUSTOM_NOPE:1&group_policy=none')).toBeUndefined();
    expect(refused(`resources=VCPU:1&member_of=${uuidOf('nobody')}&required=CUSTOM_BAD`)).toBeUndefined();
    expect(refused('resources=CUSTOM_NOPE:1&root_required=HW_CPU_X86_SSE')).toBeUndefined();
    expect(ask(forest, 'resources1=VCPU:100&resources2=CUSTOM_NOPE:1&group_policy=none', '1.39', opts).candidates).toEqual([]);
  });
});
