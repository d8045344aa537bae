/**
 * Ironic's rules for a node's fields (ironic.conductor.manager update_node,
 * _update_changed_fields, _check_update_protected / _check_update_retired, the interface
 * check of driver_factory): pure, on the node as read and the API's patched fields. The
 * conductor (functions/conductor/nodes.ts) runs them on every attempt, then writes.
 */
import { Err, IronicError } from './errors.js';
import { CONDUCTOR_UPDATE_ALLOWED, S } from './states.js';
import { INTERFACES, type NodeRecord } from './records.js';

export type InterfaceName = (typeof INTERFACES)[number];

/** what the rules need of a hardware type: its default and enabled interfaces per kind */
export interface DriverInterfaces {
  defaults: Record<InterfaceName, string>;
  enabled: Record<InterfaceName, readonly string[]>;
}

const INTERFACE_FIELDS = INTERFACES.map((i) => `${i}_interface`);
const DICT_FIELDS = ['driver_info', 'extra', 'instance_info', 'properties', 'network_data'];
const FLAG_FIELDS = ['maintenance', 'console_enabled', 'retired', 'protected'];

function pyListOf(xs: string[]): string {
  return `[${xs.map((x) => `'${x}'`).join(', ')}]`;
}

/** the interfaces check driver_factory makes: unset ones take the driver's default, a set one must be enabled */
export function checkInterfaces(driver: DriverInterfaces, node: NodeRecord): NodeRecord {
  const out = { ...node } as unknown as Record<string, unknown>;
  for (const kind of INTERFACES) {
    const field = `${kind}_interface`;
    const v = out[field] as string | null;
    if (v === null || v === undefined) out[field] = driver.defaults[kind];
    else if (!driver.enabled[kind].includes(v)) {
      throw Err.invalid(
        `Could not find the following interface in the 'ironic.hardware.interfaces.${kind}' entrypoint: ${v}. Valid interfaces are ${pyListOf([...driver.enabled[kind]])}.`,
      );
    }
  }
  return out as unknown as NodeRecord;
}

/** NoValidHost: no conductor supports the driver (none of Berth's knows it) */
export function noValidHost(driverName: string, group: string): IronicError {
  return new IronicError(
    400,
    `No valid host was found. Reason: No conductor service registered which supports driver ${driverName} for conductor group "${group}".`,
  );
}

export interface NodeUpdateOptions {
  /** 1.45 reset_interfaces: a new driver resets the interfaces the patch did not set */
  resetInterfaces: boolean;
  /** the fields the API lets a patch change (a removed one goes back to its default) */
  patchable: readonly string[];
  driverFor: (name: string) => DriverInterfaces | undefined;
}

export interface NodeUpdatePlan {
  node: NodeRecord;
  /** the node's allocation goes with its instance_uuid (removed while allocated): the conductor deletes it in the same write */
  releaseAllocation: boolean;
}

/** The node `patched` makes of `cur`, by Ironic's rules; throws the IronicError Ironic answers. */
export function planNodeUpdate(cur: NodeRecord, patched: Record<string, unknown>, opts: NodeUpdateOptions): NodeUpdatePlan {
  const next = { ...cur } as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(patched)) {
    if (k === 'chassis_uuid' || k === 'shard') continue;
    if (k === 'conductor_group') next[k] = String(v ?? '').toLowerCase();
    else if (FLAG_FIELDS.includes(k)) next[k] = v ?? false;
    else if (DICT_FIELDS.includes(k)) next[k] = v ?? {};
    else next[k] = v ?? null;
  }
  // a field the patch removed is absent from the patched dict: back to its default
  for (const k of opts.patchable) {
    if (!(k in patched) && k in next && !['chassis_uuid', 'shard', 'driver'].includes(k)) {
      if (DICT_FIELDS.includes(k)) next[k] = {};
      else if (FLAG_FIELDS.includes(k)) next[k] = false;
      else if (k === 'conductor_group') next[k] = '';
      else next[k] = null;
    }
  }
  const n = next as unknown as NodeRecord;
  if (!n.maintenance && cur.maintenance) {
    n.maintenance_reason = null;
    n.fault = null;
  }
  // _check_update_protected / _check_update_retired
  if (n.protected !== cur.protected) {
    if (!n.protected) n.protected_reason = null;
    else if (n.provision_state !== S.ACTIVE && n.provision_state !== S.RESCUE) {
      throw Err.conflict(
        `Node ${cur.uuid} can only be made protected in provision states 'active' or 'rescue', the current state is '${n.provision_state}'`,
      );
    }
  }
  if (n.protected_reason !== cur.protected_reason && n.protected_reason && !n.protected) {
    throw Err.invalid('The protected_reason field can only be set when protected is True');
  }
  if (n.retired !== cur.retired) {
    if (!n.retired) n.retired_reason = null;
    else if (n.provision_state === S.AVAILABLE) {
      throw Err.conflict(`Node ${cur.uuid} can not have 'retired' set in provision state 'available', the current state is '${n.provision_state}'`);
    }
  }
  if (n.retired_reason !== cur.retired_reason && n.retired_reason && !n.retired) {
    throw Err.invalid('The retired_reason field can only be set when retired is True');
  }
  // interfaces and driver
  const updatingDriver = n.driver !== cur.driver;
  const driver = opts.driverFor(n.driver);
  if (!driver) throw noValidHost(n.driver, n.conductor_group);
  const field = (x: NodeRecord, f: string) => (x as unknown as Record<string, unknown>)[f];
  const changedIfaces = INTERFACE_FIELDS.filter((f) => field(n, f) !== field(cur, f));
  for (const f of changedIfaces) {
    if (!(CONDUCTOR_UPDATE_ALLOWED.includes(n.provision_state) || n.maintenance)) {
      throw Err.conflict(
        `Node ${cur.uuid} can not have ${f} updated unless it is in one of allowed (${CONDUCTOR_UPDATE_ALLOWED.join(', ')}) states or in maintenance mode.`,
      );
    }
  }
  if (updatingDriver && opts.resetInterfaces)
    for (const f of INTERFACE_FIELDS) if (!changedIfaces.includes(f)) (n as unknown as Record<string, unknown>)[f] = null;
  if (updatingDriver || changedIfaces.length) Object.assign(n, checkInterfaces(driver, n));
  // instance_uuid
  if (n.instance_uuid && n.instance_uuid !== cur.instance_uuid && cur.instance_uuid) throw Err.nodeAssociated(cur.uuid, cur.instance_uuid);
  if (n.instance_uuid) n.instance_uuid = n.instance_uuid.toLowerCase();
  if (n.resource_class !== cur.resource_class && cur.resource_class && !CONDUCTOR_UPDATE_ALLOWED.includes(cur.provision_state)) {
    throw Err.conflict(
      `Node ${cur.uuid} can not have resource_class updated unless it is in one of allowed (${CONDUCTOR_UPDATE_ALLOWED.join(', ')}) states.`,
    );
  }
  let releaseAllocation = false;
  if (!n.instance_uuid && cur.instance_uuid && cur.allocation_uuid) {
    if (!cur.maintenance && !CONDUCTOR_UPDATE_ALLOWED.includes(cur.provision_state)) {
      throw Err.conflict(
        `Node ${cur.uuid} with an allocation can not have instance_uuid removed unless it is in one of allowed (${CONDUCTOR_UPDATE_ALLOWED.join(', ')}) states or in maintenance mode.`,
      );
    }
    releaseAllocation = true;
    n.allocation_uuid = null;
  }
  return { node: n, releaseAllocation };
}
