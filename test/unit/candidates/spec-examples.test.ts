/**
 * The worked examples of Placement's "Modeling with Provider Trees" document
 * (/work/shared/spec/placement/provider-tree.rst) and the API reference, for the
 * features the conformance files do not cover: nested trees with sharing, member_of
 * spanning, traits on trees, granular isolate/none, in_tree<N>, root_required,
 * same_subtree (with resourceless groups), mappings and any-traits.
 */
import { describe, expect, it } from 'vitest';
import { ask, buildForest, uuidOf, type ProviderSpec } from './forests.js';

const AGG_A = uuidOf('aggA');
const AGG_B = uuidOf('aggB');
const SHARES = 'MISC_SHARES_VIA_AGGREGATE';

describe('provider-tree.rst: sharing providers and aggregates on nested trees', () => {
  // CN1 [A] { NUMA1_1 VCPU, NUMA1_2 VCPU }, MEMORY_MB, DISK_GB; CN2 [A] { NUMA2_1 [B] VCPU, NUMA2_2 VCPU },
  // MEMORY_MB, DISK_GB; SS1 [A] DISK_GB sharing. Aggregate B is on CN1 and on NUMA2_1.
  const specs: ProviderSpec[] = [
    { name: 'CN1', inv: { MEMORY_MB: { total: 1024 }, DISK_GB: { total: 1000 } }, aggs: [AGG_A, AGG_B] },
    { name: 'NUMA1_1', parent: 'CN1', inv: { VCPU: { total: 4 } } },
    { name: 'NUMA1_2', parent: 'CN1', inv: { VCPU: { total: 4 } } },
    { name: 'CN2', inv: { MEMORY_MB: { total: 1024 }, DISK_GB: { total: 1000 } }, aggs: [AGG_A] },
    { name: 'NUMA2_1', parent: 'CN2', inv: { VCPU: { total: 4 } }, aggs: [AGG_B] },
    { name: 'NUMA2_2', parent: 'CN2', inv: { VCPU: { total: 4 } } },
    { name: 'SS1', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES], aggs: [AGG_A] },
  ];
  const forest = buildForest(specs);
  const all8 = [
    'CN1(DISK_GB:500,MEMORY_MB:512) + NUMA1_1(VCPU:1)',
    'CN1(DISK_GB:500,MEMORY_MB:512) + NUMA1_2(VCPU:1)',
    'CN1(MEMORY_MB:512) + NUMA1_1(VCPU:1) + SS1(DISK_GB:500)',
    'CN1(MEMORY_MB:512) + NUMA1_2(VCPU:1) + SS1(DISK_GB:500)',
    'CN2(DISK_GB:500,MEMORY_MB:512) + NUMA2_1(VCPU:1)',
    'CN2(DISK_GB:500,MEMORY_MB:512) + NUMA2_2(VCPU:1)',
    'CN2(MEMORY_MB:512) + NUMA2_1(VCPU:1) + SS1(DISK_GB:500)',
    'CN2(MEMORY_MB:512) + NUMA2_2(VCPU:1) + SS1(DISK_GB:500)',
  ];

  it('combines a tree with the sharing provider its root shares an aggregate with', () => {
    expect(ask(forest, 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500').candidates).toEqual(all8);
  });

  it('an aggregate on a root spans its tree (member_of=A: all eight)', () => {
    expect(ask(forest, `resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=${AGG_A}`).candidates).toEqual(all8);
  });

  it('an aggregate on a non-root provider does not span the tree (member_of=B: CN1 only)', () => {
    expect(ask(forest, `resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=${AGG_B}`).candidates).toEqual([
      'CN1(DISK_GB:500,MEMORY_MB:512) + NUMA1_1(VCPU:1)',
      'CN1(DISK_GB:500,MEMORY_MB:512) + NUMA1_2(VCPU:1)',
    ]);
  });

  it('a forbidden aggregate on a root excludes its whole tree, but member_ofN does not span', () => {
    const r = ask(forest, `resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=!${AGG_B}`);
    // CN1 is in B: its whole tree goes; NUMA2_1 is in B itself
    expect(r.candidates).toEqual(['CN2(DISK_GB:500,MEMORY_MB:512) + NUMA2_2(VCPU:1)', 'CN2(MEMORY_MB:512) + NUMA2_2(VCPU:1) + SS1(DISK_GB:500)']);
    const g = ask(forest, `resources1=VCPU:1&member_of1=!${AGG_B}&resources2=MEMORY_MB:512&group_policy=none`);
    // granular: only NUMA2_1 (in B itself) is excluded; CN1 being in B does not matter
    expect(g.candidates).toEqual([
      'CN1(MEMORY_MB:512) + NUMA1_1(VCPU:1)',
      'CN1(MEMORY_MB:512) + NUMA1_2(VCPU:1)',
      'CN2(MEMORY_MB:512) + NUMA2_2(VCPU:1)',
    ]);
  });

  it('summaries cover every provider of the trees involved (1.29), only the used ones before', () => {
    const r = ask(forest, `resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=${AGG_B}`);
    expect(r.summaries.sort()).toEqual(['CN1', 'NUMA1_1', 'NUMA1_2']);
    expect(r.body.provider_summaries[uuidOf('NUMA1_1')]).toEqual({
      resources: { VCPU: { capacity: 4, used: 0 } },
      traits: [],
      parent_provider_uuid: uuidOf('CN1'),
      root_provider_uuid: uuidOf('CN1'),
    });
    // before 1.29 a request never combines providers of one tree
    expect(ask(forest, 'resources=VCPU:1,MEMORY_MB:512', '1.28').candidates).toEqual([]);
    const old = ask(forest, 'resources=VCPU:1', '1.28');
    expect(old.candidates).toHaveLength(4);
    expect(old.summaries.sort()).toEqual(['NUMA1_1', 'NUMA1_2', 'NUMA2_1', 'NUMA2_2']);
  });
});

describe('provider-tree.rst: traits never span providers', () => {
  const forest = buildForest([
    { name: 'CN1', inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 1024 }, DISK_GB: { total: 1000 } } },
    { name: 'NIC1_1', parent: 'CN1', inv: { SRIOV_NET_VF: { total: 8 } }, traits: ['HW_NIC_ACCEL_SSL'] },
    { name: 'NIC1_2', parent: 'CN1', inv: { SRIOV_NET_VF: { total: 8 } } },
  ]);
  const base = 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500,SRIOV_NET_VF:2';

  it('required picks the provider with the trait among those giving resources', () => {
    expect(ask(forest, `${base}&required=HW_NIC_ACCEL_SSL`).candidates).toEqual(['CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:2)']);
  });
  it('a forbidden trait excludes the provider that has it', () => {
    expect(ask(forest, `${base}&required=!HW_NIC_ACCEL_SSL`).candidates).toEqual(['CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_2(SRIOV_NET_VF:2)']);
  });
  it('unrequested traits are ignored', () => {
    expect(ask(forest, base).candidates).toHaveLength(2);
  });
  it('any-traits (1.39): in:T1,T2 and repeated required are ANDed', () => {
    expect(ask(forest, `${base}&required=in:HW_NIC_ACCEL_SSL,CUSTOM_NOPE`).candidates).toEqual([
      'CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:2)',
    ]);
    expect(ask(forest, `${base}&required=in:HW_NIC_ACCEL_SSL,CUSTOM_NOPE&required=!HW_NIC_ACCEL_SSL`).candidates).toEqual([]);
    expect(ask(forest, `resources1=SRIOV_NET_VF:1&required1=in:HW_NIC_ACCEL_SSL,HW_CPU_X86_AVX`).candidates).toEqual(['NIC1_1(SRIOV_NET_VF:1)']);
  });
  it('granular groups: isolate puts them on different providers, none allows sharing one', () => {
    const q = 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL&resources2=SRIOV_NET_VF:1';
    expect(ask(forest, `${q}&group_policy=isolate`).candidates).toEqual([
      'CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:1) + NIC1_2(SRIOV_NET_VF:1)',
    ]);
    expect(ask(forest, `${q}&group_policy=none`).candidates).toEqual([
      'CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:1) + NIC1_2(SRIOV_NET_VF:1)',
      'CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1) + NIC1_1(SRIOV_NET_VF:2)',
    ]);
  });
  it('mappings (1.34) name the provider of each group; absent before', () => {
    const q = 'resources=VCPU:1&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL&resources2=SRIOV_NET_VF:1&group_policy=isolate';
    const r = ask(forest, q, '1.34');
    expect(r.mappings).toEqual([{ '': ['CN1'], '1': ['NIC1_1'], '2': ['NIC1_2'] }]);
    expect(ask(forest, q, '1.33').body.allocation_requests[0].mappings).toBeUndefined();
    // the unnumbered group maps to every provider it uses
    const u = ask(forest, 'resources=VCPU:1,SRIOV_NET_VF:1&required=HW_NIC_ACCEL_SSL', '1.34');
    expect(u.mappings).toEqual([{ '': ['CN1', 'NIC1_1'] }]);
  });
});

