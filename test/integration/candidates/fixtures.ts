/**
 * The provider topologies of Placement's gabbi fixtures (placement/tests/functional/
 * fixtures/gabbits.py, as rebuilt over HTTP by the conformance harness), as solver
 * specs: the differential test builds them on the reference and on Berth and compares
 * random and hand-written queries over them (the upstream gabbits that use them are
 * not all in the visible conformance set).
 */
import { uuidOf, type ProviderSpec, type Vocabulary } from '../../unit/candidates/forests.js';

const SHARES = 'MISC_SHARES_VIA_AGGREGATE';
const A = uuidOf('fixture-aggA');
const B = uuidOf('fixture-aggB');
const C = uuidOf('fixture-aggC');

export interface Fixture {
  name: string;
  specs: ProviderSpec[];
  vocabulary: Vocabulary;
  /** hand-written queries (the upstream gabbits' kind), as [microversion, query] */
  queries: Array<[string, string]>;
}

const sharedStorage: ProviderSpec[] = [
  {
    name: 'cn1',
    inv: { VCPU: { total: 24, allocation_ratio: 16 }, MEMORY_MB: { total: 131072, allocation_ratio: 1.5 } },
    traits: ['HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2'],
    aggs: [A],
  },
  {
    name: 'cn2',
    inv: { VCPU: { total: 24, allocation_ratio: 16 }, MEMORY_MB: { total: 131072, allocation_ratio: 1.5 }, DISK_GB: { total: 2000, reserved: 100 } },
    aggs: [A],
  },
  { name: 'ss', inv: { DISK_GB: { total: 2000, reserved: 100 } }, traits: [SHARES], aggs: [A] },
  { name: 'ss2', inv: { DISK_GB: { total: 2000, reserved: 100 } }, traits: [SHARES], aggs: [A] },
  { name: 'numa1_1', parent: 'cn1' },
  { name: 'numa1_2', parent: 'cn1' },
  { name: 'numa2_1', parent: 'cn2' },
  { name: 'numa2_2', parent: 'cn2' },
  { name: 'pf1_1', parent: 'numa1_1', inv: { SRIOV_NET_VF: { total: 8 } } },
  { name: 'pf1_2', parent: 'numa1_2', inv: { SRIOV_NET_VF: { total: 8 } } },
  { name: 'pf2_1', parent: 'numa2_1', inv: { SRIOV_NET_VF: { total: 8 } } },
  { name: 'pf2_2', parent: 'numa2_2', inv: { SRIOV_NET_VF: { total: 8 } } },
];

const numaAggregate: ProviderSpec[] = [
  { name: 'cn1', aggs: [A] },
  { name: 'cn2', aggs: [A, B] },
  { name: 'ss1', inv: { DISK_GB: { total: 2000, reserved: 100 } }, traits: [SHARES], aggs: [A] },
  { name: 'ss2', inv: { DISK_GB: { total: 2000, reserved: 100 } }, traits: [SHARES], aggs: [C] },
  { name: 'numa1_1', parent: 'cn1', inv: { VCPU: { total: 24, allocation_ratio: 16 } }, aggs: [C] },
  { name: 'numa1_2', parent: 'cn1', inv: { VCPU: { total: 24, allocation_ratio: 16 } } },
  { name: 'numa2_1', parent: 'cn2', inv: { VCPU: { total: 24, allocation_ratio: 16 } } },
  { name: 'numa2_2', parent: 'cn2', inv: { VCPU: { total: 24, allocation_ratio: 16 } } },
];

