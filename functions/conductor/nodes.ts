/**
 * The conductor's node workflows (ironic.conductor.manager create_node, update_node,
 * destroy_node, add/remove_node_traits, set maintenance, change_node_power_state,
 * do_node_deploy and friends). Handlers parse the request, authorize and pass a
 * `load` that re-reads (and re-authorizes) the node; these functions check Ironic's
 * rules on what they read, write through the store with a condition on the node's
 * version, and retry when another writer got there first. Power and provisioning
 * hand the rest to a node-action execution (./node-actions.ts).
 */
import { Err, IronicError } from '../core/baremetal/errors.js';
import { DELETE_ALLOWED_STATES, POWER, S, VERBS, isActionable, processEvent, provisionProgram } from '../core/baremetal/states.js';
import { isoNow, type NodeRecord } from '../core/baremetal/records.js';
import { MAX_VIFS_PER_NODE, isUnsupported } from '../core/baremetal/interfaces.js';
import { checkInterfaces, noValidHost, planNodeUpdate } from '../core/baremetal/node-update.js';
import { config } from '../config.js';
import { allocationDeleteActions, getAllocation } from '../store/baremetal/allocations.js';
import { nextBmSeq } from '../store/baremetal/keys.js';
import { completeNode } from '../store/baremetal/nodes.js';
import { createNode as storeNode, deleteNodeItems, saveNode } from '../store/baremetal/node-writes.js';
import { RETRY } from '../store/ddb/retry.js';
import { driverFor } from './driver.js';
import { driverOf, launchNodeAction } from './node-actions.js';
import { nodeBusy, refusedByLink, refuseLocked, retrying, watchNode, type Load } from './retries.js';
import { scheduler } from '../bridge/scheduler.js';

const MAX_TRAITS_PER_NODE = 50;

// ------------------------------------------------------------------ create

export interface NewNode {
  uuid: string;
  /** the validated request fields (Ironic names; null/absent = default) */
  fields: Record<string, unknown>;
  /** enroll from 1.11, available before */
  initialState: string;
}

/** create_node: defaults, driver and interfaces, then one conditional write. */
export async function createNode(n: NewNode): Promise<NodeRecord> {
  const group = String(n.fields.conductor_group ?? '').toLowerCase();
  const driver = driverFor(String(n.fields.driver));
  if (!driver) throw noValidHost(String(n.fields.driver), group);
  let rec = completeNode({ uuid: n.uuid, driver: driver.name, created_at: isoNow(), seq: nextBmSeq(), provision_state: n.initialState });
  for (const [k, v] of Object.entries(n.fields)) {
    if (k === 'uuid' || k === 'driver' || k === 'chassis_uuid' || k === 'shard') continue;
    if (v === null || v === undefined) continue;
    (rec as unknown as Record<string, unknown>)[k] = v;
  }
  rec.resource_class = (n.fields.resource_class as string) || config().baremetal.defaultResourceClass || null;
  rec.conductor_group = group;
  rec.maintenance = n.fields.maintenance === true;
  rec = checkInterfaces(driver, rec);
  const stored = rec;
  // a concurrent transaction on the name or instance item: not stored, try again
  return retrying(
    async () => {
      const out = refusedByLink(await storeNode(stored, scheduler().links));
      if ('ok' in out) return out.node;
      switch (out.error) {
        case 'duplicate_uuid':
          throw Err.nodeAlreadyExists(n.uuid);
        case 'duplicate_name':
          throw Err.duplicateNodeName(out.name);
        case 'instance_associated':
          // Ironic names "this other node": the one being created
          throw Err.instanceAssociated(out.instance, n.uuid);
        default:
          return RETRY;
      }
    },
    () => nodeBusy(n.uuid),
  );
}

// ------------------------------------------------------------------ update

/**
 * update_node: `prepare` is the API's part, run on every attempt on the node just
 * read — state checks that depend on the request, the patch applied and validated —
 * and returns the patched fields; the conductor's checks and the write follow.
 */
export async function updateNode(
  load: Load<NodeRecord>,
  prepare: (cur: NodeRecord) => Promise<Record<string, unknown>>,
  opts: { resetInterfaces: boolean; patchable: readonly string[] },
): Promise<NodeRecord> {
  const w = watchNode(load);
  return retrying(async () => {
    const cur = await w.load();
    const patched = await prepare(cur);
    return applyNodeUpdate(cur, patched, opts);
  }, w.exhausted);
}