describe('provider-tree.rst: filtering by tree (in_tree, in_tree<N>)', () => {
  const forest = buildForest([
    { name: 'SS1', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES], aggs: [AGG_A] },
    { name: 'SS2', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES], aggs: [AGG_A] },
    { name: 'CN1', inv: { DISK_GB: { total: 1000 } }, aggs: [AGG_A] },
    { name: 'NUMA1_1', parent: 'CN1', inv: { VCPU: { total: 4 } } },
    { name: 'NUMA1_2', parent: 'CN1', inv: { VCPU: { total: 4 } } },
    { name: 'CN2', inv: { DISK_GB: { total: 1000 } }, aggs: [AGG_A] },
    { name: 'NUMA2_1', parent: 'CN2', inv: { VCPU: { total: 4 } } },
    { name: 'NUMA2_2', parent: 'CN2', inv: { VCPU: { total: 4 } } },
  ]);
  const cn1 = uuidOf('CN1');
  const ss1 = uuidOf('SS1');

  it('in_tree keeps the tree of a root or of any provider in it, without sharing providers', () => {
    const want = ['CN1(DISK_GB:50) + NUMA1_1(VCPU:1)', 'CN1(DISK_GB:50) + NUMA1_2(VCPU:1)'];
    expect(ask(forest, `resources=VCPU:1,DISK_GB:50&in_tree=${cn1}`).candidates).toEqual(want);
    expect(ask(forest, `resources=VCPU:1,DISK_GB:50&in_tree=${uuidOf('NUMA1_1')}`).candidates).toEqual(want);
  });
  it('unnumbered in_tree does not restrict a granular group', () => {
    expect(ask(forest, `resources=VCPU:1&in_tree=${cn1}&resources1=DISK_GB:10`).candidates).toEqual([
      'CN1(DISK_GB:10) + NUMA1_1(VCPU:1)',
      'CN1(DISK_GB:10) + NUMA1_2(VCPU:1)',
      'NUMA1_1(VCPU:1) + SS1(DISK_GB:10)',
      'NUMA1_1(VCPU:1) + SS2(DISK_GB:10)',
      'NUMA1_2(VCPU:1) + SS1(DISK_GB:10)',
      'NUMA1_2(VCPU:1) + SS2(DISK_GB:10)',
    ]);
  });
  it('in_tree<N> naming a sharing provider serves every tree it shares with', () => {
    expect(ask(forest, `resources=VCPU:1&resources1=DISK_GB:10&in_tree1=${ss1}`).candidates).toEqual([
      'NUMA1_1(VCPU:1) + SS1(DISK_GB:10)',
      'NUMA1_2(VCPU:1) + SS1(DISK_GB:10)',
      'NUMA2_1(VCPU:1) + SS1(DISK_GB:10)',
      'NUMA2_2(VCPU:1) + SS1(DISK_GB:10)',
    ]);
    expect(ask(forest, `resources1=VCPU:1&in_tree1=${cn1}&resources2=DISK_GB:10&in_tree2=${ss1}&group_policy=isolate`).candidates).toEqual([
      'NUMA1_1(VCPU:1) + SS1(DISK_GB:10)',
      'NUMA1_2(VCPU:1) + SS1(DISK_GB:10)',
    ]);
  });
  it('in_tree naming an unknown provider matches nothing', () => {
    expect(ask(forest, `resources=VCPU:1&in_tree=${uuidOf('nope')}`).candidates).toEqual([]);
  });
});

