/**
 * How a node looks as a resource provider and an allocation as a Placement consumer
 * (functions/bridge/shape.ts): the class name as Nova's ironic driver
 * normalises it (checked against Nova's own function on random names), the reserved
 * unit, traits, the project aggregates, the consumer's project, the forest's providers
 * as candidates.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  allocationConsumer,
  nodeProviderShape,
  nodeUnitReserved,
  placementResourceClass,
  projectAggregate,
  providerCandidates,
  sameShape,
} from '../../../functions/bridge/shape.js';
import { chooseCandidates } from '../../../functions/core/baremetal/allocations.js';
import type { NodeRecord } from '../../../functions/core/baremetal/records.js';
import { newProviderRecord, type ProviderRecord, providerRecord } from '../../../functions/core/placement/model.js';
import { uuid5 } from '../../../functions/core/compat/uuid.js';
import { needs } from '../../optional.js';

const python = (code: string, input: string) => execFileSync('/usr/bin/python3', ['-c', code], { input, encoding: 'utf8' });

const nova = needs('nova');
nova.describe("the class name, as Nova's ironic driver normalises it", () => {
  it('equals nova.utils.normalize_rc_name on random resource classes (ASCII, punctuation, runs, Unicode)', () => {
    const names = fc.sample(
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.stringMatching(/^[a-z0-9._ -]{1,30}$/),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
        fc.constantFrom('baremetal', 'bare-metal.gold', 'GPU__node', '--x--', 'ÄÖü-1', '日本'),
      ),
      { numRuns: 400, seed: 25 },
    );
    const code = 'import sys, json\nfrom nova import utils\nprint(json.dumps([utils.normalize_rc_name(n) for n in json.load(sys.stdin)]))';
    const expected = JSON.parse(python(code, JSON.stringify(names))) as string[];
    expect(names.map(placementResourceClass)).toEqual(expected);
  });
});

describe('a node as a resource provider', () => {
  const node = (over: Partial<NodeRecord> = {}): NodeRecord =>
    ({
      uuid: '9b2a1f3e-1111-4222-8333-444455556666',
      seq: 1_700_000_000_000_001,
      resource_class: 'baremetal-gold',
      traits: ['CUSTOM_RAID', 'HW_CPU_X86_AVX2'],
      owner: null,
      lessee: null,
      provision_state: 'available',
      maintenance: false,
      power_state: 'power off',
      instance_uuid: null,
      retired: false,
      ...over,
    }) as NodeRecord;

  it('has one unit of its normalised class, reserved exactly when an allocation could not take the node', () => {
    const shape = nodeProviderShape(node());
    expect(shape.uuid).toBe(node().uuid);
    expect(shape.name).toBe(node().uuid);
    expect(shape.seq).toBe(node().seq);
    expect(shape.inventories).toEqual({
      CUSTOM_BAREMETAL_GOLD: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0 },
    });
    for (const [over, reserved] of [
      [{}, false],
      [{ provision_state: 'manageable' }, true],
      [{ provision_state: 'active' }, true],
      [{ maintenance: true }, true],
      [{ power_state: null }, true],
      [{ instance_uuid: 'a' }, true],
      // its own allocation's instance: the unit is used by the allocation's consumer, not reserved
      [{ instance_uuid: 'a', allocation_uuid: 'a' }, false],
      [{ instance_uuid: 'a', allocation_uuid: 'a', provision_state: 'active' }, true],
      [{ retired: true }, true],
    ] as Array<[Partial<NodeRecord>, boolean]>) {
      expect(nodeUnitReserved(node(over)), JSON.stringify(over)).toBe(reserved);
      expect(nodeProviderShape(node(over)).inventories.CUSTOM_BAREMETAL_GOLD!.reserved).toBe(reserved ? 1 : 0);
    }
  });

  it('has the node traits, and the aggregates of its owner and lessee (uuid5 names)', () => {
    const shape = nodeProviderShape(node({ owner: 'p1', lessee: 'p2', traits: ['CUSTOM_B', 'CUSTOM_A', 'CUSTOM_A'] }));
    expect(shape.traits).toEqual(['CUSTOM_A', 'CUSTOM_B']);
    expect(shape.aggregates).toEqual([projectAggregate('p1'), projectAggregate('p2')]);
    expect(nodeProviderShape(node({ owner: 'p1', lessee: 'p1' })).aggregates).toEqual([projectAggregate('p1')]);
    expect(projectAggregate('p1')).not.toBe(projectAggregate('p2'));
  });

  it('no class, no inventory; a class still allocated keeps its unit, fully reserved', () => {
    expect(nodeProviderShape(node({ resource_class: null })).inventories).toEqual({});
    expect(nodeProviderShape(node({ resource_class: '' })).inventories).toEqual({});
    const held = {
      inventories: { CUSTOM_OLD: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 } },
      usages: { CUSTOM_OLD: 1 },
    };
    const shape = nodeProviderShape(node({ resource_class: 'new' }), held);
    expect(Object.keys(shape.inventories).sort()).toEqual(['CUSTOM_NEW', 'CUSTOM_OLD']);
    expect(shape.inventories.CUSTOM_OLD!.reserved).toBe(1);
    // given back: it goes
    expect(Object.keys(nodeProviderShape(node({ resource_class: 'new' }), { ...held, usages: { CUSTOM_OLD: 0 } }).inventories)).toEqual([
      'CUSTOM_NEW',
    ]);
  });

  it('changes shape exactly when something Placement sees changes', () => {
    expect(sameShape(nodeProviderShape(node()), nodeProviderShape(node({ extra: { a: 1 } } as never)))).toBe(true);
    expect(sameShape(nodeProviderShape(node()), nodeProviderShape(node({ traits: ['HW_CPU_X86_AVX2', 'CUSTOM_RAID'] })))).toBe(true);
    expect(sameShape(nodeProviderShape(node()), nodeProviderShape(node({ maintenance: true })))).toBe(false);
    expect(sameShape(nodeProviderShape(node()), nodeProviderShape(node({ traits: [] })))).toBe(false);
    expect(sameShape(nodeProviderShape(node()), nodeProviderShape(node({ owner: 'x' })))).toBe(false);
  });
});

describe('uuid5', () => {
  it("is Python's uuid.uuid5", () => {
    const names = fc.sample(fc.string({ maxLength: 40 }), { numRuns: 50, seed: 5 });
    const ns = 'c8b0ad3c-7e25-4a51-a4a2-1f5b7d1e9c00';
    const code = `import sys, json, uuid\nprint(json.dumps([str(uuid.uuid5(uuid.UUID('${ns}'), n)) for n in json.load(sys.stdin)]))`;
    expect(names.map((n) => uuid5(ns, n))).toEqual(JSON.parse(python(code, JSON.stringify(names))));
  });
});

describe("an allocation's consumer", () => {
  const incomplete = { project: 'incomplete-p', user: 'incomplete-u' };
  it("belongs to the owner, else the creator's project; to the creator; else to the incomplete consumer", () => {
    expect(allocationConsumer({ owner: 'o', consumer_project: 'c', consumer_user: 'u' }, incomplete)).toEqual({ project: 'o', user: 'u' });
    expect(allocationConsumer({ owner: null, consumer_project: 'c', consumer_user: 'u' }, incomplete)).toEqual({ project: 'c', user: 'u' });
    expect(allocationConsumer({ owner: null }, incomplete)).toEqual(incomplete);
  });
});

describe("the forest's providers as an allocation's candidates", () => {
  const provider = (uuid: string, over: Partial<ProviderRecord> = {}): ProviderRecord =>
    providerRecord({
      ...newProviderRecord({ uuid, name: uuid, parent: undefined, root: uuid, seq: 7, at: '' }),
      generation: 1,
      inventories: { CUSTOM_GOLD: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 } },
      invVersion: 1,
      ...over,
    });
  const req = {
    uuid: 'a1',
    name: 'a1',
    resource_class: 'gold',
    traits: [] as string[],
    candidate_nodes: [] as string[],
    owner: null as string | null,
  };
  const reserved = { CUSTOM_GOLD: { total: 1, reserved: 1, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 } };

  it('are the providers with a free unit and no allocation; Ironic filters them (traits, owner, candidates, name first)', () => {
    const ps = [
      provider('free', { traits: ['CUSTOM_X'] }),
      provider('reserved', { inventories: reserved }),
      provider('used', { usages: { CUSTOM_GOLD: 1 } }),
      provider('held', { allocationCount: 1 }),
      provider('owned', { aggregates: [projectAggregate('p1')], traits: ['CUSTOM_X'] }),
      provider('other-class', { inventories: { CUSTOM_SILVER: reserved.CUSTOM_GOLD } }),
    ];
    const all = providerCandidates(ps, req).map((c) => c.uuid);
    expect(all.sort()).toEqual(['free', 'owned']);
    expect(chooseCandidates(providerCandidates(ps, { ...req, owner: 'p1' }), { ...req, owner: 'p1' }).map((c) => c.uuid)).toEqual(['owned']);
    expect(
      chooseCandidates(providerCandidates(ps, { ...req, traits: ['CUSTOM_X'] }), { ...req, traits: ['CUSTOM_X'] })
        .map((c) => c.uuid)
        .sort(),
    ).toEqual(['free', 'owned']);
    expect(() => chooseCandidates(providerCandidates(ps, { ...req, traits: ['CUSTOM_Y'] }), { ...req, traits: ['CUSTOM_Y'] })).toThrow(
      'no suitable nodes have the requested traits CUSTOM_Y',
    );
    expect(() => chooseCandidates(providerCandidates(ps, { ...req, owner: 'p9' }), { ...req, owner: 'p9' })).toThrow(
      'no available nodes match the resource class gold',
    );
    const named = chooseCandidates(providerCandidates(ps, req, 'owned'), req, () => 0);
    expect(named[0]!.uuid).toBe('owned');
    expect(providerCandidates(ps, req)[0]!.seq).toBe(7);
  });
});
