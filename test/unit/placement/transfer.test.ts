/**
 * The pure side of moving a Placement's state in and out (functions/core/placement/
 * transfer.ts): what a pass reads again, the state it leaves, the orders it keeps, and
 * the inventory an export writes first.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConsumerRecord } from '../../../functions/core/placement/consumers.js';
import { INVENTORY_DEFAULTS, type Inventory, newProviderRecord, providerRecord } from '../../../functions/core/placement/model.js';
import {
  consumersForPass,
  emptyState,
  InconsistentList,
  type ListedProvider,
  type PassRead,
  type PlacementState,
  providersForPass,
  type ProviderRead,
  type SourceConsumer,
} from '../../../functions/core/placement/transfer.js';
import { aggregateOrder, monotoneSeqs } from '../../../functions/core/placement/transfer-order.js';
import { inventoryForAllocations, parentsFirst } from '../../../functions/core/placement/transfer-out.js';
import { nextState } from '../../../functions/core/placement/transfer-state.js';

const NOW = '2026-01-01T00:00:00.000Z';
const inv = (total: number, more: Partial<Inventory> = {}): Inventory => ({ total, ...INVENTORY_DEFAULTS, ...more });
const consumer = (uuid: string, allocations: ConsumerRecord['allocations'], generation = 1, more: Partial<ConsumerRecord> = {}): ConsumerRecord => ({
  uuid,
  project: 'p',
  user: 'u',
  type: 'INSTANCE',
  generation,
  allocations,
  createdAt: NOW,
  updatedAt: NOW,
  ...more,
});

function read(list: ListedProvider[], providers: Record<string, ProviderRead>, more: Partial<PassRead> = {}): PassRead {
  return { list, classes: [], traits: [], providers: new Map(Object.entries(providers)), consumers: new Map(), consumerGenerations: true, ...more };
}

/** a state after a first pass over `list` with these reads and consumers */
function imported(list: ListedProvider[], providers: Record<string, ProviderRead>, consumers: ConsumerRecord[] = []): PlacementState {
  const r = read(list, providers, {
    consumers: new Map(
      consumers.map((c) => [
        c.uuid,
        { uuid: c.uuid, project: c.project, user: c.user, type: c.type, generation: c.generation, allocations: c.allocations },
      ]),
    ),
  });
  return nextState(emptyState(), r, { now: NOW, seqBase: 1 }).state;
}

const whole = (inventories: Record<string, Inventory> = {}, more: Partial<ProviderRead> = {}): ProviderRead => ({
  inventories,
  traits: [],
  aggregates: [],
  allocations: [],
  generations: [],
  ...more,
});

describe('what a pass reads again', () => {
  const list: ListedProvider[] = [
    { uuid: 'a', name: 'a', generation: 3 },
    { uuid: 'b', name: 'b', generation: 5 },
  ];
  const prev = imported(list, { a: whole(), b: whole() });

  it('reads new providers and providers at another generation whole; a final pass the rest too', () => {
    const now: ListedProvider[] = [
      { uuid: 'a', name: 'a', generation: 3 },
      { uuid: 'b', name: 'b-renamed', generation: 6 },
      { uuid: 'c', name: 'c', generation: 0 },
    ];
    expect(providersForPass(prev, now, false)).toEqual({ full: ['b', 'c'], allocationsAndAggregates: [] });
    expect(providersForPass(prev, now, true)).toEqual({ full: ['b', 'c'], allocationsAndAggregates: ['a'] });
  });

  it('reads consumers that are new, at another generation or amount, gone from a list, or on a deleted provider', () => {
    const state = imported(list, { a: whole({ VCPU: inv(8) }), b: whole({ VCPU: inv(8) }) }, [
      consumer('same', { a: { VCPU: 1 } }, 2),
      consumer('regen', { a: { VCPU: 1 } }, 2),
      consumer('amount', { a: { VCPU: 1 } }, 2),
      consumer('left', { a: { VCPU: 1 } }, 1),
      consumer('onB', { b: { VCPU: 1 } }, 1),
    ]);
    const reads = new Map<string, ProviderRead>([
      [
        'a',
        {
          generations: [4],
          allocations: [
            { consumer: 'same', resources: { VCPU: 1 }, generation: 2 },
            { consumer: 'regen', resources: { VCPU: 1 }, generation: 3 },
            { consumer: 'amount', resources: { VCPU: 2 }, generation: 2 },
            { consumer: 'new', resources: { VCPU: 1 }, generation: 1 },
          ],
        },
      ],
    ]);
    // b is no longer listed: its consumers are read again
    const now = [{ uuid: 'a', name: 'a', generation: 4 }];
    expect(consumersForPass(state, now, reads, true).sort()).toEqual(['amount', 'left', 'new', 'onB', 'regen']);
    // below 1.28 the lists carry no consumer generation: every consumer listed is read
    expect(consumersForPass(state, now, reads, false).sort()).toEqual(['amount', 'left', 'new', 'onB', 'regen', 'same']);
  });
});