describe('provider-tree.rst: root_required (1.35)', () => {
  const forest = buildForest([
    {
      name: 'NON_NUMA_CN',
      inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 1024 }, DISK_GB: { total: 1000 } },
      traits: ['HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD', 'COMPUTE_VOLUME_MULTI_ATTACH', 'CUSTOM_WINDOWS_LICENSE_POOL'],
    },
    { name: 'NUMA_CN', inv: { DISK_GB: { total: 1000 } }, traits: ['STORAGE_DISK_SSD', 'COMPUTE_VOLUME_MULTI_ATTACH'] },
    { name: 'NUMA1', parent: 'NUMA_CN', inv: { VCPU: { total: 4 }, MEMORY_MB: { total: 1024 } } },
    { name: 'NUMA2', parent: 'NUMA_CN', inv: { VCPU: { total: 4 }, MEMORY_MB: { total: 1024 } }, traits: ['HW_CPU_X86_AVX2'] },
  ]);
  it('required root traits', () => {
    const q =
      'resources1=VCPU:1,MEMORY_MB:512&required1=HW_CPU_X86_AVX2&resources2=DISK_GB:100&group_policy=none&root_required=COMPUTE_VOLUME_MULTI_ATTACH';
    expect(ask(forest, q).candidates).toEqual([
      'NON_NUMA_CN(DISK_GB:100,MEMORY_MB:512,VCPU:1)',
      'NUMA2(MEMORY_MB:512,VCPU:1) + NUMA_CN(DISK_GB:100)',
    ]);
  });
  it('forbidden root traits', () => {
    const q = 'resources1=VCPU:1,MEMORY_MB:512&resources2=DISK_GB:100&group_policy=none&root_required=!CUSTOM_WINDOWS_LICENSE_POOL';
    expect(ask(forest, q).candidates).toEqual([
      'NUMA1(MEMORY_MB:512,VCPU:1) + NUMA_CN(DISK_GB:100)',
      'NUMA2(MEMORY_MB:512,VCPU:1) + NUMA_CN(DISK_GB:100)',
    ]);
  });
  it('applies to the anchor root, not to sharing providers', () => {
    const f = buildForest([
      { name: 'CN', inv: { VCPU: { total: 8 } }, traits: ['COMPUTE_VOLUME_MULTI_ATTACH'], aggs: [AGG_A] },
      { name: 'SS', inv: { DISK_GB: { total: 100 } }, traits: [SHARES], aggs: [AGG_A] },
    ]);
    expect(ask(f, 'resources=VCPU:1,DISK_GB:10&root_required=COMPUTE_VOLUME_MULTI_ATTACH').candidates).toEqual(['CN(VCPU:1) + SS(DISK_GB:10)']);
    expect(ask(f, 'resources=DISK_GB:10&root_required=!COMPUTE_VOLUME_MULTI_ATTACH').candidates).toEqual(['SS(DISK_GB:10)']);
    expect(ask(f, 'resources=VCPU:1,DISK_GB:10&root_required=!COMPUTE_VOLUME_MULTI_ATTACH').candidates).toEqual([]);
  });
});

