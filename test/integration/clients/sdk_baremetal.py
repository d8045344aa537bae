"""openstacksdk's bare-metal proxy (Debian python3-openstacksdk, unmodified) against a Berth.

usage: python3 sdk_baremetal.py ENDPOINT ROUNDS
Calls what an SDK user calls — conn.baremetal.drivers / get_driver, validate_node,
attach_vif_to_node / list_node_vifs / detach_vif_from_node — then repeats the pattern of
the SDK's own allocation tests ROUNDS times: a fresh node taken to available with the
SDK's waits, powered off without waiting, and at once one allocation that must get it and
one that cannot. Prints one JSON document with what it saw; the test judges it.
"""
import json
import sys

import openstack

endpoint, rounds = sys.argv[1], int(sys.argv[2])
conn = openstack.connection.Connection(
    auth_type='none', baremetal_endpoint_override=endpoint, baremetal_api_version='1.78')
bm = conn.baremetal
out = {}

out['drivers'] = [[d.name, d.hosts] for d in bm.drivers()]
out['drivers_detail'] = [[d.name, d.default_deploy_interface, d.enabled_raid_interfaces] for d in bm.drivers(details=True)]
driver = bm.get_driver('fake-hardware')
out['driver'] = {'name': driver.name, 'hosts': driver.hosts, 'default_power_interface': driver.default_power_interface}

node = bm.create_node(driver='fake-hardware', name='sdk-node')
out['validate'] = {k: [v.result, v.reason] for k, v in bm.validate_node(node, required=('boot', 'deploy', 'power')).items()}
bm.attach_vif_to_node(node, 'sdk-vif-1')
bm.attach_vif_to_node(node, 'sdk-vif-2')
out['vifs_attached'] = bm.list_node_vifs(node)
out['detached'] = [bm.detach_vif_from_node(node, 'sdk-vif-1'), bm.detach_vif_from_node(node, 'sdk-vif-1')]
out['vifs_left'] = bm.list_node_vifs(node)

out['rounds'] = []
for i in range(rounds):
    rc = 'sdk-race-%d' % i
    n = bm.create_node(driver='fake-hardware', resource_class=rc)
    bm.set_node_provision_state(n, 'manage', wait=True)
    bm.set_node_provision_state(n, 'provide', wait=True)
    # as the SDK's test_allocation_list: power off without waiting, allocate at once
    bm.set_node_power_state(n, 'power off')
    a1 = bm.create_allocation(resource_class=rc)
    a2 = bm.create_allocation(resource_class=rc + '-none')
    a1 = bm.wait_for_allocation(a1, ignore_error=True)
    a2 = bm.wait_for_allocation(a2, ignore_error=True)
    out['rounds'].append({'node': n.id, 'got': a1.node_id, 'state': a1.state, 'last_error': a1.last_error,
                          'other_state': a2.state, 'other_error': a2.last_error, 'rc': rc})

print(json.dumps(out))
