"""Nova's own Placement client (SchedulerReportClient, Debian's python3-nova) across a
switch from one Placement to another, in ONE process: what nova-compute and the
scheduler do when an operator moves Placement under them without restarting them.

Phase 1, against ENDPOINT: a compute node starts (a nested tree: NUMA nodes with NIC
PFs, traits, an aggregate), a sharing storage provider joins the aggregate, the
scheduler claims two instances (one across the tree and the storage), and the compute
node's next periodic update meets the generations those claims moved and refreshes
its cache (as nova-compute does). It prints one JSON line, then waits for a line on
stdin:
  `switch URL`  the same clients (their caches, the generations they hold) continue
                against URL: the adapter's endpoint is all that changes;
  `stay`        they continue against ENDPOINT (the control run).
Phase 2: the compute node's next update (inventory, traits, aggregates: written with
the cached generations), traits set from the cache, a new instance claimed, one moved
to a migration record, a port's bandwidth removed, the migration confirmed. It prints a
second JSON line: the transcript and the status of every request Nova made in it.

usage: /usr/bin/python3 nova_continue.py ENDPOINT
"""
import json
import sys
import uuid

from nova_kit import adapter, allocations, compute_update, ctx, inv, outcome, report, tree_state

ENDPOINT = sys.argv[1]
NS = uuid.UUID('2b6f8d10-0000-4000-8000-000000000000')


def U(name):
    return str(uuid.uuid5(NS, name))


CN1, NUMA0, NUMA1, PF0, PF1, SS = U('cn1'), U('cn1-numa0'), U('cn1-numa1'), U('cn1-pf0'), U('cn1-pf1'), U('shared-storage')
AGG_A, AGG_B = U('agg-a'), U('agg-b')
PROJ, USER = 'proj-nova', 'user-1'
INST1, INST2, INST3, MIG1 = U('instance-1'), U('instance-2'), U('instance-3'), U('migration-1')

client = adapter(ENDPOINT)
phase = ['start-up']
requests = []
_request = client.request


def counted(url, method, **kw):
    """every request Nova makes, with the answer's status"""
    r = _request(url, method, **kw)
    requests.append([phase[0], method, url, r.status_code])
    return r


client.request = counted
compute = report.SchedulerReportClient(adapter=client)
storage = report.SchedulerReportClient(adapter=client)
scheduler = report.SchedulerReportClient(adapter=client)
transcript = []


def record(step, value):
    transcript.append([step, value])


def startup(tree):
    tree.update_inventory(CN1, {'VCPU': inv(16, 4.0), 'MEMORY_MB': inv(32768, 1.5, reserved=512), 'DISK_GB': inv(100)})
    tree.update_traits(CN1, ['COMPUTE_NET_ATTACH_INTERFACE', 'HW_CPU_X86_AVX2', 'CUSTOM_RACK_A'])
    tree.update_aggregates(CN1, [AGG_A])
    for numa, pf, physnet in ((NUMA0, PF0, 'A'), (NUMA1, PF1, 'B')):
        if not tree.exists(numa):
            tree.new_child('compute1_' + numa[:8], CN1, uuid=numa)
        tree.update_inventory(numa, {'PCPU': inv(4)})
        tree.update_traits(numa, ['HW_NUMA_ROOT'])
        if not tree.exists(pf):
            tree.new_child('compute1_' + pf[:8], numa, uuid=pf)
        tree.update_inventory(pf, {'NET_BW_EGR_KILOBIT_PER_SEC': inv(10000), 'CUSTOM_VF': inv(8)})
        tree.update_traits(pf, ['CUSTOM_PHYSNET_' + physnet, 'CUSTOM_VNIC_TYPE_DIRECT'])


def claim(consumer, allocs):
    return outcome(scheduler.claim_resources, ctx, consumer, {'allocations': {rp: {'resources': r} for rp, r in allocs.items()}},
                   PROJ, USER, '1.36', None)


# ---------------------------------------------------------------- phase 1: the source
record('compute start-up', compute_update(compute, CN1, 'compute1', startup))
record('storage start-up', compute_update(storage, SS, 'shared-storage', lambda t: (
    t.update_inventory(SS, {'DISK_GB': inv(2000)}),
    t.update_traits(SS, ['MISC_SHARES_VIA_AGGREGATE']),
    t.update_aggregates(SS, [AGG_A]))))
record('claim instance-1', claim(INST1, {CN1: {'VCPU': 2, 'MEMORY_MB': 2048}, PF0: {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}))
record('claim instance-2', claim(INST2, {CN1: {'VCPU': 1, 'MEMORY_MB': 1024}, SS: {'DISK_GB': 20}}))


def more_memory(tree):
    tree.update_inventory(CN1, {'VCPU': inv(16, 4.0), 'MEMORY_MB': inv(65536, 1.5, reserved=512), 'DISK_GB': inv(100)})


# the claims moved CN1's generation: this update refreshes the compute node's cache
record('compute update after the claims', compute_update(compute, CN1, 'compute1', more_memory))
record('tree', tree_state(client, CN1))
print(json.dumps({'phase': 1, 'transcript': transcript}), flush=True)

# ---------------------------------------------------------------- the switch
command = sys.stdin.readline().split()
if command and command[0] == 'switch':
    client.endpoint_override = command[1]
transcript = []
phase[0] = 'after the switch'


def update(tree):
    tree.update_inventory(CN1, {'VCPU': inv(24, 4.0), 'MEMORY_MB': inv(65536, 1.5, reserved=1024), 'DISK_GB': inv(100)})
    tree.update_traits(CN1, ['COMPUTE_NET_ATTACH_INTERFACE', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_AVX512F', 'CUSTOM_RACK_A'])
    tree.update_aggregates(CN1, [AGG_A, AGG_B])
    tree.update_inventory(PF1, {'NET_BW_EGR_KILOBIT_PER_SEC': inv(25000), 'CUSTOM_VF': inv(8)})


# ---------------------------------------------------------------- phase 2: where it continues
record('compute update (cached generations)', compute_update(compute, CN1, 'compute1', update))
record('traits of NUMA1 (cached generation)', outcome(compute.set_traits_for_provider, ctx, NUMA1, ['HW_NUMA_ROOT', 'CUSTOM_RACK_A']))
record('claim instance-3', claim(INST3, {CN1: {'VCPU': 4, 'MEMORY_MB': 4096}, SS: {'DISK_GB': 40}}))
record('move instance-2 -> migration-1', outcome(scheduler.move_allocations, ctx, INST2, MIG1))
record('detach a port of instance-1', outcome(scheduler.remove_resources_from_instance_allocation, ctx, INST1,
                                              {PF0: {'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}}))
record('confirm: delete migration-1', outcome(scheduler.delete_allocation_for_instance, ctx, MIG1, consumer_type='migration'))
for c in (INST1, INST2, INST3, MIG1):
    record('allocations of %s' % c, allocations(client, c))
record('quota', scheduler.get_usages_counts_for_quota(ctx, PROJ, USER))
record('tree', tree_state(client, CN1))
print(json.dumps({'phase': 2, 'transcript': transcript, 'requests': [r for r in requests if r[0] == phase[0]]}), flush=True)