function numaNetwork(prefix: ProviderSpec[], cn1Parent?: string, cn2Parent?: string): ProviderSpec[] {
  const pfs: Array<[string, number, number, number]> = [
    ['1_1', 1, 1, 4],
    ['1_2', 1, 2, 4],
    ['2_1', 2, 1, 2],
    ['2_2', 2, 2, 2],
    ['2_3', 2, 1, 2],
    ['2_4', 2, 2, 2],
    ['3_1', 3, 1, 8],
  ];
  return [
    ...prefix,
    { name: 'ss1', inv: { DISK_GB: { total: 2000 } }, traits: [SHARES], aggs: [A] },
    { name: 'cn1', parent: cn1Parent, traits: ['COMPUTE_VOLUME_MULTI_ATTACH'], aggs: [A] },
    {
      name: 'numa0',
      parent: 'cn1',
      inv: { VCPU: { total: 4 }, MEMORY_MB: { total: 2048, min_unit: 512, step_size: 256 } },
      used: { VCPU: 2 },
      traits: ['HW_NUMA_ROOT'],
    },
    {
      name: 'numa1',
      parent: 'cn1',
      inv: { VCPU: { total: 4 }, MEMORY_MB: { total: 2048, min_unit: 256, max_unit: 1024 } },
      traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO'],
    },
    { name: 'fpga0', parent: 'numa0', inv: { FPGA: { total: 1 } } },
    { name: 'pgpu0', parent: 'numa0', inv: { VGPU: { total: 8 } } },
    { name: 'fpga1_0', parent: 'numa1', inv: { FPGA: { total: 1 } } },
    { name: 'fpga1_1', parent: 'numa1', inv: { FPGA: { total: 1 } } },
    { name: 'sriov_agent', parent: 'cn1', traits: ['CUSTOM_VNIC_TYPE_DIRECT'] },
    { name: 'esn1', parent: 'sriov_agent', inv: { NET_BW_EGR_KILOBIT_PER_SEC: { total: 10000 } }, traits: ['CUSTOM_PHYSNET1'] },
    { name: 'esn2', parent: 'sriov_agent', inv: { NET_BW_EGR_KILOBIT_PER_SEC: { total: 20000 } }, traits: ['CUSTOM_PHYSNET2'] },
    { name: 'ovs_agent', parent: 'cn1', traits: ['CUSTOM_VNIC_TYPE_NORMAL'] },
    { name: 'br_int', parent: 'ovs_agent', inv: { NET_BW_EGR_KILOBIT_PER_SEC: { total: 1000 } }, traits: ['CUSTOM_PHYSNET0'] },
    {
      name: 'cn2',
      parent: cn2Parent,
      inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 2048, min_unit: 1024, step_size: 128 }, DISK_GB: { total: 1000 } },
      used: { VCPU: 3 },
      traits: ['CUSTOM_FOO'],
      aggs: [A],
    },
    ...[1, 2, 3].map((i) => ({ name: `nic${i}`, parent: 'cn2', traits: ['CUSTOM_HW_NIC_ROOT'] })),
    ...pfs.map(([s, nic, physnet, vfs]) => ({
      name: `pf${s}`,
      parent: `nic${nic}`,
      inv: { CUSTOM_VF: { total: vfs } },
      traits: [`CUSTOM_PHYSNET${physnet}`],
    })),
  ];
}

const granular: ProviderSpec[] = [
  {
    name: 'cn_left',
    inv: {
      VCPU: { total: 8 },
      MEMORY_MB: { total: 4096 },
      DISK_GB: { total: 500 },
      VGPU: { total: 8 },
      SRIOV_NET_VF: { total: 8 },
      CUSTOM_NET_MBPS: { total: 4000 },
    },
    traits: ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_GPU_API_DXVA', 'HW_NIC_DCB_PFC', 'CUSTOM_FOO'],
    aggs: [A],
  },
  {
    name: 'cn_middle',
    inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, SRIOV_NET_VF: { total: 8 }, CUSTOM_NET_MBPS: { total: 4000 } },
    traits: ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE', 'HW_NIC_ACCEL_TLS'],
    aggs: [A, B],
  },
  {
    name: 'cn_right',
    inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, DISK_GB: { total: 500 }, VGPU: { total: 8, max_unit: 2 } },
    traits: ['HW_CPU_X86_MMX', 'HW_GPU_API_DXVA', 'CUSTOM_DISK_SSD'],
    aggs: [B, C],
  },
  { name: 'shr_disk_1', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES, 'CUSTOM_DISK_SSD'], aggs: [A] },
  { name: 'shr_disk_2', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES], aggs: [A, B] },
  { name: 'shr_net', inv: { SRIOV_NET_VF: { total: 16 }, CUSTOM_NET_MBPS: { total: 40000 } }, traits: [SHARES], aggs: [C] },
];

