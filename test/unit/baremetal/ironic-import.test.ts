/**
 * Moving in from Ironic, the pure part (functions/core/baremetal/ironic-import.ts): a node
 * and an allocation as Ironic 21.4's API shows them become Berth's records; what keeps
 * one from being imported (an action in progress, a state Berth does not have, redacted
 * fields, broken links); the creation order; the comparison verify-ironic prints.
 */
import { describe, expect, it } from 'vitest';
import {
  allocationFromIronic,
  creationSeqs,
  isoMicros,
  linkProblems,
  nodeFromIronic,
  viewDifferences,
  ALLOCATION_FIELDS_FROM_IRONIC,
  NODE_FIELDS_FROM_IRONIC,
} from '../../../functions/core/baremetal/ironic-import.js';
import { ALL_STATES, STABLE_STATES, UNSTABLE_STATES } from '../../../functions/core/baremetal/states.js';
import { completeNode } from '../../../functions/store/baremetal/nodes.js';
import { NODE_FIELDS } from '../../../functions/baremetal/views.js';

const UUID = '270355d2-9630-4b35-bfa8-cf94df0b313f';
const ALLOC = 'd357b16e-bc54-4357-b088-da81c2bae477';

/** GET /v1/nodes/detail at 1.80 from Ironic 21.4 (fake-hardware), as recorded */
function ironicNode(over: Record<string, unknown> = {}): Record<string, unknown> {
  const link = (p: string) => [
    { href: `http://localhost:18641/v1/nodes/${UUID}${p}`, rel: 'self' },
    { href: `http://localhost:18641/nodes/${UUID}${p}`, rel: 'bookmark' },
  ];
  return {
    uuid: UUID,
    created_at: '2026-11-28T09:30:27.990787+00:00',
    updated_at: '2026-11-28T09:31:40.088093+00:00',
    automated_clean: null,
    bios_interface: 'fake',
    boot_interface: 'fake',
    boot_mode: null,
    clean_step: {},
    conductor_group: '',
    console_enabled: false,
    console_interface: 'fake',
    deploy_interface: 'fake',
    deploy_step: {},
    description: 'rack 4, slot 2',
    driver: 'fake-hardware',
    driver_info: { ipmi_password: '******', ipmi_address: '1.2.3.4' },
    driver_internal_info: { last_power_state_change: '2026-11-28T09:31:39.023441', deploy_steps: null },
    extra: { a: 1 },
    fault: null,
    inspection_finished_at: null,
    inspection_started_at: null,
    inspect_interface: 'fake',
    instance_info: { image_url: '******', configdrive: '******', traits: [] },
    instance_uuid: ALLOC,
    last_error: null,
    lessee: 'p-lessee',
    maintenance: false,
    maintenance_reason: null,
    management_interface: 'fake',
    name: 'n1',
    network_data: {},
    network_interface: 'noop',
    owner: 'p-owner',
    power_interface: 'fake',
    power_state: 'power off',
    properties: { cpus: 8, memory_mb: 65536 },
    protected: false,
    protected_reason: null,
    provision_state: 'available',
    provision_updated_at: '2026-11-28T09:31:37.530000+00:00',
    raid_config: {},
    raid_interface: 'fake',
    rescue_interface: 'fake',
    reservation: null,
    resource_class: 'baremetal',
    retired: false,
    retired_reason: null,
    secure_boot: null,
    storage_interface: 'noop',
    target_power_state: null,
    target_provision_state: null,
    target_raid_config: {},
    traits: ['CUSTOM_GPU', 'HW_CPU_X86_AVX2'],
    vendor_interface: 'fake',
    links: link(''),
    conductor: 'gabbi-ironic-18641',
    allocation_uuid: ALLOC,
    chassis_uuid: null,
    ports: link('/ports'),
    states: link('/states'),
    portgroups: link('/portgroups'),
    volume: link('/volume'),
    ...over,
  };
}

function ironicAllocation(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    uuid: ALLOC,
    created_at: '2026-11-28T09:31:40.045596+00:00',
    updated_at: '2026-11-28T09:31:40.078543+00:00',
    candidate_nodes: [],
    extra: { x: 1 },
    last_error: null,
    name: 'a1',
    owner: null,
    resource_class: 'baremetal',
    state: 'active',
    traits: [],
    links: [{ href: `http://localhost:18641/v1/allocations/${ALLOC}`, rel: 'self' }],
    node_uuid: UUID,
    ...over,
  };
}

