/**
 * The one place each order rule lives (functions/core/placement/standard.ts for names,
 * core/placement/order.ts for a provider's allocations, the consumer item's written
 * order in store/placement/consumers.ts) and Python's float repr (core/compat/pyfloat.ts).
 * The expectations are the reference Placement 8.0.0's answers (test/integration/
 * placement/order.test.ts and the differential runs check the whole path).
 */
import { describe, expect, it } from 'vitest';
import {
  compareResourceClasses,
  compareTraits,
  inResourceClassOrder,
  STANDARD_RESOURCE_CLASSES,
  STANDARD_TRAITS,
  sortTraits,
  type CustomOrder,
} from '../../../functions/core/placement/standard.js';
import { providerAllocationOrder, writeSeq, type OrderedRow } from '../../../functions/core/placement/order.js';
import { usagesByTypeView, totalUsagesView, type TypeUsage } from '../../../functions/core/placement/usage.js';
import { allocationOrder, inWrittenOrder } from '../../../functions/store/placement/consumers.js';
import { floatLiteralPaths, jsonNumberLiterals, pyFloat, pyFloatRepr, pyJson } from '../../../functions/core/compat/pyfloat.js';
import { summaryFragment, shapeFor } from '../../../functions/core/placement/candidates/render.js';
import { ProviderView } from '../../../functions/core/placement/candidates/view.js';
import type { ProviderRecord } from '../../../functions/core/placement/model.js';

const order: CustomOrder = {
  classes: new Map([
    ['CUSTOM_Z', 1],
    ['CUSTOM_A', 2],
  ]),
  traits: new Map([
    ['CUSTOM_ZED', 10],
    ['CUSTOM_ALPHA', 20],
    ['CUSTOM_MID', 30],
  ]),
};

describe('trait order (Placement: by id — standard as synced, then custom as created)', () => {
  it('puts every standard trait first, in the fixed sync order, then custom ones by creation', () => {
    expect(sortTraits(['CUSTOM_MID', 'STORAGE_DISK_SSD', 'CUSTOM_ZED', 'HW_CPU_X86_AVX2', 'CUSTOM_ALPHA'], order)).toEqual([
      'HW_CPU_X86_AVX2',
      'STORAGE_DISK_SSD',
      'CUSTOM_ZED',
      'CUSTOM_ALPHA',
      'CUSTOM_MID',
    ]);
    // the standard order is the os-traits list's, for every pair
    const cmp = compareTraits(order);
    for (let i = 1; i < STANDARD_TRAITS.length; i++) expect(cmp(STANDARD_TRAITS[i - 1]!, STANDARD_TRAITS[i]!)).toBeLessThan(0);
    // a custom name the catalog does not know: after the known ones, by name
    expect(sortTraits(['CUSTOM_B_NEW', 'CUSTOM_MID', 'CUSTOM_A_NEW', 'MISC_SHARES_VIA_AGGREGATE'], order)).toEqual([
      'MISC_SHARES_VIA_AGGREGATE',
      'CUSTOM_MID',
      'CUSTOM_A_NEW',
      'CUSTOM_B_NEW',
    ]);
  });
});

describe('resource class order (Placement: by id — os-resource-classes order, then custom as created)', () => {
  it('orders standard classes as os-resource-classes does and custom ones by creation', () => {
    expect(STANDARD_RESOURCE_CLASSES.slice(0, 3)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB']);
    expect(Object.keys(inResourceClassOrder({ CUSTOM_A: 1, DISK_GB: 2, CUSTOM_Z: 3, PCPU: 4, VCPU: 5 }, order))).toEqual([
      'VCPU',
      'DISK_GB',
      'PCPU',
      'CUSTOM_Z',
      'CUSTOM_A',
    ]);
    expect(['CUSTOM_A', 'VCPU'].sort(compareResourceClasses())).toEqual(['VCPU', 'CUSTOM_A']);
  });

  it('lists usages by class; from 1.38 consumer_count after a type’s first class, types by their first class', () => {
    const byType = new Map<string, TypeUsage>([
      ['MIGRATION', { count: 1, resources: { MEMORY_MB: 5, CUSTOM_A: 1 } }],
      ['INSTANCE', { count: 2, resources: { CUSTOM_Z: 1, VCPU: 2, MEMORY_MB: 3 } }],
      ['', { count: 1, resources: { VCPU: 1 } }],
    ]);
    expect(Object.keys(totalUsagesView(byType, order))).toEqual(['VCPU', 'MEMORY_MB', 'CUSTOM_Z', 'CUSTOM_A']);
    const v = usagesByTypeView(byType, undefined, order);
    expect(Object.keys(v)).toEqual(['unknown', 'INSTANCE', 'MIGRATION']);
    expect(Object.keys(v.INSTANCE!)).toEqual(['VCPU', 'consumer_count', 'MEMORY_MB', 'CUSTOM_Z']);
    expect(Object.keys(usagesByTypeView(byType, 'all', order).all!)).toEqual(['VCPU', 'consumer_count', 'MEMORY_MB', 'CUSTOM_Z', 'CUSTOM_A']);
  });

  it('renders provider summaries in class and trait order', () => {
    const rec: ProviderRecord = {
      uuid: 'u1',
      name: 'n',
      generation: 1,
      root: 'u1',
      inventories: {
        CUSTOM_A: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 },
        MEMORY_MB: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 },
        VCPU: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 },
      },
      invVersion: 1,
      usages: {},
      traits: ['CUSTOM_MID', 'HW_CPU_X86_AVX2', 'CUSTOM_ZED'],
      aggregates: [],
      children: 0,
      allocationCount: 0,
      createdAt: '',
      updatedAt: '',
      seq: 1,
    };
    const v = { atLeast: () => true };
    const frag = JSON.parse(`{${summaryFragment(new ProviderView(rec), shapeFor(v), new Set(), order)}}`).u1;
    expect(Object.keys(frag.resources)).toEqual(['VCPU', 'MEMORY_MB', 'CUSTOM_A']);
    expect(frag.traits).toEqual(['HW_CPU_X86_AVX2', 'CUSTOM_ZED', 'CUSTOM_MID']);
  });
});

