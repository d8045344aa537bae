import { describe, expect, it } from 'vitest';
import {
  addedClasses,
  applyInventoryChange,
  capacityError,
  classesInUse,
  inventoryCapacity,
  inventoryView,
  removedClasses,
  withDefaults,
} from '../../../functions/core/placement/inventory.js';

const U = 'aaaaaaaa-0000-0000-0000-000000000001';

describe('inventory rules (handlers/inventory.py, objects/inventory.py)', () => {
  it('fills the defaults of handlers.inventory.INVENTORY_DEFAULTS', () => {
    expect(withDefaults({ total: 4 })).toEqual({ total: 4, reserved: 0, min_unit: 1, max_unit: 2147483647, step_size: 1, allocation_ratio: 1 });
    expect(withDefaults({ total: 4, step_size: 2, allocation_ratio: 1.5 })).toMatchObject({ step_size: 2, allocation_ratio: 1.5 });
  });

  it('computes capacity as int((total - reserved) * allocation_ratio)', () => {
    expect(inventoryCapacity(withDefaults({ total: 10, reserved: 2, allocation_ratio: 1.5 }))).toBe(12);
    expect(inventoryCapacity(withDefaults({ total: 3, allocation_ratio: 0.5 }))).toBe(1);
    expect(inventoryCapacity(withDefaults({ total: 3, allocation_ratio: -0.5 }))).toBe(-1);
  });

  it('refuses capacity <= 0 before 1.26 and < 0 from 1.26, naming the first bad class', () => {
    const eq = withDefaults({ total: 5, reserved: 5 });
    const over = withDefaults({ total: 5, reserved: 6 });
    const ok = withDefaults({ total: 5 });
    expect(
      capacityError(
        U,
        [
          ['VCPU', ok],
          ['DISK_GB', eq],
        ],
        false,
      ),
    ).toBe(`Invalid inventory for 'DISK_GB' on resource provider '${U}'. The reserved value is greater than or equal to total.`);
    expect(capacityError(U, [['DISK_GB', eq]], true)).toBeUndefined();
    expect(
      capacityError(
        U,
        [
          ['DISK_GB', over],
          ['VCPU', eq],
        ],
        true,
      ),
    ).toBe(`Invalid inventory for 'DISK_GB' on resource provider '${U}'. The reserved value is greater than total.`);
  });

  it('applies each kind of change or says why it does not apply', () => {
    const cur = { VCPU: withDefaults({ total: 1 }) };
    const mem = withDefaults({ total: 2 });
    expect(applyInventoryChange(cur, { kind: 'add', resourceClass: 'MEMORY_MB', inventory: mem })).toEqual({
      inventories: { ...cur, MEMORY_MB: mem },
    });
    expect(applyInventoryChange(cur, { kind: 'add', resourceClass: 'VCPU', inventory: mem })).toEqual({ error: 'exists', resourceClass: 'VCPU' });
    expect(applyInventoryChange(cur, { kind: 'update', resourceClass: 'DISK_GB', inventory: mem })).toEqual({
      error: 'absent',
      resourceClass: 'DISK_GB',
    });
    expect(applyInventoryChange(cur, { kind: 'update', resourceClass: 'VCPU', inventory: mem })).toEqual({ inventories: { VCPU: mem } });
    expect(applyInventoryChange(cur, { kind: 'delete', resourceClass: 'VCPU' })).toEqual({ inventories: {} });
    expect(applyInventoryChange(cur, { kind: 'delete', resourceClass: 'toString' })).toEqual({ error: 'absent', resourceClass: 'toString' });
    expect(applyInventoryChange(cur, { kind: 'replace', inventories: {} })).toEqual({ inventories: {} });
    expect(cur).toEqual({ VCPU: withDefaults({ total: 1 }) });
  });

  it('finds the classes gained, lost and lost-while-in-use', () => {
    const a = { VCPU: withDefaults({ total: 1 }), DISK_GB: withDefaults({ total: 1 }) };
    const b = { DISK_GB: withDefaults({ total: 3 }), MEMORY_MB: withDefaults({ total: 1 }) };
    expect(addedClasses(a, b)).toEqual(['MEMORY_MB']);
    expect(removedClasses(a, b)).toEqual(['VCPU']);
    expect(classesInUse(['VCPU', 'DISK_GB'], { VCPU: 0, DISK_GB: 2 })).toEqual(['DISK_GB']);
  });

  it('serialises like _serialize_inventory (the generation only when truthy)', () => {
    const inv = withDefaults({ total: 1 });
    expect(Object.keys(inventoryView(inv, 3))).toEqual([
      'total',
      'reserved',
      'min_unit',
      'max_unit',
      'step_size',
      'allocation_ratio',
      'resource_provider_generation',
    ]);
    expect(inventoryView(inv, 0)).not.toHaveProperty('resource_provider_generation');
  });
});