describe('provider-tree.rst: same_subtree (1.36)', () => {
  const forest = buildForest([
    { name: 'CN' },
    { name: 'NUMA0', parent: 'CN', inv: { VCPU: { total: 4 }, MEMORY_MB: { total: 2048 } }, traits: ['HW_NUMA_ROOT'] },
    { name: 'FPGA0_0', parent: 'NUMA0', inv: { FPGA: { total: 1 } }, traits: ['CUSTOM_TYPE1'] },
    { name: 'NUMA1', parent: 'CN', inv: { VCPU: { total: 4 }, MEMORY_MB: { total: 2048 } }, traits: ['HW_NUMA_ROOT'] },
    { name: 'FPGA1_0', parent: 'NUMA1', inv: { FPGA: { total: 1 } }, traits: ['CUSTOM_TYPE1'] },
    { name: 'FPGA1_1', parent: 'NUMA1', inv: { FPGA: { total: 1 } }, traits: ['CUSTOM_TYPE2'] },
  ]);
  it('keeps groups under one provider of the set', () => {
    const r = ask(forest, 'resources_COMPUTE=VCPU:1,MEMORY_MB:256&resources_ACCEL=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_ACCEL');
    expect(r.candidates).toEqual([
      'FPGA0_0(FPGA:1) + NUMA0(MEMORY_MB:256,VCPU:1)',
      'FPGA1_0(FPGA:1) + NUMA1(MEMORY_MB:256,VCPU:1)',
      'FPGA1_1(FPGA:1) + NUMA1(MEMORY_MB:256,VCPU:1)',
    ]);
    // without same_subtree the cross-NUMA combinations come back too
    expect(ask(forest, 'resources_COMPUTE=VCPU:1,MEMORY_MB:256&resources_ACCEL=FPGA:1&group_policy=none').candidates).toHaveLength(6);
  });
  it('a resourceless group anchors the subtree and shows only in mappings', () => {
    const q =
      'required_NUMA=HW_NUMA_ROOT&resources_ACCEL1=FPGA:1&required_ACCEL1=CUSTOM_TYPE1&resources_ACCEL2=FPGA:1&required_ACCEL2=CUSTOM_TYPE2' +
      '&group_policy=none&same_subtree=_NUMA,_ACCEL1,_ACCEL2';
    const r = ask(forest, q);
    expect(r.candidates).toEqual(['FPGA1_0(FPGA:1) + FPGA1_1(FPGA:1)']);
    expect(r.mappings).toEqual([{ _NUMA: ['NUMA1'], _ACCEL1: ['FPGA1_0'], _ACCEL2: ['FPGA1_1'] }]);
    expect(Object.keys(r.body.allocation_requests[0].allocations)).not.toContain(uuidOf('NUMA1'));
  });
  it('repeated same_subtree sets are independent', () => {
    const q = 'resources_A=FPGA:1&resources_B=FPGA:1&resources_C=VCPU:1&group_policy=isolate&same_subtree=_A,_C&same_subtree=_B,_C';
    const r = ask(forest, q);
    // the same allocations twice: A and B swap FPGAs (different mappings, so different candidates)
    expect(r.candidates).toEqual(['FPGA1_0(FPGA:1) + FPGA1_1(FPGA:1) + NUMA1(VCPU:1)', 'FPGA1_0(FPGA:1) + FPGA1_1(FPGA:1) + NUMA1(VCPU:1)']);
    expect(r.mappings.map((m) => `${m!._A}/${m!._B}/${m!._C}`).sort()).toEqual(['FPGA1_0/FPGA1_1/NUMA1', 'FPGA1_1/FPGA1_0/NUMA1']);
  });
  it('a resourceless group with nothing to match on returns no candidates (as Placement)', () => {
    expect(ask(forest, 'resources_A=FPGA:1&required_B=!CUSTOM_TYPE2&group_policy=none&same_subtree=_A,_B').candidates).toEqual([]);
  });
});

