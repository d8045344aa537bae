import { describe, expect, it } from 'vitest';
import { INTERFACES, type NodeRecord } from '../../../functions/core/baremetal/records.js';
import { checkInterfaces, planNodeUpdate, type DriverInterfaces } from '../../../functions/core/baremetal/node-update.js';
import { IronicError } from '../../../functions/core/baremetal/errors.js';
import { S } from '../../../functions/core/baremetal/states.js';

const kinds = (v: string) => Object.fromEntries(INTERFACES.map((k) => [k, v])) as unknown as DriverInterfaces['defaults'];
const enabled = (...v: string[]) => Object.fromEntries(INTERFACES.map((k) => [k, v])) as unknown as DriverInterfaces['enabled'];
const FAKE: DriverInterfaces = { defaults: kinds('fake'), enabled: enabled('fake', 'no-op') };
const OTHER: DriverInterfaces = { defaults: kinds('no-op'), enabled: enabled('fake', 'no-op') };
const drivers: Record<string, DriverInterfaces> = { 'fake-hardware': FAKE, other: OTHER };

function node(over: Partial<NodeRecord> = {}): NodeRecord {
  const ifaces = Object.fromEntries(INTERFACES.map((k) => [`${k}_interface`, 'fake']));
  return {
    uuid: '1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
    driver: 'fake-hardware',
    provision_state: S.MANAGEABLE,
    maintenance: false,
    maintenance_reason: null,
    fault: null,
    protected: false,
    protected_reason: null,
    retired: false,
    retired_reason: null,
    conductor_group: '',
    instance_uuid: null,
    allocation_uuid: null,
    resource_class: 'gold',
    ...ifaces,
    ...over,
  } as unknown as NodeRecord;
}

const opts = {
  resetInterfaces: true,
  patchable: ['name', 'extra', 'maintenance', 'protected', 'retired', 'driver'],
  driverFor: (n: string) => drivers[n],
};
const plan = (cur: NodeRecord, patched: Record<string, unknown>) => planNodeUpdate(cur, patched, opts);
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof IronicError) return { status: e.status, text: e.faultstring };
    throw e;
  }
  throw new Error('not refused');
};

describe("a node update by Ironic's rules (core/baremetal/node-update.ts)", () => {
  it('applies the patched fields; a removed patchable field goes back to its default; the node as read is untouched', () => {
    const cur = node({ extra: { a: 1 } } as Partial<NodeRecord>);
    const { node: n, releaseAllocation } = plan(cur, { name: 'n1', conductor_group: 'GroupA' });
    expect(n).toMatchObject({ name: 'n1', conductor_group: 'groupa', extra: {} });
    expect(releaseAllocation).toBe(false);
    expect((cur as unknown as { extra: unknown }).extra).toEqual({ a: 1 });
  });

  it('leaving maintenance clears its reason and fault', () => {
    const n = plan(node({ maintenance: true, maintenance_reason: 'x', fault: 'power failure' }), { maintenance: false }).node;
    expect(n).toMatchObject({ maintenance: false, maintenance_reason: null, fault: null });
  });

  it('protected only in active or rescue; protected_reason only with protected; retired never in available', () => {
    expect(refusal(() => plan(node(), { protected: true }))).toEqual({
      status: 409,
      text: "Node 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 can only be made protected in provision states 'active' or 'rescue', the current state is 'manageable'",
    });
    expect(plan(node({ provision_state: S.ACTIVE }), { protected: true }).node.protected).toBe(true);
    expect(refusal(() => plan(node(), { protected_reason: 'why' }))).toMatchObject({
      status: 400,
      text: 'The protected_reason field can only be set when protected is True',
    });
    expect(refusal(() => plan(node({ provision_state: S.AVAILABLE }), { retired: true }))).toMatchObject({ status: 409 });
    expect(plan(node({ retired: true, retired_reason: 'old' }), { retired: false }).node.retired_reason).toBeNull();
  });

  it('a new driver: interfaces the patch did not set reset to its defaults (reset_interfaces), and each is checked', () => {
    const n = plan(node(), { driver: 'other' }).node as unknown as Record<string, unknown>;
    for (const k of INTERFACES) expect(n[`${k}_interface`], k).toBe('no-op');
    const kept = planNodeUpdate(node(), { driver: 'other' }, { ...opts, resetInterfaces: false }).node as unknown as Record<string, unknown>;
    expect(kept.boot_interface).toBe('fake');
    expect(refusal(() => plan(node(), { driver: 'unknown' }))).toMatchObject({
      status: 400,
      text: expect.stringContaining('No valid host was found'),
    });
    expect(refusal(() => plan(node(), { boot_interface: 'pxe' }))).toMatchObject({
      status: 400,
      text: "Could not find the following interface in the 'ironic.hardware.interfaces.boot' entrypoint: pxe. Valid interfaces are ['fake', 'no-op'].",
    });
    // an interface changes only where the conductor allows updates, or in maintenance
    expect(refusal(() => plan(node({ provision_state: S.ACTIVE }), { boot_interface: 'no-op' }))).toMatchObject({ status: 409 });
    expect(
      (plan(node({ provision_state: S.ACTIVE, maintenance: true }), { boot_interface: 'no-op', maintenance: true }).node as any).boot_interface,
    ).toBe('no-op');
  });

  it('instance_uuid: lowercased; another instance refused; removed while allocated releases the allocation', () => {
    expect(plan(node(), { instance_uuid: 'ABCDEF00-0000-4000-8000-000000000000' }).node.instance_uuid).toBe('abcdef00-0000-4000-8000-000000000000');
    expect(refusal(() => plan(node({ instance_uuid: 'a' }), { instance_uuid: 'b' }))).toMatchObject({ status: 409 });
    const held = node({ instance_uuid: 'a', allocation_uuid: 'a' });
    const out = plan(held, { instance_uuid: null });
    expect(out.releaseAllocation).toBe(true);
    expect(out.node).toMatchObject({ instance_uuid: null, allocation_uuid: null });
    expect(refusal(() => plan({ ...held, provision_state: S.ACTIVE } as NodeRecord, { instance_uuid: null }))).toMatchObject({ status: 409 });
  });

  it('checkInterfaces fills what is unset with the driver defaults', () => {
    const bare = node(Object.fromEntries(INTERFACES.map((k) => [`${k}_interface`, null])) as Partial<NodeRecord>);
    const n = checkInterfaces(OTHER, bare) as unknown as Record<string, unknown>;
    for (const k of INTERFACES) expect(n[`${k}_interface`]).toBe('no-op');
  });
});