describe('written order of a consumer’s allocations', () => {
  it('survives a store that keeps no key order', () => {
    const written = { rp2: { MEMORY_MB: 1, VCPU: 2 }, rp1: { DISK_GB: 3, VCPU: 1 } };
    const ord = allocationOrder(written);
    expect(ord).toEqual([
      ['rp2', 'MEMORY_MB', 'VCPU'],
      ['rp1', 'DISK_GB', 'VCPU'],
    ]);
    const readBack = { rp1: { VCPU: 1, DISK_GB: 3 }, rp2: { VCPU: 2, MEMORY_MB: 1 } };
    expect(JSON.stringify(inWrittenOrder(readBack, ord))).toBe(JSON.stringify(written));
    // an item written before the order was kept: as read
    expect(inWrittenOrder(readBack, undefined)).toBe(readBack);
  });
});

describe('allocations against one provider (upstream: index on provider, class id, used)', () => {
  it('orders consumers by their first row in (class, amount, write) order, classes in class order', () => {
    const rows: OrderedRow[] = [
      { consumer: 'c1', resources: { MEMORY_MB: 64 }, writeSeq: writeSeq('2024-01-01T00:00:00.000Z', 0) },
      { consumer: 'c2', resources: { MEMORY_MB: 1, VCPU: 4 }, writeSeq: writeSeq('2024-01-01T00:00:01.000Z', 0) },
      { consumer: 'c3', resources: { VCPU: 2 }, writeSeq: writeSeq('2024-01-01T00:00:02.000Z', 0) },
      { consumer: 'c4', resources: { VCPU: 4 }, writeSeq: writeSeq('2024-01-01T00:00:00.500Z', 1) },
    ];
    const out = providerAllocationOrder(rows);
    expect(out.map((r) => r.consumer)).toEqual(['c3', 'c4', 'c2', 'c1']);
    expect(Object.keys(out[2]!.resources)).toEqual(['VCPU', 'MEMORY_MB']);
    // rows of one request: the body's order
    expect(writeSeq('2024-01-01T00:00:00.000Z', 1)).toBeGreaterThan(writeSeq('2024-01-01T00:00:00.000Z', 0));
  });
});

describe('Python floats', () => {
  it('prints float.__repr__', () => {
    const cases: Array<[number, string]> = [
      [1, '1.0'],
      [16, '16.0'],
      [3.3333, '3.3333'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [1.5e-7, '1.5e-07'],
      [1e15, '1000000000000000.0'],
      [1e16, '1e+16'],
      [1.2345678901234568e17, '1.2345678901234568e+17'],
      [3.40282e38, '3.40282e+38'],
      [0.1 + 0.2, '0.30000000000000004'],
      [0, '0.0'],
    ];
    for (const [n, repr] of cases) expect(pyFloatRepr(n)).toBe(repr);
    expect(pyJson({ a: pyFloat(2), b: [pyFloat(0.5), 3, 'x'], c: undefined })).toBe('{"a":2.0,"b":[0.5,3,"x"]}');
    // anything else that stringifies it gets the plain number
    expect(JSON.stringify({ a: pyFloat(2) })).toBe('{"a":2}');
  });

  it('tells the number literals Python parses as floats', () => {
    const text =
      '{"inventories": {"VCPU": {"allocation_ratio": 16, "total": 8}, "DISK_GB": {"allocation_ratio": 1e-5}}, "x": [1.0, 2], "s": "1.0", "d": 2.0, "d": 2}';
    expect([...floatLiteralPaths(text)].sort()).toEqual(['inventories/DISK_GB/allocation_ratio', 'x/0']);
    expect(jsonNumberLiterals(text).get('inventories/VCPU/allocation_ratio')).toBe('16');
    expect(jsonNumberLiterals(text).get('d')).toBe('2');
  });
});
