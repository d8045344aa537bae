/**
 * The pure claim, consumer-generation, usage-aggregate and reshaper rules
 * (functions/core/{claim,consumers,usage,reshaper}.ts).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { INVENTORY_DEFAULTS, capacity, type Inventory, type ProviderRecord } from '../../../functions/core/placement/model.js';
import {
  checkConsumerGenerations,
  checkProvidersExist,
  classesToLookUp,
  planAllocations,
  providersToRead,
  type ClaimPlan,
  type ConsumerRequest,
  type ConsumerState,
} from '../../../functions/core/placement/claim.js';
import { consumerGenerationConflict, type ConsumerRecord } from '../../../functions/core/placement/consumers.js';
import { sumUsage, totalUsagesView, usageDeltas, usagesByTypeView } from '../../../functions/core/placement/usage.js';
import { planReshape, checkReshape, type InventoryReplacement } from '../../../functions/core/placement/reshaper.js';

const NOW = '2026-01-01T00:00:00.000Z';
const inv = (total: number, more: Partial<Inventory> = {}): Inventory => ({ total, ...INVENTORY_DEFAULTS, ...more });

function rp(uuid: string, inventories: Record<string, Inventory>, usages: Record<string, number> = {}, generation = 0): ProviderRecord {
  return {
    uuid,
    name: uuid,
    generation,
    root: uuid,
    inventories,
    invVersion: 3,
    usages,
    traits: [],
    aggregates: [],
    children: 0,
    allocationCount: 0,
    createdAt: NOW,
    updatedAt: NOW,
    seq: 0,
  };
}

function consumer(uuid: string, allocations: ConsumerRecord['allocations'], more: Partial<ConsumerRecord> = {}): ConsumerRecord {
  return { uuid, project: 'p', user: 'u', type: null, generation: 1, allocations, createdAt: NOW, updatedAt: NOW, ...more };
}

const req = (uuid: string, allocations: ConsumerRequest['allocations'], more: Partial<ConsumerRequest> = {}): ConsumerRequest => ({
  uuid,
  allocations,
  project: 'p',
  user: 'u',
  generation: { check: false },
  ...more,
});

const providers = (...ps: ProviderRecord[]) => new Map(ps.map((p) => [p.uuid, p]));
const plan = (requests: ConsumerRequest[], states: Map<string, ConsumerState>, ps: Map<string, ProviderRecord>, missing: string[] = []) =>
  planAllocations(requests, states, ps, { missingClasses: new Set(missing), now: NOW });

describe('consumer generations', () => {
  it('follow the microversion band rules', () => {
    const c = consumer('c', {}, { generation: 3 });
    expect(consumerGenerationConflict(c, { check: false })).toBeUndefined();
    expect(consumerGenerationConflict(undefined, { check: false })).toBeUndefined();
    expect(consumerGenerationConflict(undefined, { check: true, expected: null })).toBeUndefined();
    expect(consumerGenerationConflict(undefined, { check: true, expected: 0 })).toBe('consumer generation conflict - expected null but got 0');
    expect(consumerGenerationConflict(c, { check: true, expected: null })).toBe('consumer generation conflict - expected 3 but got None');
    expect(consumerGenerationConflict(c, { check: true, expected: 2 })).toBe('consumer generation conflict - expected 3 but got 2');
    expect(consumerGenerationConflict(c, { check: true, expected: 3 })).toBeUndefined();
  });

  it('are checked for every consumer before anything else, in request order', () => {
    const states = new Map<string, ConsumerState>([['b', { record: consumer('b', {}, { generation: 2 }) }]]);
    const requests = [
      req('a', { missing: { VCPU: 1 } }, { generation: { check: true, expected: null } }),
      req('b', {}, { generation: { check: true, expected: 1 } }),
    ];
    expect(checkConsumerGenerations(requests, states)).toEqual({
      error: 'consumer_generation',
      detail: 'consumer generation conflict - expected 2 but got 1',
    });
    expect(checkProvidersExist(requests, new Map())).toMatchObject({ error: 'provider_missing', provider: 'missing' });
  });
});

describe('planAllocations', () => {
  const A = rp(
    'A',
    { VCPU: inv(10, { reserved: 2, allocation_ratio: 1.5 }), MEMORY_MB: inv(1024, { min_unit: 64, max_unit: 512, step_size: 64 }) },
    { VCPU: 5 },
  );
  const B = rp('B', { DISK_GB: inv(100) });

  it('reports an unknown class before inventory problems, then providers without any requested inventory', () => {
    const none = rp('N', { PCPU: inv(1) });
    expect(plan([req('c', { N: { VCPU: 1 }, A: { CUSTOM_X: 1 } })], new Map(), providers(A, none), ['CUSTOM_X'])).toMatchObject({
      error: 'class_missing',
      detail: 'No such resource class CUSTOM_X.',
    });
    expect(plan([req('c', { N: { MEMORY_MB: 64, VCPU: 1 } })], new Map(), providers(none))).toEqual({
      error: 'invalid_inventory',
      detail: "Inventory for 'VCPU, MEMORY_MB' on resource provider 'N' invalid.",
    });
    expect(plan([req('c', { A: { VCPU: 1, DISK_GB: 1 } })], new Map(), providers(A))).toEqual({
      error: 'invalid_inventory',
      detail: "Inventory for 'DISK_GB' on resource provider 'A' invalid.",
    });
  });

  it('checks min_unit, max_unit, step_size and (total - reserved) * ratio against usage without the replaced allocations', () => {
    for (const n of [32, 576, 96])
      expect(plan([req('c', { A: { MEMORY_MB: n } })], new Map(), providers(A))).toMatchObject({
        error: 'invalid_inventory',
        detail: expect.stringContaining('violate inventory constraints'),
      });
    expect(capacity(A.inventories.VCPU!)).toBe(12);
    expect(plan([req('c', { A: { VCPU: 8 } })], new Map(), providers(A))).toMatchObject({ detail: expect.stringContaining('exceed the capacity') });
    expect(plan([req('c', { A: { VCPU: 7 } })], new Map(), providers(A))).not.toHaveProperty('error');
    // the consumer's own 5 are replaced: 12 fit
    const states = new Map([['c', { record: consumer('c', { A: { VCPU: 5 } }) }]]);
    expect(plan([req('c', { A: { VCPU: 12 } })], states, providers(A))).not.toHaveProperty('error');
  });

  it('checks the sum of all consumers of a request on one provider', () => {
    const r = [req('a', { B: { DISK_GB: 60 } }), req('b', { B: { DISK_GB: 41 } })];
    expect(plan(r, new Map(), providers(B))).toMatchObject({ detail: expect.stringContaining("'DISK_GB' on resource provider 'B'") });
    expect(plan([req('a', { B: { DISK_GB: 60 } }), req('b', { B: { DISK_GB: 40 } })], new Map(), providers(B))).not.toHaveProperty('error');
  });

  it('plans deltas, limits, generation bumps, rows and the consumer record', () => {
    const states = new Map([['c', { record: consumer('c', { A: { VCPU: 5 }, B: { DISK_GB: 10 } }, { generation: 4, type: 'INSTANCE' }) }]]);
    const Bused = rp('B', { DISK_GB: inv(100) }, { DISK_GB: 10 });
    const p = plan([req('c', { A: { VCPU: 6, MEMORY_MB: 128 } }, { project: 'p2' })], states, providers(A, Bused)) as ClaimPlan;
    const a = p.providers.get('A')!;
    expect(a).toMatchObject({ generationDelta: 1, usedDelta: { VCPU: 1, MEMORY_MB: 128 }, allocsDelta: 0, limits: { VCPU: 11, MEMORY_MB: 896 } });
    // B only loses the allocation: no generation bump, no capacity condition (as upstream)
    expect(p.providers.get('B')).toMatchObject({ generationDelta: 0, usedDelta: { DISK_GB: -10 }, allocsDelta: -1, limits: {} });
    expect(p.rows).toEqual([
      { provider: 'A', consumer: 'c', resources: { VCPU: 6, MEMORY_MB: 128 }, generation: 5 },
      { provider: 'B', consumer: 'c' },
    ]);
    expect(p.consumers[0]!.after).toMatchObject({ generation: 5, project: 'p2', type: 'INSTANCE', allocations: { A: { VCPU: 6, MEMORY_MB: 128 } } });
  });

  it('empties a consumer: its old providers are in the allocation list (bumped), the record goes', () => {
    const Bused = rp('B', { DISK_GB: inv(100) }, { DISK_GB: 10 });
    const states = new Map([['c', { record: consumer('c', { B: { DISK_GB: 10 } }) }]]);
    expect(providersToRead([req('c', {})], states)).toEqual(['B']);
    const p = plan([req('c', {})], states, providers(Bused)) as ClaimPlan;
    expect(p.providers.get('B')).toMatchObject({ generationDelta: 1, usedDelta: { DISK_GB: -10 }, allocsDelta: -1 });
    expect(p.consumers).toEqual([{ uuid: 'c', before: states.get('c')!.record, legacyBefore: undefined, after: undefined }]);
    // nothing before, nothing after: nothing at all (no record is created)
    expect(plan([req('new', {})], new Map(), providers())).toEqual({ providers: new Map(), rows: [], consumers: [] });
  });

  it('replaces legacy rows of a consumer without record', () => {
    const Bused = rp('B', { DISK_GB: inv(100) }, { DISK_GB: 30 });
    const states = new Map<string, ConsumerState>([['c', { legacy: { B: { DISK_GB: 30 } } }]]);
    const p = plan([req('c', { B: { DISK_GB: 90 } })], states, providers(Bused)) as ClaimPlan;
    expect(p.providers.get('B')).toMatchObject({ usedDelta: { DISK_GB: 60 }, allocsDelta: 0, limits: { DISK_GB: 40 } });
    expect(p.consumers[0]).toMatchObject({ legacyBefore: { B: { DISK_GB: 30 } }, after: { generation: 1 } });
  });

  it('only asks the catalog about custom classes a provider has no inventory of', () => {
    const C = rp('C', { CUSTOM_A: inv(4) });
    expect(classesToLookUp([req('c', { C: { CUSTOM_A: 1, CUSTOM_B: 1, VCPU: 1 } })], new Map(), providers(C))).toEqual(['CUSTOM_B']);
  });

  it('property: accepted plans never over-commit and keep usage equal to the sum of allocations', () => {
    const classes = ['VCPU', 'DISK_GB'];
    const arb = fc.record({
      totals: fc.array(
        fc.record({ total: fc.integer({ min: 1, max: 20 }), reserved: fc.integer({ min: 0, max: 3 }), ratio: fc.constantFrom(1, 1.5, 2) }),
        {
          minLength: 2,
          maxLength: 2,
        },
      ),
      ops: fc.array(
        fc.record({
          consumer: fc.integer({ min: 0, max: 4 }),
          alloc: fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: 1 }), fc.integer({ min: 1, max: 9 })), { maxLength: 3 }),
        }),
        { maxLength: 30 },
      ),
    });
    fc.assert(
      fc.property(arb, ({ totals, ops }) => {
        const ps = new Map<string, ProviderRecord>();
        totals.forEach((t, i) => {
          const inventories = Object.fromEntries(
            classes.map((c) => [c, inv(t.total, { reserved: Math.min(t.reserved, t.total), allocation_ratio: t.ratio })]),
          );
          ps.set(`P${i}`, rp(`P${i}`, inventories, {}));
        });
        const records = new Map<string, ConsumerRecord>();
        for (const op of ops) {
          const c = `c${op.consumer}`;
          const allocations: Record<string, Record<string, number>> = {};
          for (const [p, k, n] of op.alloc) (allocations[`P${p}`] ??= {})[classes[k]!] = n;
          const states = new Map<string, ConsumerState>();
          if (records.has(c)) states.set(c, { record: records.get(c)! });
          const out = plan([req(c, allocations)], states, ps);
          if ('error' in out) continue;
          for (const ch of out.providers.values()) {
            const p = ps.get(ch.uuid)!;
            // the transaction's capacity conditions hold for the state the plan read
            for (const [rc, lim] of Object.entries(ch.limits)) expect(p.usages[rc] ?? 0).toBeLessThanOrEqual(lim);
            const usages = { ...p.usages };
            for (const [rc, d] of Object.entries(ch.usedDelta)) usages[rc] = (usages[rc] ?? 0) + d;
            ps.set(ch.uuid, { ...p, usages, generation: p.generation + ch.generationDelta, allocationCount: p.allocationCount + ch.allocsDelta });
          }
          for (const ch of out.consumers) {
            if (ch.after) records.set(ch.uuid, ch.after);
            else records.delete(ch.uuid);
          }
        }
        for (const p of ps.values()) {
          let holders = 0;
          for (const rc of classes) {
            const sum = [...records.values()].reduce((a, r) => a + (r.allocations[p.uuid]?.[rc] ?? 0), 0);
            expect(p.usages[rc] ?? 0).toBe(sum);
            expect(sum).toBeLessThanOrEqual(capacity(p.inventories[rc]!));
          }
          for (const r of records.values()) if (r.allocations[p.uuid]) holders++;
          expect(p.allocationCount).toBe(holders);
        }
        for (const r of records.values()) expect(Object.keys(r.allocations).length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });
});

describe('usage aggregates', () => {
  const shard = () => 0;
  it('one item per user (a project is the sum of its users), merged, and cancel out when nothing changes for an item', () => {
    const before = consumer('c', { A: { VCPU: 2 }, B: { VCPU: 1, DISK_GB: 5 } }, { type: 'INSTANCE' });
    const after = { ...before, allocations: { A: { VCPU: 4 } }, user: 'u2' };
    const d = usageDeltas([{ uuid: 'c', before, after }], shard);
    expect(d).toEqual([
      { project: 'p', user: 'u', shard: 0, add: { 'n:INSTANCE': -1, 'r:INSTANCE:VCPU': -3, 'r:INSTANCE:DISK_GB': -5 } },
      { project: 'p', user: 'u2', shard: 0, add: { 'n:INSTANCE': 1, 'r:INSTANCE:VCPU': 4 } },
    ]);
    // the same user: one item, the difference
    expect(usageDeltas([{ uuid: 'c', before, after: { ...after, user: 'u' } }], shard)).toEqual([
      { project: 'p', user: 'u', shard: 0, add: { 'r:INSTANCE:VCPU': 1, 'r:INSTANCE:DISK_GB': -5 } },
    ]);
    expect(usageDeltas([{ uuid: 'c', before, after: before }], shard)).toEqual([]);
  });

  it('add up into the views of GET /usages', () => {
    const items = [
      { pk: 'USAGE#p', 'n:': 3, 'r::VCPU': 7, 'r::DISK_GB': 1020, 'n:INSTANCE': 1, 'r:INSTANCE:DISK_GB': 10 },
      { 'n:PONY': 1, 'r:PONY:DISK_GB': 10, 'n:GONE': 0, 'r:GONE:VCPU': 0 },
    ];
    const by = sumUsage(items);
    expect(totalUsagesView(by)).toEqual({ VCPU: 7, DISK_GB: 1040 });
    expect(usagesByTypeView(by)).toEqual({
      unknown: { consumer_count: 3, VCPU: 7, DISK_GB: 1020 },
      INSTANCE: { consumer_count: 1, DISK_GB: 10 },
      PONY: { consumer_count: 1, DISK_GB: 10 },
    });
    expect(usagesByTypeView(by, 'all')).toEqual({ all: { consumer_count: 5, VCPU: 7, DISK_GB: 1040 } });
    expect(usagesByTypeView(by, 'unknown')).toEqual({ unknown: { consumer_count: 3, VCPU: 7, DISK_GB: 1020 } });
    expect(usagesByTypeView(by, 'UNKNOWN')).toEqual({});
    expect(usagesByTypeView(by, 'PONY')).toEqual({ PONY: { consumer_count: 1, DISK_GB: 10 } });
    expect(usagesByTypeView(sumUsage([]), 'all')).toEqual({});
  });
});

describe('reshaper plan', () => {
  it("bumps generations as upstream's interim / allocations / final writes do, and refuses inventory in use", () => {
    // reshaper.yaml: VCPU moves from the root (generation 5) to a new child (generation 0)
    const root = rp(
      'R',
      { DISK_GB: inv(2048, { step_size: 10, min_unit: 10, max_unit: 1000 }), VCPU: inv(10, { max_unit: 10 }) },
      { DISK_GB: 1020, VCPU: 7 },
      5,
    );
    const child = rp('C', {}, {}, 0);
    const states = new Map<string, ConsumerState>([
      ['c0', { record: consumer('c0', { R: { DISK_GB: 1000 } }) }],
      ['c1', { record: consumer('c1', { R: { VCPU: 6 } }) }],
      ['c2', { record: consumer('c2', { R: { DISK_GB: 20, VCPU: 1 } }) }],
    ]);
    const replacements: InventoryReplacement[] = [
      { provider: 'R', generation: 5, inventories: { DISK_GB: inv(2048, { step_size: 10, min_unit: 10, max_unit: 1200 }) } },
      { provider: 'C', generation: 0, inventories: { VCPU: inv(10, { max_unit: 8 }) } },
    ];
    const gen1 = { check: true as const, expected: 1 };
    const requests = [
      req('c0', { R: { DISK_GB: 1000 } }, { generation: gen1 }),
      req('c1', { C: { VCPU: 8 } }, { generation: gen1 }),
      req('c2', { R: { DISK_GB: 20 }, C: { VCPU: 1 } }, { generation: gen1 }),
    ];
    const ps = providers(root, child);
    expect(checkReshape(replacements, requests, states, ps)).toBeUndefined();
    const p = planReshape(replacements, requests, states, ps, { missingClasses: new Set(), now: NOW });
    if ('error' in p) throw new Error(p.detail);
    expect(p.providers.get('R')).toMatchObject({ generationDelta: 3, usedDelta: { VCPU: -7 }, limits: {} });
    expect(p.providers.get('C')).toMatchObject({ generationDelta: 3, usedDelta: { VCPU: 9 } });
    expect(p.inventories.map((i) => [i.provider, Object.keys(i.after)])).toEqual([
      ['R', ['DISK_GB']],
      ['C', ['VCPU']],
    ]);
    // without moving c1 the root's VCPU is still in use
    const stay = planReshape(replacements, [requests[0]!, requests[2]!], states, ps, { missingClasses: new Set(), now: NOW });
    expect(stay).toEqual({ error: 'inventory_in_use', detail: "Inventory for 'VCPU' on resource provider 'R' in use." });
    expect(checkReshape([{ ...replacements[0]!, generation: 4 }], requests, states, ps)).toEqual({
      error: 'provider_generation',
      detail: 'resource provider generation conflict for provider R: actual: 5, given: 4',
    });
  });
});