describe('limits, caps and randomisation', () => {
  const forest = buildForest(Array.from({ length: 20 }, (_, i) => ({ name: `cn${String(i).padStart(2, '0')}`, inv: { VCPU: { total: 4 } } })));
  it('limit returns the first candidates in creation order, deterministically', () => {
    const a = ask(forest, 'resources=VCPU:1&limit=3', '1.16');
    expect(a.candidates).toEqual(['cn00(VCPU:1)', 'cn01(VCPU:1)', 'cn02(VCPU:1)']);
    expect(ask(forest, 'resources=VCPU:1&limit=3', '1.16').body).toEqual(a.body);
    expect(a.summaries).toEqual(['cn00', 'cn01', 'cn02']);
  });
  it('the global cap bounds every request, with or without limit', () => {
    expect(ask(forest, 'resources=VCPU:1', '1.16', { maxCandidates: 5 }).candidates).toHaveLength(5);
    expect(ask(forest, 'resources=VCPU:1&limit=10', '1.16', { maxCandidates: 5 }).candidates).toHaveLength(5);
    expect(ask(forest, 'resources=VCPU:1&limit=2', '1.16', { maxCandidates: 5 }).candidates).toHaveLength(2);
  });
  it('randomize samples `limit` of all candidates with the given random source', () => {
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const r = ask(forest, 'resources=VCPU:1&limit=4', '1.16', { randomize: true, random });
    expect(r.candidates).toHaveLength(4);
    expect(r.candidates).not.toEqual(['cn00(VCPU:1)', 'cn01(VCPU:1)', 'cn02(VCPU:1)', 'cn03(VCPU:1)']);
    expect(new Set(r.candidates).size).toBe(4);
    const all = ask(forest, 'resources=VCPU:1', '1.16', { randomize: true, random });
    expect(all.candidates).toHaveLength(20);
  });
});