function neutronQos(): ProviderSpec[] {
  const direct = ['CUSTOM_VNIC_TYPE_DIRECT', 'CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL', 'CUSTOM_VNIC_TYPE_MACVTAP'];
  const bw = (kbps: number) => ({ NET_BW_EGR_KILOBIT_PER_SEC: { total: kbps }, NET_BW_IGR_KILOBIT_PER_SEC: { total: kbps } });
  const out: ProviderSpec[] = [];
  const compute = (name: string) => {
    out.push({ name, inv: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, DISK_GB: { total: 500 } } });
    out.push({
      name: `${name}:ovs`,
      parent: name,
      inv: { NET_PACKET_RATE_KILOPACKET_PER_SEC: { total: 1000 } },
      traits: ['CUSTOM_VNIC_TYPE_NORMAL'],
    });
  };
  for (const [name, physnet] of [
    ['compute0', 'CUSTOM_PHYSNET_OTHER'],
    ['compute1', 'CUSTOM_PHYSNET_MSN_S1'],
    ['compute2', 'CUSTOM_PHYSNET_MSN_S2'],
  ] as const) {
    compute(name);
    out.push({ name: `${name}:br-ex`, parent: `${name}:ovs`, inv: bw(5000), traits: ['CUSTOM_VNIC_TYPE_NORMAL', physnet] });
    out.push({ name: `${name}:sriov`, parent: name, traits: direct });
    out.push({ name: `${name}:pf0`, parent: `${name}:sriov`, inv: bw(10000), traits: [...direct, physnet] });
  }
  compute('compute3');
  out.push({ name: 'compute3:br-ex', parent: 'compute3:ovs', inv: bw(1000), traits: ['CUSTOM_VNIC_TYPE_NORMAL', 'CUSTOM_PHYSNET_MSN_S1'] });
  out.push({ name: 'compute3:br-ex2', parent: 'compute3:ovs', inv: bw(1000), traits: ['CUSTOM_VNIC_TYPE_NORMAL', 'CUSTOM_PHYSNET_MSN_S2'] });
  out.push({ name: 'compute3:sriov', parent: 'compute3', traits: direct });
  out.push({ name: 'compute3:pf0', parent: 'compute3:sriov', inv: bw(1000), traits: [...direct, 'CUSTOM_PHYSNET_MSN_S1'] });
  out.push({ name: 'compute3:pf1', parent: 'compute3:sriov', inv: bw(1000), traits: [...direct, 'CUSTOM_PHYSNET_MSN_S2'] });
  return out;
}

function vocabulary(specs: ProviderSpec[], amounts: number[]): Vocabulary {
  const rcs = [...new Set(specs.flatMap((s) => Object.keys(s.inv ?? {})))];
  const traits = [...new Set(specs.flatMap((s) => s.traits ?? []))].filter((t) => t !== SHARES);
  const aggs = [...new Set(specs.flatMap((s) => s.aggs ?? []))];
  return { rcs, traits, aggs, amounts };
}

const id = (name: string) => `$${name}`;

const numaNet = numaNetwork([]);
const deep = numaNetwork([{ name: 'gp1' }, { name: 'p1', parent: 'gp1' }, { name: 'p2', parent: 'gp1' }], 'p1', 'p2');
const qos = neutronQos();