/** Ironic's rules on the fields (core/baremetal/node-update.ts), then one conditional write */
async function applyNodeUpdate(
  cur: NodeRecord,
  patched: Record<string, unknown>,
  { resetInterfaces, patchable }: { resetInterfaces: boolean; patchable: readonly string[] },
): Promise<NodeRecord | typeof RETRY> {
  // the conductor's update_node takes the node's lock
  refuseLocked(cur);
  const { node: n, releaseAllocation } = planNodeUpdate(cur, patched, { resetInterfaces, patchable, driverFor });
  const extra = [];
  if (releaseAllocation) {
    const alloc = await getAllocation(cur.allocation_uuid!);
    if (alloc) extra.push(...allocationDeleteActions(alloc, cur.uuid));
  }
  n.updated_at = isoNow();
  const out = refusedByLink(await saveNode(cur, n, scheduler().links, extra));
  if ('ok' in out) return out.node;
  switch (out.error) {
    case 'duplicate_name':
      throw Err.duplicateNodeName(out.name);
    case 'instance_associated':
      throw Err.instanceAssociated(out.instance, cur.uuid);
    default:
      return RETRY;
  }
}

// ------------------------------------------------------------------ delete

/** destroy_node (and the allocation of a node in maintenance), atomically */
export async function destroyNode(load: Load<NodeRecord>): Promise<void> {
  const w = watchNode(load);
  await retrying(async () => {
    const node = await w.load();
    refuseLocked(node);
    if (!node.maintenance && node.instance_uuid) throw Err.nodeAssociated(node.uuid, node.instance_uuid);
    if (node.protected) throw Err.nodeProtected(node.uuid);
    const allowed = [...DELETE_ALLOWED_STATES, S.AVAILABLE];
    if (!node.maintenance && !allowed.includes(node.provision_state)) {
      throw Err.conflict(
        `Can not delete node "${node.uuid}" while it is in provision state "${node.provision_state}". Valid provision states to perform deletion are: "(${allowed.map((s) => `'${s}'`).join(', ')})", or set the node into maintenance mode`,
      );
    }
    const extra = [];
    if (node.allocation_uuid) {
      const alloc = await getAllocation(node.allocation_uuid);
      if (alloc) extra.push(...allocationDeleteActions(alloc, node.uuid));
    }
    const out = refusedByLink(await deleteNodeItems(node, scheduler().links, extra));
    return 'ok' in out ? true : RETRY;
  }, w.exhausted);
}

// ------------------------------------------------------------------ traits, maintenance

