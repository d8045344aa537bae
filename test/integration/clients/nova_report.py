"""Drives Nova's own Placement client, unmodified: nova.scheduler.client.report.
SchedulerReportClient from Debian's python3-nova (what nova-compute, nova-scheduler,
nova-conductor and nova-api run), through the flows a cloud puts Placement through,
against the Placement at ENDPOINT. Prints one JSON transcript of what the client saw
and what the API then holds; test/integration/clients/nova-report.test.ts runs it
against the real Placement, then against Berth, and compares the transcripts.

Authentication and Nova's set-up: nova_kit.py (a fixed token on a fixed endpoint).

usage: /usr/bin/python3 nova_report.py ENDPOINT
"""
import json
import sys
import uuid

from nova_kit import adapter, compute_update, ctx, inv, objects, outcome, report
from nova_kit import allocations as kit_allocations, api as kit_api, tree_state as kit_tree_state
from nova.scheduler import utils as sched_utils

ENDPOINT = sys.argv[1]
NS = uuid.UUID('5e7a1b0c-0000-4000-8000-000000000000')


def U(name):
    return str(uuid.uuid5(NS, name))


CN1, NUMA0, NUMA1, PF0, PF1 = U('cn1'), U('cn1-numa0'), U('cn1-numa1'), U('cn1-pf0'), U('cn1-pf1')
CN2, SS, PGPU = U('cn2'), U('shared-storage'), U('cn1-pgpu0')
AGG_A, AGG_B = U('agg-a'), U('agg-b')
PROJ, PROJ2, USER1, USER2 = 'proj-nova', 'proj-other', 'user-1', 'user-2'
INST1, INST2, INST3, MIG1 = U('instance-1'), U('instance-2'), U('instance-3'), U('migration-1')
NAMES = {v: k for k, v in dict(
    CN1=CN1, NUMA0=NUMA0, NUMA1=NUMA1, PF0=PF0, PF1=PF1, CN2=CN2, SS=SS, PGPU=PGPU,
    AGG_A=AGG_A, AGG_B=AGG_B, INST1=INST1, INST2=INST2, INST3=INST3, MIG1=MIG1).items()}

client = adapter(ENDPOINT)
transcript = []