describe('response shapes per microversion', () => {
  const forest = buildForest([
    {
      name: 'cn',
      inv: { VCPU: { total: 8, reserved: 2, allocation_ratio: 1.5 }, DISK_GB: { total: 100 } },
      used: { VCPU: 3 },
      traits: ['CUSTOM_B', 'CUSTOM_A'],
    },
  ]);
  const cn = uuidOf('cn');
  it('1.10-1.11: allocations as a list, summaries with requested classes only', () => {
    expect(ask(forest, 'resources=VCPU:1', '1.10').body).toEqual({
      allocation_requests: [{ allocations: [{ resource_provider: { uuid: cn }, resources: { VCPU: 1 } }] }],
      provider_summaries: { [cn]: { resources: { VCPU: { capacity: 9, used: 3 } } } },
    });
  });
  it('1.12: allocations keyed by provider', () => {
    expect(ask(forest, 'resources=VCPU:1', '1.12').body.allocation_requests).toEqual([{ allocations: { [cn]: { resources: { VCPU: 1 } } } }]);
  });
  it('1.17 adds traits; 1.27 every inventory; 1.29 parent and root', () => {
    expect(ask(forest, 'resources=VCPU:1', '1.17').body.provider_summaries[cn]).toEqual({
      resources: { VCPU: { capacity: 9, used: 3 } },
      traits: ['CUSTOM_A', 'CUSTOM_B'],
    });
    expect(ask(forest, 'resources=VCPU:1', '1.27').body.provider_summaries[cn].resources).toEqual({
      VCPU: { capacity: 9, used: 3 },
      DISK_GB: { capacity: 100, used: 0 },
    });
    expect(ask(forest, 'resources=VCPU:1', '1.29').body.provider_summaries[cn]).toMatchObject({ parent_provider_uuid: null, root_provider_uuid: cn });
  });
  it('amounts of one class from several groups on one provider add up', () => {
    expect(ask(forest, 'resources=VCPU:1&resources1=VCPU:2&resources2=DISK_GB:5&group_policy=none', '1.34').body.allocation_requests).toEqual([
      { allocations: { [cn]: { resources: { VCPU: 3, DISK_GB: 5 } } }, mappings: { '': [cn], '1': [cn], '2': [cn] } },
    ]);
    // 3 used + 1 + 2 + 4 = 10 > capacity 9
    expect(ask(forest, 'resources=VCPU:1&resources1=VCPU:2&resources2=VCPU:4&group_policy=none').candidates).toEqual([]);
  });
});