/** add_node_traits / remove_node_traits: the node's new trait set, one versioned write */
export async function changeNodeTraits(load: Load<NodeRecord>, change: (node: NodeRecord) => string[]): Promise<NodeRecord> {
  const w = watchNode(load);
  return retrying(async () => {
    const node = await w.load();
    refuseLocked(node);
    const traits = [...new Set(change(node))].sort();
    if (traits.length > MAX_TRAITS_PER_NODE) {
      throw new IronicError(
        400,
        `Could not modify traits for node ${node.uuid} as it would exceed the maximum number of traits per node (${traits.length} vs. ${MAX_TRAITS_PER_NODE})`,
      );
    }
    const out = refusedByLink(await saveNode(node, { ...node, traits, updated_at: isoNow() }, scheduler().links));
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}

/** set / clear maintenance mode */
export async function setMaintenance(load: Load<NodeRecord>, on: boolean, reason?: string): Promise<NodeRecord> {
  const w = watchNode(load);
  return retrying(async () => {
    const node = await w.load();
    refuseLocked(node);
    const next: NodeRecord = { ...node, maintenance: on, maintenance_reason: on ? (reason ?? null) : null, updated_at: isoNow() };
    if (!on) next.fault = null;
    const out = refusedByLink(await saveNode(node, next, scheduler().links));
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}

// ------------------------------------------------------------------ RAID, VIFs

/**
 * set_target_raid_config: a non-empty configuration must suit the node's RAID interface
 * (none for no-raid: 404, as the API answers UnsupportedDriverExtension here) and pass
 * `validate` (the interface's schema); an empty one clears the target. One versioned
 * write of the node, which must not be locked.
 */
export async function setTargetRaidConfig(
  load: Load<NodeRecord>,
  target: Record<string, unknown>,
  validate: (config: Record<string, unknown>) => void,
): Promise<NodeRecord> {
  const w = watchNode(load);
  return retrying(async () => {
    const node = await w.load();
    refuseLocked(node);
    if (Object.keys(target).length) {
      if (isUnsupported(node.raid_interface)) throw Err.unsupportedDriverExtension(node.driver, 'raid', 404);
      validate(target);
    }
    const out = refusedByLink(await saveNode(node, { ...node, target_raid_config: target, updated_at: isoNow() }, scheduler().links));
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}

/**
 * vif_attach: the VIF is kept on the node (Ironic binds it to a free port; Berth has no
 * ports, so a node holds at most MAX_VIFS_PER_NODE and names no port). One versioned
 * write; the node must not be locked. The node's updated_at stays: its fields do not change.
 */
export async function attachVif(load: Load<NodeRecord>, vif: { id: string; port_uuid?: unknown; portgroup_uuid?: unknown }): Promise<NodeRecord> {
  const w = watchNode(load);
  return retrying(async () => {
    const node = await w.load();
    refuseLocked(node);
    if (node.vifs.includes(vif.id)) throw Err.vifAlreadyAttached(vif.id, node.uuid);
    // no port or port group can be named or found
    if ('port_uuid' in vif || 'portgroup_uuid' in vif || node.vifs.length >= MAX_VIFS_PER_NODE) throw Err.noFreePhysicalPorts(vif.id);
    const out = refusedByLink(await saveNode(node, { ...node, vifs: [...node.vifs, vif.id] }, scheduler().links));
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}

/** vif_detach: one versioned write; the node must not be locked */
export async function detachVif(load: Load<NodeRecord>, vifId: string): Promise<NodeRecord> {
  const w = watchNode(load);
  return retrying(async () => {
    const node = await w.load();
    refuseLocked(node);
    if (!node.vifs.includes(vifId)) throw Err.vifNotAttached(vifId, node.uuid);
    const out = refusedByLink(await saveNode(node, { ...node, vifs: node.vifs.filter((v) => v !== vifId) }, scheduler().links));
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}

// ------------------------------------------------------------------ power and provisioning

/**
 * change_node_power_state: `validate` holds the API's checks on the node just read;
 * then the node is locked and a node-action execution performs the change. A driver
 * with nothing to wait for (fake-hardware) powers the node within this write instead,
 * so what the 202 announces is already stored: a client that powers a node off and
 * then allocates it at once finds it allocatable, as it does with Ironic's fake power.
 */
export async function setPowerState(load: Load<NodeRecord>, target: string, validate: (node: NodeRecord) => void): Promise<void> {
  const w = watchNode(load);
  await retrying(async () => {
    const node = await w.load();
    validate(node);
    refuseLocked(node);
    const next: NodeRecord = {
      ...node,
      target_power_state: target === POWER.REBOOT || target === POWER.SOFT_REBOOT ? POWER.ON : target,
      last_error: null,
      updated_at: isoNow(),
    };
    const driver = driverOf(node);
    if (driver.instantPower()) {
      const out = refusedByLink(
        await saveNode(node, { ...next, power_state: await driver.setPower(node, target), target_power_state: null }, scheduler().links),
      );
      return 'ok' in out ? out.node : RETRY;
    }
    const out = await launchNodeAction(node, next, 'power', target);
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}

export interface ProvisionRequest {
  /** the API verb (deploy is 'active', ...) */
  target: string;
  configdrive: unknown;
  /** the API's checks on the node just read, before the state machine is asked (microversion) */
  before: (node: NodeRecord) => void;
  /** the API's checks once the verb is known to apply (arguments that depend on it) */
  validate: (node: NodeRecord, event: string) => void;
}

/**
 * do_provisioning_action: the first state-machine event is applied with the node's
 * lock taken in one conditional write; the remaining program runs in a node-action
 * execution. A verb without program (manage from enroll, ...) is a plain write.
 */
export async function setProvisionState(load: Load<NodeRecord>, req: ProvisionRequest): Promise<void> {
  const { target, configdrive } = req;
  const w = watchNode(load);
  await retrying(async () => {
    const node = await w.load();
    req.before(node);
    if ((target === S.ACTIVE || target === 'rebuild') && node.maintenance) throw Err.nodeInMaintenance('provisioning', node.uuid);
    const event = VERBS[target] ?? target;
    if (!isActionable(node.provision_state, event)) {
      refuseLocked(node);
      throw Err.invalidStateRequested(target, node.uuid, node.provision_state);
    }
    req.validate(node, event);
    refuseLocked(node);
    if (node.protected && (event === 'delete' || event === 'rebuild' || (event === 'deploy' && node.provision_state !== S.AVAILABLE))) {
      throw Err.nodeProtected(node.uuid);
    }
    const moved = processEvent(node.provision_state, event, node.target_provision_state, target === 'clean' ? S.MANAGEABLE : undefined);
    const now = isoNow();
    const next: NodeRecord = {
      ...node,
      provision_state: moved.state,
      target_provision_state: moved.target,
      provision_updated_at: now,
      updated_at: now,
      last_error: null,
    };
    if (configdrive && event === 'deploy') next.instance_info = { ...node.instance_info, configdrive };
    if (!provisionProgram(target, node.provision_state).length) {
      const out = refusedByLink(await saveNode(node, next, scheduler().links));
      return 'ok' in out ? out.node : RETRY;
    }
    const out = await launchNodeAction(node, next, 'provision', target);
    return 'ok' in out ? out.node : RETRY;
  }, w.exhausted);
}