describe('the state a pass leaves', () => {
  it('keeps the source generations and derives roots, child counts, usage and reference counts', () => {
    const list: ListedProvider[] = [
      { uuid: 'root', name: 'cn', generation: 7 },
      { uuid: 'numa', name: 'cn-numa0', generation: 4, parent: 'root' },
      { uuid: 'pf', name: 'cn-pf', generation: 9, parent: 'numa' },
    ];
    const r = read(
      list,
      {
        root: whole({ VCPU: inv(16), CUSTOM_FPGA: inv(2) }, { traits: ['CUSTOM_RACK', 'HW_CPU_X86_AVX2'], aggregates: ['g2', 'g1'] }),
        numa: whole({ PCPU: inv(8) }, { traits: ['CUSTOM_RACK'], aggregates: ['g1'] }),
        pf: whole({ CUSTOM_VF: inv(4) }, { generations: [9, 9] }),
      },
      {
        classes: ['VCPU', 'PCPU', 'CUSTOM_VF', 'CUSTOM_FPGA', 'CUSTOM_SPARE'],
        traits: ['HW_CPU_X86_AVX2', 'CUSTOM_RACK', 'CUSTOM_OLD'],
        consumers: new Map<string, SourceConsumer | null>([
          [
            'c1',
            { uuid: 'c1', project: 'p1', user: 'u1', type: 'INSTANCE', generation: 3, allocations: { root: { VCPU: 2 }, pf: { CUSTOM_VF: 1 } } },
          ],
          ['c2', { uuid: 'c2', project: 'p2', user: 'u2', type: null, generation: 1, allocations: { root: { VCPU: 1 } } }],
        ]),
      },
    );
    const { state, notes } = nextState(emptyState(), r, { now: NOW, seqBase: 1 });
    const root = state.providers.get('root')!;
    expect(root).toMatchObject({ generation: 7, root: 'root', children: 1, usages: { VCPU: 3 }, allocationCount: 2, invVersion: 1 });
    expect(state.providers.get('pf')).toMatchObject({ generation: 9, parent: 'numa', root: 'root', children: 0, usages: { CUSTOM_VF: 1 } });
    expect(state.providers.get('numa')).toMatchObject({ root: 'root', children: 1, allocationCount: 0 });
    // the source's order as creation order
    expect([...state.providers.values()].map((p) => p.seq)).toEqual([1, 2, 3]);
    expect(state.consumers.get('c1')).toMatchObject({ generation: 3, project: 'p1', type: 'INSTANCE' });
    // custom classes: the source's order, counted by the providers with inventory of them
    expect([...state.classes.values()].map((c) => [c.name, c.refs])).toEqual([
      ['CUSTOM_VF', 1],
      ['CUSTOM_FPGA', 1],
      ['CUSTOM_SPARE', 0],
    ]);
    expect([...state.traits.values()].map((c) => [c.name, c.refs])).toEqual([
      ['CUSTOM_RACK', 2],
      ['CUSTOM_OLD', 0],
    ]);
    // aggregates in an order that keeps every provider's list
    expect(aggregateOrder([root.aggregates, state.providers.get('numa')!.aggregates], state.aggregates)).toEqual(['g2', 'g1']);
    expect(state.aggregates.get('g2')! < state.aggregates.get('g1')!).toBe(true);
    expect(notes).toEqual({ unsettled: [], deferred: [], unknownStandard: [] });
  });

  it('keeps what it did not read, bumps the inventory version only when inventory changes', () => {
    const list: ListedProvider[] = [
      { uuid: 'a', name: 'a', generation: 1 },
      { uuid: 'b', name: 'b', generation: 1 },
    ];
    const prev = imported(list, { a: whole({ VCPU: inv(8) }, { traits: ['HW_CPU_X86_AVX2'] }), b: whole({ VCPU: inv(8) }) });
    const next = nextState(
      prev,
      read(
        [
          { uuid: 'a', name: 'a2', generation: 1 },
          { uuid: 'b', name: 'b', generation: 2 },
        ],
        { b: whole({ VCPU: inv(16) }) },
      ),
      { now: NOW, seqBase: 100 },
    ).state;
    expect(next.providers.get('a')).toMatchObject({ name: 'a2', traits: ['HW_CPU_X86_AVX2'], invVersion: 1, inventories: { VCPU: inv(8) } });
    expect(next.providers.get('b')).toMatchObject({ invVersion: 2, generation: 2, inventories: { VCPU: inv(16) } });
    // the sequences the first pass gave are kept
    expect(next.providers.get('a')!.seq).toBe(prev.providers.get('a')!.seq);
  });

  it('notes providers that changed while read and leaves out consumers naming unlisted providers', () => {
    const list: ListedProvider[] = [{ uuid: 'a', name: 'a', generation: 2 }];
    const prev = imported(list, { a: whole({ VCPU: inv(8) }) }, [consumer('gone', { a: { VCPU: 1 } })]);
    const { state, notes } = nextState(
      prev,
      read(
        [{ uuid: 'a', name: 'a', generation: 3 }],
        { a: whole({ VCPU: inv(8) }, { generations: [3, 4] }) },
        {
          consumers: new Map<string, SourceConsumer | null>([
            ['gone', null],
            ['early', { uuid: 'early', project: 'p', user: 'u', type: null, generation: 1, allocations: { a: { VCPU: 1 }, later: { VCPU: 1 } } }],
          ]),
        },
      ),
      { now: NOW, seqBase: 1 },
    );
    expect(notes.unsettled).toEqual(['a']);
    expect(notes.deferred).toEqual(['early']);
    // the generation stays the one listed (older than the change): the next pass reads it again
    expect(state.providers.get('a')!.generation).toBe(3);
    expect([...state.consumers.keys()]).toEqual([]);
    expect(state.providers.get('a')).toMatchObject({ usages: {}, allocationCount: 0 });
  });

  it('keeps names the source has as standard and Berth does not, and refuses a broken list', () => {
    const { state, notes } = nextState(
      emptyState(),
      read([{ uuid: 'a', name: 'a', generation: 0 }], { a: whole({ NEW_STANDARD_CLASS: inv(1) }, { traits: ['HW_NEW_TRAIT'] }) }),
      { now: NOW, seqBase: 1 },
    );
    expect(notes.unknownStandard.sort()).toEqual(['HW_NEW_TRAIT', 'NEW_STANDARD_CLASS']);
    expect(state.classes.get('NEW_STANDARD_CLASS')?.refs).toBe(1);
    expect(() => nextState(emptyState(), read([{ uuid: 'a', name: 'a', generation: 0, parent: 'nowhere' }], {}), { now: NOW, seqBase: 1 })).toThrow(
      InconsistentList,
    );
  });
});