def named(v):
    """uuids replaced by their names, so a transcript reads (and diffs) well"""
    if isinstance(v, dict):
        return {named(k): named(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [named(x) for x in v]
    if isinstance(v, str):
        return NAMES.get(v, v)
    return v


def record(step, value):
    transcript.append([step, named(value)])


def api(path, version='1.39'):
    return kit_api(client, path, version)


def tree_state(root):
    return kit_tree_state(client, root)


def allocations(consumer):
    return kit_allocations(client, consumer)


def candidates(rr):
    areqs, sums, version = rc.get_allocation_candidates(ctx, rr)
    if areqs is None:
        return {'failed': True}
    # upstream collects allocation requests, and a mapping's providers, in Python sets:
    # compared as sets (their order changes with the hash seed)
    for a in areqs:
        for suffix in a.get('mappings', {}):
            a['mappings'][suffix] = sorted(a['mappings'][suffix])
    return {
        'version': version,
        'allocation_requests': sorted(json.dumps(named(a), sort_keys=True) for a in areqs),
        'provider_summaries': [[u, sorted(s['resources'].items()), sorted(s['traits']),
                                s['parent_provider_uuid'], s['root_provider_uuid']]
                               for u, s in sums.items()],
    }


def flavor_request(vcpus, memory_mb, root_gb, extra_specs):
    spec = objects.RequestSpec(
        flavor=objects.Flavor(vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb,
                              ephemeral_gb=0, swap=0, extra_specs=extra_specs),
        image=objects.ImageMeta.from_dict({}), requested_resources=[], is_bfv=False)
    return sched_utils.ResourceRequest.from_request_spec(spec)


def pick(areqs_result, must_use):
    """the first candidate (in sorted order) that uses every provider in must_use"""
    for a in areqs_result['allocation_requests']:
        a = json.loads(a)
        if all(NAMES.get(p, p) in a['allocations'] for p in must_use):
            return unnamed(a)
    raise AssertionError('no candidate uses %s' % must_use)


def unnamed(v):
    back = {k: u for u, k in NAMES.items()}
    if isinstance(v, dict):
        return {unnamed(k): unnamed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [unnamed(x) for x in v]
    if isinstance(v, str):
        return back.get(v, v)
    return v


rc = report.SchedulerReportClient(adapter=client)

# ---------------------------------------------------------------- compute start-up
# compute1: a root with two NUMA nodes, each with a NIC physical function (bandwidth);
# compute2: a flat node; a sharing storage provider in aggregate A with compute1


def startup1(tree):
    tree.update_inventory(CN1, {
        'VCPU': inv(16, 4.0), 'MEMORY_MB': inv(32768, 1.5, reserved=512), 'DISK_GB': inv(100),
        'VGPU': inv(4)})
    tree.update_traits(CN1, ['COMPUTE_NET_ATTACH_INTERFACE', 'HW_CPU_X86_AVX2', 'CUSTOM_RACK_A'])
    tree.update_aggregates(CN1, [AGG_A])
    for numa, pf, physnet in ((NUMA0, PF0, 'A'), (NUMA1, PF1, 'B')):
        if not tree.exists(numa):
            tree.new_child(NAMES[numa].lower(), CN1, uuid=numa)
        tree.update_inventory(numa, {'PCPU': inv(4)})
        tree.update_traits(numa, ['HW_NUMA_ROOT'])
        if not tree.exists(pf):
            tree.new_child(NAMES[pf].lower(), numa, uuid=pf)
        tree.update_inventory(pf, {'NET_BW_EGR_KILOBIT_PER_SEC': inv(10000), 'CUSTOM_VF': inv(8)})
        tree.update_traits(pf, ['CUSTOM_PHYSNET_' + physnet, 'CUSTOM_VNIC_TYPE_DIRECT'])


record('compute1 start-up', compute_update(rc, CN1, 'compute1', startup1))
record('compute1 tree', tree_state(CN1))

rc2 = report.SchedulerReportClient(adapter=client)
record('compute2 start-up', compute_update(rc2, CN2, 'compute2', lambda t: (
    t.update_inventory(CN2, {'VCPU': inv(8, 16.0), 'MEMORY_MB': inv(16384), 'DISK_GB': inv(50)}),
    t.update_traits(CN2, ['HW_CPU_X86_AVX2']))))

storage = report.SchedulerReportClient(adapter=client)
record('shared storage', compute_update(storage, SS, 'shared-storage', lambda t: (
    t.update_inventory(SS, {'DISK_GB': inv(2000)}),
    t.update_traits(SS, ['MISC_SHARES_VIA_AGGREGATE']),
    t.update_aggregates(SS, [AGG_A]))))
# nova-api mirrors a host aggregate onto compute providers by name
record('aggregate_add_host', outcome(rc.aggregate_add_host, ctx, AGG_B, host_name='compute2'))
record('compute2 tree', tree_state(CN2))
record('provider traits (client view)', sorted(rc.get_provider_traits(ctx, PF0).traits))
record('providers in tree (client view)', sorted(p['uuid'] for p in rc.get_providers_in_tree(ctx, CN1)))

# ---------------------------------------------------------------- scheduling
flat = flavor_request(2, 2048, 20, {'trait:HW_CPU_X86_AVX2': 'required'})
record('candidates: flavor', candidates(flat))
granular = flavor_request(1, 1024, 10, {
    'resources1:NET_BW_EGR_KILOBIT_PER_SEC': '1000', 'trait1:CUSTOM_PHYSNET_A': 'required',
    'resources2:NET_BW_EGR_KILOBIT_PER_SEC': '1000', 'trait2:CUSTOM_PHYSNET_B': 'required',
    'resources3:PCPU': '2', 'trait3:HW_NUMA_ROOT': 'required',
    'group_policy': 'isolate'})
record('candidates: granular groups and traits', candidates(granular))
none_fit = flavor_request(64, 1024, 10, {'trait:CUSTOM_RACK_A': 'required'})
record('candidates: nothing fits', candidates(none_fit))

# ---------------------------------------------------------------- claims
c_gran = candidates(granular)
areq1 = pick(c_gran, [CN1, PF0, PF1])
record('claim instance-1', outcome(rc.claim_resources, ctx, INST1, areq1, PROJ, USER1, '1.36', None))
record('instance-1 allocations', allocations(INST1))
# a second scheduler that believed instance-1 had nothing yet
record('claim with a stale consumer generation', outcome(
    rc.claim_resources, ctx, INST1, dict(areq1, consumer_generation=None), PROJ, USER1, '1.36', None))
record('claim with a wrong generation', outcome(
    rc.claim_resources, ctx, INST1, dict(areq1, consumer_generation=7), PROJ, USER1, '1.36', 7))
areq2 = pick(candidates(flat), [CN2])
record('claim instance-2', outcome(rc.claim_resources, ctx, INST2, areq2, PROJ, USER2, '1.36', None))
record('allocations on compute2 (client view)', sorted(
    rc.get_allocations_for_resource_provider(ctx, CN2).allocations.items()))

# ---------------------------------------------------------------- a cold migration
# conductor: the source allocation moves to the migration record
record('move instance-2 -> migration-1', outcome(rc.move_allocations, ctx, INST2, MIG1))
record('migration-1 allocations', allocations(MIG1))
record('instance-2 allocations after the move', allocations(INST2))
# scheduler: the instance claims on the destination (compute1, with shared storage)
areq_dest = pick(candidates(flavor_request(2, 2048, 20, {})), [CN1, SS])
record('claim instance-2 on the destination', outcome(rc.claim_resources, ctx, INST2, areq_dest, PROJ, USER2, '1.36', None))
record('instance-2 allocations on the destination', allocations(INST2))
# confirm: the source allocation (held by the migration) goes away
record('confirm: delete migration-1', outcome(rc.delete_allocation_for_instance, ctx, MIG1, consumer_type='migration'))
record('migration-1 after confirm', allocations(MIG1))

# a second resize of instance-2, reverted: the migration's allocation (the source)
# moves back to the instance once the destination's is dropped
MIG2 = U('migration-2')
NAMES[MIG2] = 'MIG2'
record('move instance-2 -> migration-2', outcome(rc.move_allocations, ctx, INST2, MIG2))
areq_back = pick(candidates(flavor_request(2, 2048, 20, {})), [CN2])
record('claim instance-2 on compute2', outcome(rc.claim_resources, ctx, INST2, areq_back, PROJ, USER2, '1.36', None))
record('revert: drop the destination', outcome(rc.delete_allocation_for_instance, ctx, INST2))
record('revert: move migration-2 -> instance-2', outcome(rc.move_allocations, ctx, MIG2, INST2))
record('instance-2 after the revert', allocations(INST2))
record('migration-2 after the revert', allocations(MIG2))

# ---------------------------------------------------------------- partial removals
record('detach a port: remove PF0 bandwidth', outcome(
    rc.remove_resources_from_instance_allocation, ctx, INST1,
    {PF0: {'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}}))
record('instance-1 after the port detach', allocations(INST1))
record('remove more than allocated', outcome(
    rc.remove_resources_from_instance_allocation, ctx, INST1,
    {PF1: {'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 99999}}}))
record('remove the shared storage tree from instance-2', outcome(
    rc.remove_provider_tree_from_instance_allocation, ctx, INST2, SS))
record('instance-2 after', allocations(INST2))

# ---------------------------------------------------------------- quota usage
record('quota: project', rc.get_usages_counts_for_quota(ctx, PROJ))
record('quota: project + user-1', rc.get_usages_counts_for_quota(ctx, PROJ, USER1))
record('quota: project + user-2', rc.get_usages_counts_for_quota(ctx, PROJ, USER2))
record('quota: another project', rc.get_usages_counts_for_quota(ctx, PROJ2, USER1))

# ---------------------------------------------------------------- compute updates


def update1(tree):
    tree.update_inventory(CN1, {
        'VCPU': inv(32, 4.0), 'MEMORY_MB': inv(65536, 1.5, reserved=512), 'DISK_GB': inv(100),
        'VGPU': inv(4)})
    tree.update_traits(CN1, ['COMPUTE_NET_ATTACH_INTERFACE', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_AVX512F'])
    tree.update_aggregates(CN1, [AGG_A, AGG_B])
    tree.update_traits(PF1, ['CUSTOM_PHYSNET_B'])


record('compute1 update', compute_update(rc, CN1, 'compute1', update1))
record('compute1 tree after the update', tree_state(CN1))
# a child that still has allocations (instance-1's port on PF1) cannot go: the
# update fails, nothing is lost
record('remove PF1 (it has allocations)', compute_update(rc, CN1, 'compute1', lambda t: t.exists(PF1) and t.remove(PF1)))
record('compute1 tree after the refused removal', tree_state(CN1))
# a child without allocations (PF0 since the port detach) goes
record('remove PF0', compute_update(rc, CN1, 'compute1', lambda t: t.exists(PF0) and t.remove(PF0)))
record('compute1 tree after the removal', tree_state(CN1))
record('release instance-1', outcome(rc.delete_allocation_for_instance, ctx, INST1))
record('remove PF1 now', compute_update(rc, CN1, 'compute1', lambda t: t.exists(PF1) and t.remove(PF1)))
record('compute1 tree after removing PF1', tree_state(CN1))

# ---------------------------------------------------------------- reshape
# an instance holds a VGPU of compute1's root; the driver moves VGPU inventory to a
# new pGPU child and the allocation with it, in one POST /reshaper
areq3 = {'allocations': {CN1: {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'VGPU': 1}}}}
record('claim instance-3 (a vGPU)', outcome(rc.claim_resources, ctx, INST3, areq3, PROJ, USER1, '1.36', None))


def reshape(tree):
    tree.update_inventory(CN1, {'VCPU': inv(32, 4.0), 'MEMORY_MB': inv(65536, 1.5, reserved=512), 'DISK_GB': inv(100)})
    if not tree.exists(PGPU):
        tree.new_child('compute1_pgpu0', CN1, uuid=PGPU)
    tree.update_inventory(PGPU, {'VGPU': inv(4)})


def move_vgpus(allocs):
    for a in allocs.values():
        vgpu = a['allocations'].get(CN1, {}).get('resources', {}).pop('VGPU', None)
        if vgpu:
            a['allocations'][PGPU] = {'resources': {'VGPU': vgpu}}
    return allocs


record('reshape', compute_update(rc, CN1, 'compute1', reshape, move_vgpus))
record('compute1 tree after the reshape', tree_state(CN1))
record('instance-3 after the reshape', allocations(INST3))
record('quota after the reshape', rc.get_usages_counts_for_quota(ctx, PROJ, USER1))

# ---------------------------------------------------------------- deletion
record('delete instance-3', outcome(rc.delete_allocation_for_instance, ctx, INST3))
record('delete instance-2', outcome(rc.delete_allocation_for_instance, ctx, INST2))
record('delete instance-2 again', outcome(rc.delete_allocation_for_instance, ctx, INST2))
record('quota after deletion', rc.get_usages_counts_for_quota(ctx, PROJ, USER1))
cn1 = objects.ComputeNode(uuid=CN1, host='compute1', hypervisor_hostname='compute1')
record('delete compute1 (its whole tree)', outcome(rc.delete_resource_provider, ctx, cn1))
record('compute1 after deletion', api('/resource_providers?in_tree=%s' % CN1)[1])
record('providers left', [p['uuid'] for p in api('/resource_providers')[1]['resource_providers']])

json.dump(transcript, sys.stdout, indent=1)
sys.stdout.write('\n')
