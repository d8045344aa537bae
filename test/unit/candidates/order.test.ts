/**
 * The order of GET /allocation_candidates where the reference Placement's is stable
 * (docs/placement.md "Order and number types"; test/integration/candidates/
 * differential.ts compares it against the real thing). Cases are the ones the
 * differential run found.
 */
import { describe, expect, it } from 'vitest';
import { ask, buildForest, type ProviderSpec } from './forests.js';

const SHARES = 'MISC_SHARES_VIA_AGGREGATE';
const A = '0a000000-0000-4000-8000-0000000000a1';
const C = '0a000000-0000-4000-8000-0000000000c1';

describe('provider_summaries order', () => {
  it('lists trees by root creation, each tree’s providers as created, for one group', () => {
    const specs: ProviderSpec[] = [
      { name: 'cn2', inv: { VCPU: { total: 4 } } },
      { name: 'cn1', inv: { VCPU: { total: 4 } } },
      { name: 'cn1-numa', parent: 'cn1', inv: { VCPU: { total: 4 } } },
      { name: 'cn2-numa', parent: 'cn2', inv: { VCPU: { total: 4 } } },
    ];
    const r = ask(buildForest(specs), 'resources=VCPU:1');
    // the answer's candidates go breadth-first over anchors; summaries by tree, as created
    expect(r.summaries).toEqual(['cn2', 'cn2-numa', 'cn1', 'cn1-numa']);
  });

  it('puts the trees the unnumbered group finds (with the anchors of its sharing providers) before those only a later group finds', () => {
    const specs: ProviderSpec[] = [
      { name: 'cn_left', inv: { SRIOV_NET_VF: { total: 8 }, VGPU: { total: 8 } }, aggs: [A] },
      { name: 'cn_right', inv: { VGPU: { total: 8 } }, aggs: [C] },
      { name: 'shr_net', inv: { SRIOV_NET_VF: { total: 16 } }, traits: [SHARES], aggs: [C] },
    ];
    const r = ask(buildForest(specs), 'resources=SRIOV_NET_VF:1&resources_0=VGPU:1&group_policy=none&same_subtree=_0');
    expect(r.candidates).toEqual(['cn_left(SRIOV_NET_VF:1,VGPU:1)', 'cn_right(VGPU:1) + shr_net(SRIOV_NET_VF:1)']);
    expect(r.summaries).toEqual(['cn_left', 'cn_right', 'shr_net']);
  });

  it('puts a tree an earlier granular group finds on its own first, even if the answer uses it only for a later group (before 1.29)', () => {
    const specs: ProviderSpec[] = [
      { name: 'cn1', inv: { VCPU: { total: 8 } }, aggs: [A] },
      { name: 'cn2', inv: { DISK_GB: { total: 100 } }, aggs: [A] },
      { name: 'ss', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES], aggs: [A] },
      { name: 'ss2', inv: { DISK_GB: { total: 1000 } }, traits: [SHARES], aggs: [A] },
      { name: 'cn1-pf', parent: 'cn1', inv: { SRIOV_NET_VF: { total: 8 } } },
      { name: 'cn2-pf', parent: 'cn2', inv: { SRIOV_NET_VF: { total: 8 } } },
    ];
    // group 1 (DISK_GB) finds cn2 (its own disk), ss and ss2; group 3 (SRIOV) finds cn1
    // and cn2. Before 1.29 the summaries hold only the providers the answer uses: the
    // disks come from ss and ss2 (isolate), never from cn2 (its tree is already in use)
    const r = ask(buildForest(specs), 'resources1=DISK_GB:1&resources2=DISK_GB:1&resources3=SRIOV_NET_VF:4&group_policy=isolate', '1.25');
    expect(r.summaries).toEqual(['cn2-pf', 'ss', 'ss2', 'cn1-pf']);
  });
});

describe('allocation request order', () => {
  it('keeps the request’s class order in a flat deployment, class id order once nested or sharing providers exist', () => {
    const flat = buildForest([{ name: 'cn', inv: { VCPU: { total: 8 }, DISK_GB: { total: 100 } } }]);
    expect(Object.keys(ask(flat, 'resources=DISK_GB:1,VCPU:1').body.allocation_requests[0].allocations).length).toBe(1);
    expect(Object.keys(Object.values<any>(ask(flat, 'resources=DISK_GB:1,VCPU:1').body.allocation_requests[0].allocations)[0].resources)).toEqual([
      'DISK_GB',
      'VCPU',
    ]);
    const shared = buildForest([
      { name: 'cn', inv: { VCPU: { total: 8 } }, aggs: [A] },
      { name: 'ss', inv: { DISK_GB: { total: 100 } }, traits: [SHARES], aggs: [A] },
    ]);
    const areq = ask(shared, 'resources=DISK_GB:1,VCPU:1').body.allocation_requests[0];
    // VCPU (class id 0) before DISK_GB (2): the compute node first, then the sharing provider
    expect(Object.values<any>(areq.allocations).map((a) => Object.keys(a.resources)[0])).toEqual(['VCPU', 'DISK_GB']);
  });
});
