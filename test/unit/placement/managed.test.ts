/**
 * Providers and consumers managed elsewhere (functions/core/placement/managed.ts): what
 * Placement's own writes may not change of them, and its answers' texts.
 */
import { describe, expect, it } from 'vitest';
import {
  changedAspect,
  managedConsumerProblem,
  managedInventoryProblem,
  managedProviderRefusal,
  sameInventories,
  sameSet,
} from '../../../functions/core/placement/managed.js';

const inv = (total: number, reserved = 0) => ({ total, reserved, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0 });

describe('a consumer managed elsewhere', () => {
  it('is refused to Placement writers: a BAREMETAL consumer, or a request giving a consumer that type', () => {
    const req = (type?: string) => ({ uuid: 'c1', allocations: {}, project: 'p', user: 'u', type, generation: { check: false as const } });
    const rec = (type: string | null) => ({
      record: { uuid: 'c1', project: 'p', user: 'u', type, generation: 1, allocations: {}, createdAt: '', updatedAt: '' },
    });
    expect(managedConsumerProblem([req()], new Map([['c1', rec('BAREMETAL')]]))?.error).toBe('managed_elsewhere');
    expect(managedConsumerProblem([req('BAREMETAL')], new Map())?.error).toBe('managed_elsewhere');
    expect(managedConsumerProblem([req('INSTANCE')], new Map([['c1', rec('INSTANCE')]]))).toBeUndefined();
    expect(managedConsumerProblem([req('BAREMETAL')], new Map())?.detail).toBe(
      'Unable to change the allocations of consumer c1: it is a bare-metal allocation (consumer type BAREMETAL). Release it through the bare-metal API.',
    );
  });
});

describe('a provider managed elsewhere', () => {
  const cur = { inventories: { CUSTOM_GOLD: inv(1) }, traits: ['A', 'B'], aggregates: ['x'] };

  it('names what a write would change: inventory, traits or aggregates as sets; nothing when they say the same', () => {
    expect(changedAspect(cur, { inventories: { CUSTOM_GOLD: inv(2) } })).toBe('inventory');
    expect(changedAspect(cur, { inventories: { CUSTOM_GOLD: inv(1) } })).toBeUndefined();
    expect(changedAspect(cur, { traits: ['B', 'A'] })).toBeUndefined();
    expect(changedAspect(cur, { traits: ['A'] })).toBe('traits');
    expect(changedAspect(cur, { aggregates: ['x', 'y'] })).toBe('aggregates');
    expect(changedAspect(cur, {})).toBeUndefined();
  });

  it('refuses a reshape of its inventory, in the words of the 409', () => {
    const providers = new Map<string, { inventories: Record<string, ReturnType<typeof inv>>; managedBy?: string }>([
      ['rp1', { inventories: { CUSTOM_GOLD: inv(1) }, managedBy: 'node-1' }],
      ['rp2', { inventories: {} }],
    ]);
    expect(managedInventoryProblem([{ provider: 'rp2', inventories: { VCPU: inv(4) } }], providers)).toBeUndefined();
    expect(managedInventoryProblem([{ provider: 'rp1', inventories: { CUSTOM_GOLD: inv(1) } }], providers)).toBeUndefined();
    expect(managedInventoryProblem([{ provider: 'rp1', inventories: { CUSTOM_GOLD: inv(1, 1) } }], providers)).toEqual({
      error: 'managed_elsewhere',
      detail: managedProviderRefusal('rp1', 'node-1', 'inventory'),
    });
    expect(managedProviderRefusal('rp1', 'node-1', 'existence')).toBe(
      'Unable to delete resource provider rp1: it is bare-metal node node-1, whose provider follows the node (inventory, traits, aggregates, existence). Change the node through the bare-metal API.',
    );
  });

  it('compares inventories field by field and names as sets', () => {
    expect(sameInventories({ A: inv(1) }, { A: inv(1) })).toBe(true);
    expect(sameInventories({ A: inv(1) }, { A: { ...inv(1), allocation_ratio: 2 } })).toBe(false);
    expect(sameInventories({ A: inv(1) }, { B: inv(1) })).toBe(false);
    expect(sameSet(['a', 'b', 'a'], ['b', 'a'])).toBe(true);
    expect(sameSet(['a'], ['a', 'b'])).toBe(false);
  });
});