describe('orders', () => {
  it('monotoneSeqs keeps the sequences already in order and renumbers the rest', () => {
    expect([...monotoneSeqs(['a', 'b', 'c'], new Map(), 1).values()]).toEqual([1, 2, 3]);
    expect([
      ...monotoneSeqs(
        ['a', 'x', 'b', 'c'],
        new Map([
          ['a', 10],
          ['b', 20],
          ['c', 30],
        ]),
        1,
      ),
    ]).toEqual([
      ['a', 10],
      ['x', 11],
      ['b', 20],
      ['c', 30],
    ]);
    // c listed before b although its sequence is larger: b moves behind it
    expect([
      ...monotoneSeqs(
        ['a', 'c', 'b'],
        new Map([
          ['a', 10],
          ['b', 20],
          ['c', 30],
        ]),
        1,
      ),
    ]).toEqual([
      ['a', 10],
      ['c', 30],
      ['b', 31],
    ]);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 })),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 3 }), fc.integer()),
        (order, existing) => {
          const seqs = monotoneSeqs(order, new Map(Object.entries(existing)), 1);
          const vs = order.map((k) => seqs.get(k)!);
          for (let i = 1; i < vs.length; i++) expect(vs[i]!).toBeGreaterThan(vs[i - 1]!);
        },
      ),
    );
  });

  it('aggregateOrder keeps every list that comes from one order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 12 }),
        fc.array(fc.array(fc.nat(), { maxLength: 5 }), { maxLength: 8 }),
        (global, picks) => {
          const lists = picks.map((ix) => [...new Set(ix.map((i) => i % global.length))].sort((a, b) => a - b).map((i) => global[i]!));
          const order = aggregateOrder(lists, new Map());
          const at = new Map(order.map((a, i) => [a, i]));
          for (const l of lists) for (let i = 1; i < l.length; i++) expect(at.get(l[i]!)!).toBeGreaterThan(at.get(l[i - 1]!)!);
          expect(new Set(order)).toEqual(new Set(lists.flat()));
        },
      ),
    );
    // ties go by the existing sequence
    expect(aggregateOrder([['x'], ['y']], new Map([['y', 1]]))).toEqual(['y', 'x']);
  });

  it('parentsFirst puts every parent before its children, otherwise keeping the order', () => {
    const p = (uuid: string, parent?: string) => newProviderRecord({ uuid, name: uuid, parent, root: uuid, seq: 0, at: NOW });
    // a child re-parented under a provider created after it
    expect(parentsFirst([p('r'), p('child', 'late'), p('late', 'r'), p('other')]).map((x) => x.uuid)).toEqual(['r', 'late', 'child', 'other']);
  });
});

describe('the inventory an export writes first', () => {
  const rec = (inventories: Record<string, Inventory>) =>
    providerRecord({ ...newProviderRecord({ uuid: 'a', name: 'a', root: 'a', seq: 0, at: NOW }), inventories });

  it('is none when the real inventory takes the allocations', () => {
    expect(inventoryForAllocations(rec({ VCPU: inv(4, { allocation_ratio: 2 }) }).inventories, [{ VCPU: 4 }, { VCPU: 4 }])).toBeUndefined();
  });

  it('widens only the classes that do not take them: capacity, max_unit, min_unit, step_size', () => {
    const w = inventoryForAllocations({ VCPU: inv(1, { max_unit: 1 }), MEMORY_MB: inv(1024, { step_size: 512 }), DISK_GB: inv(100) }, [
      { VCPU: 2, MEMORY_MB: 100 },
      { VCPU: 2, DISK_GB: 10 },
    ])!;
    expect(w.DISK_GB).toEqual(inv(100));
    expect(w.VCPU).toMatchObject({ total: 4, max_unit: 2 });
    expect(w.MEMORY_MB).toMatchObject({ total: 1024, step_size: 1, min_unit: 1 });
  });
});