/** `$name` in a query stands for that provider's uuid (resolved per round) */
export const FIXTURES: Fixture[] = [
  {
    name: 'SharedStorageFixture',
    specs: sharedStorage,
    vocabulary: vocabulary(sharedStorage, [1, 1, 4, 10, 100, 1024]),
    queries: [
      ['1.34', 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:100'],
      ['1.34', 'resources=VCPU:1,SRIOV_NET_VF:4,DISK_GB:10'],
      ['1.34', 'resources=VCPU:1&resources1=SRIOV_NET_VF:4&resources2=SRIOV_NET_VF:4&resources3=DISK_GB:10&group_policy=isolate'],
      ['1.34', 'resources1=SRIOV_NET_VF:4&resources2=SRIOV_NET_VF:4&group_policy=none'],
      ['1.34', 'resources=SRIOV_NET_VF:4&resources1=DISK_GB:10'],
      ['1.28', 'resources=DISK_GB:10,SRIOV_NET_VF:4&limit=1'],
      ['1.36', `resources_A=SRIOV_NET_VF:1&required_N=HW_CPU_X86_SSE&same_subtree=_A,_N&group_policy=none`],
    ],
  },
  {
    name: 'NUMAAggregateFixture',
    specs: numaAggregate,
    vocabulary: vocabulary(numaAggregate, [1, 1, 2, 100]),
    queries: [
      ['1.34', 'resources=VCPU:1,DISK_GB:100'],
      ['1.34', `resources=VCPU:1,DISK_GB:100&member_of=${A}`],
      ['1.34', `resources=VCPU:1,DISK_GB:100&member_of=${B}`],
      ['1.34', `resources=VCPU:1,DISK_GB:100&member_of=${C}`],
      ['1.34', `resources=VCPU:1,DISK_GB:100&member_of=!${A}`],
      ['1.34', `resources=VCPU:1,DISK_GB:100&member_of=!${C}`],
      ['1.34', `resources1=VCPU:1&member_of1=${C}&resources2=DISK_GB:100&member_of2=${C}&group_policy=none`],
      ['1.34', `resources1=VCPU:1&member_of1=!${A}&resources2=DISK_GB:100&group_policy=none`],
      ['1.34', `resources=DISK_GB:100&resources1=VCPU:1&member_of1=!in:${B},${C}&group_policy=none`],
    ],
  },
  {
    name: 'NUMANetworkFixture',
    specs: numaNet,
    vocabulary: vocabulary(numaNet, [1, 1, 2, 256, 512, 1024, 1000]),
    queries: [
      ['1.36', 'resources_COMPUTE=VCPU:1,MEMORY_MB:256&resources_ACCEL=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_ACCEL'],
      ['1.36', 'required_NUMA=HW_NUMA_ROOT&resources_ACCEL1=FPGA:1&resources_ACCEL2=FPGA:1&group_policy=isolate&same_subtree=_NUMA,_ACCEL1,_ACCEL2'],
      ['1.36', 'required_NUMA=HW_NUMA_ROOT&resources_COMPUTE=VCPU:1&resources_GPU=VGPU:1&group_policy=none&same_subtree=_NUMA,_COMPUTE,_GPU'],
      [
        '1.36',
        'resources_VIF=NET_BW_EGR_KILOBIT_PER_SEC:10&required_VIF=CUSTOM_PHYSNET1&required_AGENT=CUSTOM_VNIC_TYPE_DIRECT&group_policy=none&same_subtree=_VIF,_AGENT',
      ],
      [
        '1.36',
        'resources=VCPU:1&resources_PORT1=CUSTOM_VF:2&required_PORT1=CUSTOM_PHYSNET1&resources_PORT2=CUSTOM_VF:2&required_PORT2=CUSTOM_PHYSNET2&required_NIC=CUSTOM_HW_NIC_ROOT&group_policy=isolate&same_subtree=_NIC,_PORT1,_PORT2',
      ],
      ['1.36', 'resources=VCPU:2,MEMORY_MB:1024&root_required=COMPUTE_VOLUME_MULTI_ATTACH'],
      ['1.36', 'resources=VCPU:1&resources1=DISK_GB:10&root_required=!COMPUTE_VOLUME_MULTI_ATTACH&group_policy=none'],
      ['1.35', 'resources=MEMORY_MB:1024&root_required=CUSTOM_FOO,!COMPUTE_VOLUME_MULTI_ATTACH'],
      ['1.39', 'resources=VCPU:1&required=in:CUSTOM_FOO,HW_NUMA_ROOT&required=!COMPUTE_VOLUME_MULTI_ATTACH'],
      [
        '1.39',
        'resources1=CUSTOM_VF:1&required1=in:CUSTOM_PHYSNET1,CUSTOM_PHYSNET2&resources2=CUSTOM_VF:1&required2=in:CUSTOM_PHYSNET1,CUSTOM_PHYSNET2&group_policy=isolate&limit=100',
      ],
      ['1.36', `resources=VCPU:1&in_tree=${id('numa1')}&resources1=DISK_GB:100`],
      ['1.36', `resources=VCPU:1&resources1=DISK_GB:100&in_tree1=${id('ss1')}&group_policy=none`],
      ['1.34', 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:10'],
    ],
  },
  {
    name: 'DeepNUMANetworkFixture',
    specs: deep,
    vocabulary: vocabulary(deep, [1, 1, 2, 256, 1024, 1000]),
    queries: [
      ['1.36', 'resources_COMPUTE=VCPU:1,MEMORY_MB:256&resources_ACCEL=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_ACCEL'],
      ['1.36', 'required_ROOT=HW_NUMA_ROOT&resources_A=FPGA:1&resources_B=CUSTOM_VF:1&group_policy=none&same_subtree=_ROOT,_A'],
      ['1.36', 'resources=VCPU:1&root_required=COMPUTE_VOLUME_MULTI_ATTACH'],
      ['1.36', 'resources=VCPU:1,DISK_GB:10'],
      ['1.36', `resources=VCPU:1&in_tree=${id('p1')}`],
    ],
  },
  {
    name: 'GranularFixture',
    specs: granular,
    vocabulary: vocabulary(granular, [1, 1, 2, 100, 1000]),
    queries: [
      ['1.34', 'resources=VCPU:1&resources1=DISK_GB:100&resources2=SRIOV_NET_VF:1,CUSTOM_NET_MBPS:100&group_policy=isolate'],
      ['1.34', 'resources=DISK_GB:100&resources1=VCPU:1'],
      ['1.34', 'resources=SRIOV_NET_VF:1,DISK_GB:100&resources1=VCPU:1&group_policy=none'],
      ['1.34', 'resources=VCPU:1,SRIOV_NET_VF:2&required=CUSTOM_DISK_SSD'],
    ],
  },
  {
    name: 'NeutronQoSMultiSegmentFixture',
    specs: qos,
    vocabulary: vocabulary(qos, [1, 1, 500, 1000]),
    queries: [
      [
        '1.36',
        'resources=VCPU:1,MEMORY_MB:512&resources_PORT=NET_BW_EGR_KILOBIT_PER_SEC:1000,NET_BW_IGR_KILOBIT_PER_SEC:1000&required_PORT=CUSTOM_VNIC_TYPE_NORMAL&required_PORT=in:CUSTOM_PHYSNET_MSN_S1,CUSTOM_PHYSNET_MSN_S2&group_policy=none',
      ],
      [
        '1.39',
        'resources=VCPU:1&resources_P1=NET_BW_EGR_KILOBIT_PER_SEC:1000&required_P1=in:CUSTOM_PHYSNET_MSN_S1,CUSTOM_PHYSNET_MSN_S2&required_P1=CUSTOM_VNIC_TYPE_DIRECT&resources_P2=NET_PACKET_RATE_KILOPACKET_PER_SEC:10&required_P2=CUSTOM_VNIC_TYPE_NORMAL&group_policy=isolate',
      ],
      ['1.36', 'resources_A=NET_BW_EGR_KILOBIT_PER_SEC:1000&resources_B=NET_PACKET_RATE_KILOPACKET_PER_SEC:1&same_subtree=_A,_B&group_policy=none'],
    ],
  },
];