describe('a node as Ironic shows it becomes a Berth node record', () => {
  it('carries every field Berth keeps, as shown; links, conductor and lock are derived', () => {
    const j = ironicNode();
    const imp = nodeFromIronic(j);
    expect(imp.blockers).toEqual([]);
    expect(imp.dropped).toEqual([]);
    for (const f of Object.keys(NODE_FIELDS_FROM_IRONIC)) expect((imp.record as Record<string, unknown>)[f], f).toEqual(j[f]);
    expect(Object.keys(imp.record).sort()).toEqual(Object.keys(NODE_FIELDS_FROM_IRONIC).sort());
    // a copy: changing the record does not change Ironic's answer
    (imp.record.extra as Record<string, unknown>).a = 2;
    expect(j.extra).toEqual({ a: 1 });
  });

  it('lists the secrets Ironic masked (the value is not carried) and what Berth has no place for', () => {
    const imp = nodeFromIronic(ironicNode({ chassis_uuid: '1be26c0b-03f2-4d2e-ae87-c02d7f33c123', shard: 'rack-1' }));
    expect(imp.masked).toEqual(['driver_info.ipmi_password', 'instance_info.image_url', 'instance_info.configdrive']);
    expect(imp.dropped).toEqual(['chassis_uuid', 'shard']);
    expect(imp.blockers).toEqual([]);
  });

  it('covers every field of the record but Berth’s own bookkeeping, and every field Berth’s API shows', () => {
    const all = Object.keys(completeNode({ uuid: UUID, driver: 'fake-hardware', created_at: 'x', seq: 1 }));
    const own = all.filter((f) => !(f in NODE_FIELDS_FROM_IRONIC)).sort();
    expect(own).toEqual(['lock', 'lock_action', 'seq', 'ver', 'vifs']);
    // Berth's view (views.ts): every field it shows comes from Ironic, but the lock's and newer Ironic's shard
    for (const f of NODE_FIELDS) if (f !== 'reservation' && f !== 'shard') expect(NODE_FIELDS_FROM_IRONIC, f).toHaveProperty(f);
    expect(Object.keys(ALLOCATION_FIELDS_FROM_IRONIC).sort()).toEqual(
      [
        'candidate_nodes',
        'created_at',
        'extra',
        'last_error',
        'name',
        'node_uuid',
        'owner',
        'resource_class',
        'state',
        'traits',
        'updated_at',
        'uuid',
      ].sort(),
    );
  });

  it('refuses a node in a transitional state, and one in a state Berth does not have; failure states are resting states', () => {
    for (const s of UNSTABLE_STATES) {
      const imp = nodeFromIronic(ironicNode({ provision_state: s, target_provision_state: 'active' }));
      expect(imp.blockers[0], s).toContain(`provision state "${s}": an action is in progress`);
    }
    for (const s of ['deploy hold', 'clean hold', 'servicing'])
      expect(nodeFromIronic(ironicNode({ provision_state: s })).blockers[0]).toContain('not one Berth');
    const resting = ALL_STATES.filter((s) => !UNSTABLE_STATES.includes(s));
    expect(resting).toEqual(expect.arrayContaining([...STABLE_STATES, 'deploy failed', 'clean failed', 'inspect failed', 'adopt failed']));
    for (const s of resting) expect(nodeFromIronic(ironicNode({ provision_state: s })).blockers, s).toEqual([]);
  });

  it('refuses a node a power action or a conductor’s lock is working on', () => {
    expect(nodeFromIronic(ironicNode({ target_power_state: 'power on' })).blockers).toEqual([
      'a power action to "power on" is in progress (wait until it ends)',
    ]);
    expect(nodeFromIronic(ironicNode({ reservation: 'conductor-1' })).blockers[0]).toContain('locked by conductor conductor-1');
  });

  it('refuses what the importing credentials may not read, and answers of the wrong shape', () => {
    const redacted = nodeFromIronic(
      ironicNode({
        last_error: '** Value Redacted - Requires baremetal:node:get:last_error permission. **',
        driver_internal_info: { content: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **' },
      }),
    );
    expect(redacted.blockers).toEqual([
      'Ironic redacts driver_internal_info for these credentials (import as a system-scoped admin)',
      'Ironic redacts last_error for these credentials (import as a system-scoped admin)',
    ]);
    const old = ironicNode();
    delete old.boot_mode;
    expect(nodeFromIronic(old).blockers).toEqual(["Ironic's answer has no boot_mode (is this Ironic's API at microversion 1.75 or newer?)"]);
    expect(nodeFromIronic(ironicNode({ maintenance: null, traits: 'x', uuid: 'nope' })).blockers).toEqual([
      'uuid is "nope", not a uuid',
      'maintenance is null, not a boolean',
      'traits is "x", not a strings',
    ]);
  });
});

describe('an allocation as Ironic shows it', () => {
  it('carries every field; active and error ones are imported, an allocating one is refused', () => {
    const imp = allocationFromIronic(ironicAllocation());
    expect(imp.blockers).toEqual([]);
    const { links: _links, ...shown } = ironicAllocation();
    expect(imp.record).toEqual(shown);
    expect(imp.dropped).toEqual([]);
    expect(allocationFromIronic(ironicAllocation({ state: 'error', node_uuid: null, last_error: 'no node' })).blockers).toEqual([]);
    expect(allocationFromIronic(ironicAllocation({ state: 'allocating', node_uuid: null })).blockers[0]).toContain('state "allocating"');
    expect(allocationFromIronic(ironicAllocation({ node_uuid: null })).blockers).toEqual(['active, yet it names no node']);
    expect(allocationFromIronic(ironicAllocation({ state: 'weird' })).blockers[0]).toContain('not one Berth knows');
  });
});

describe('links between nodes and allocations', () => {
  const node = (over: Record<string, unknown> = {}) => ({ uuid: UUID, instance_uuid: ALLOC, allocation_uuid: ALLOC, ...over }) as never;
  const alloc = (over: Record<string, unknown> = {}) => ({ uuid: ALLOC, state: 'active', node_uuid: UUID, ...over }) as never;
  it('hold as Ironic keeps them: nothing to report', () => {
    expect(linkProblems([node()], [alloc()])).toEqual(new Map());
    expect(
      linkProblems([node({ instance_uuid: 'nova-instance', allocation_uuid: null })], [alloc({ state: 'error', node_uuid: null, uuid: 'e1' })]),
    ).toEqual(new Map());
  });
  it('that do not hold are reported per object', () => {
    expect(linkProblems([node()], [])).toEqual(new Map([[UUID, [`its allocation ${ALLOC} is not in Ironic's allocation list`]]]));
    expect(linkProblems([node({ instance_uuid: 'x' })], [alloc()]).get(UUID)).toEqual([`its instance_uuid x is not its allocation's uuid ${ALLOC}`]);
    expect(linkProblems([node({ allocation_uuid: null })], [alloc()]).get(ALLOC)).toEqual([`its node ${UUID} names allocation none`]);
    expect(linkProblems([], [alloc()]).get(ALLOC)).toEqual([`its node ${UUID} is not in Ironic's node list`]);
    expect(linkProblems([node({ allocation_uuid: null })], [alloc({ state: 'error', node_uuid: null })]).get(ALLOC)).toEqual([
      `its uuid is the instance_uuid of node ${UUID}, which it is not bound to`,
    ]);
  });
});

describe('creation order', () => {
  it("reads Python's isoformat to the microsecond", () => {
    expect(isoMicros('2026-11-28T09:30:27.990787+00:00')).toBe(Date.parse('2026-11-28T09:30:27Z') * 1000 + 990787);
    expect(isoMicros('2026-11-28T09:30:27+02:00')).toBe(Date.parse('2026-11-28T07:30:27Z') * 1000);
    expect(isoMicros('2026-11-28T09:30:27.5')).toBe(Date.parse('2026-11-28T09:30:27Z') * 1000 + 500000);
    expect(isoMicros('yesterday')).toBeNaN();
  });
  it('keeps the listed order, strictly increasing, and computes the same twice', () => {
    const at = ['2026-11-28T09:30:27+00:00', '2026-11-28T09:30:27+00:00', '2026-11-28T09:30:26.000001+00:00', '2026-11-28T09:31:00+00:00'];
    const s = creationSeqs(at);
    const t = isoMicros(at[0]!);
    expect(s).toEqual([t, t + 1, t + 2, isoMicros(at[3]!)]);
    expect(creationSeqs(at)).toEqual(s);
  });
});

describe('two views compared field by field', () => {
  it('ignores dict key order and hosts in links; reports fields that differ or are missing', () => {
    const a = {
      uuid: UUID,
      extra: { a: 1, b: 2 },
      links: [{ href: 'http://ironic:6385/v1/nodes/x', rel: 'self' }],
      conductor: 'c1',
      traits: ['B', 'A'],
    };
    const b = {
      uuid: UUID,
      extra: { b: 2, a: 1 },
      links: [{ href: 'http://127.0.0.1:1234/v1/nodes/x', rel: 'self' }],
      conductor: 'berth',
      traits: ['A', 'B'],
    };
    expect(viewDifferences(a, b, { ignore: new Set(['conductor']), unordered: new Set(['traits']) })).toEqual([]);
    expect(viewDifferences(a, b, { ignore: new Set(['conductor']) })).toEqual([{ field: 'traits', ironic: ['B', 'A'], berth: ['A', 'B'] }]);
    expect(viewDifferences({ x: 1.5, y: null }, { x: 1.5, z: 1 })).toEqual([
      { field: 'y', ironic: null, berth: '(absent)' },
      { field: 'z', ironic: '(absent)', berth: 1 },
    ]);
  });
});
