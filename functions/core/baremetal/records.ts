/**
 * Nodes and allocations as the bare-metal API sees them (Ironic's field names), names
 * (ironic/common/utils.py) and the small rules on records. Pure.
 */
import { S } from './states.js';

// ------------------------------------------------------------------ names

const LOGICAL_NAME = /^[A-Z0-9\-._~]+\n?$/i;
const HOSTNAME_SAFE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?\n?$/;

/** ironic.common.utils.is_valid_logical_name (RFC 3986 unreserved characters, <= 255) */
export function isValidLogicalName(name: unknown): boolean {
  return typeof name === 'string' && [...name].length <= 255 && LOGICAL_NAME.test(name);
}

/** ironic.common.utils.is_hostname_safe (names before API 1.10) */
export function isHostnameSafe(name: unknown): boolean {
  return typeof name === 'string' && [...name].length <= 255 && HOSTNAME_SAFE.test(name);
}

// ------------------------------------------------------------------ records

export const INTERFACES = [
  'bios',
  'boot',
  'console',
  'deploy',
  'inspect',
  'management',
  'network',
  'power',
  'raid',
  'rescue',
  'storage',
  'vendor',
] as const;

/** A node as the API sees it (Ironic's field names); null = unset. */
export interface NodeRecord {
  uuid: string;
  name: string | null;
  driver: string;
  driver_info: Record<string, unknown>;
  driver_internal_info: Record<string, unknown>;
  properties: Record<string, unknown>;
  extra: Record<string, unknown>;
  instance_info: Record<string, unknown>;
  instance_uuid: string | null;
  allocation_uuid: string | null;
  resource_class: string | null;
  provision_state: string;
  target_provision_state: string | null;
  provision_updated_at: string | null;
  power_state: string | null;
  target_power_state: string | null;
  maintenance: boolean;
  maintenance_reason: string | null;
  fault: string | null;
  last_error: string | null;
  owner: string | null;
  lessee: string | null;
  description: string | null;
  conductor_group: string;
  protected: boolean;
  protected_reason: string | null;
  retired: boolean;
  retired_reason: string | null;
  automated_clean: boolean | null;
  console_enabled: boolean;
  network_data: Record<string, unknown>;
  boot_mode: string | null;
  secure_boot: boolean | null;
  clean_step: Record<string, unknown>;
  deploy_step: Record<string, unknown>;
  raid_config: Record<string, unknown>;
  target_raid_config: Record<string, unknown>;
  inspection_started_at: string | null;
  inspection_finished_at: string | null;
  traits: string[];
  /** the VIFs attached to the node (Ironic keeps them on its ports; Berth has none) */
  vifs: string[];
  bios_interface: string | null;
  boot_interface: string | null;
  console_interface: string | null;
  deploy_interface: string | null;
  inspect_interface: string | null;
  management_interface: string | null;
  network_interface: string | null;
  power_interface: string | null;
  raid_interface: string | null;
  rescue_interface: string | null;
  storage_interface: string | null;
  vendor_interface: string | null;
  created_at: string;
  updated_at: string | null;
  /** the execution holding the node's lock while a provision/power action runs (Ironic's reservation) */
  lock: string | null;
  /** what that execution is doing, so a dead one can be resumed (cleared with the lock) */
  lock_action: NodeLockAction | null;
  /** optimistic-concurrency version, bumped by every write */
  ver: number;
  /** creation order (Ironic lists by internal id) */
  seq: number;
}

export interface NodeLockAction {
  action: 'power' | 'provision';
  /** the power target, or the provision verb */
  target: string;
  /** the provision state the action started from */
  from: string;
  /** when the lock was taken (ms epoch) */
  at: number;
  /** how many times orphan recovery resumed this action (absent: never) */
  resumes?: number;
}

/** Fields that hold a dict (empty dict when unset). */
export const NODE_DICT_FIELDS = [
  'driver_info',
  'driver_internal_info',
  'properties',
  'extra',
  'instance_info',
  'network_data',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
] as const;

export interface AllocationRecord {
  uuid: string;
  name: string | null;
  resource_class: string;
  traits: string[];
  candidate_nodes: string[];
  extra: Record<string, unknown>;
  owner: string | null;
  state: string;
  last_error: string | null;
  node_uuid: string | null;
  created_at: string;
  updated_at: string | null;
  /** the execution processing the allocation (Ironic's conductor_affinity) */
  exec: string | null;
  /** when `exec` was assigned (ms epoch) */
  exec_at: number;
  /** how many times orphan recovery resumed the allocation (absent: never) */
  resumes?: number;
  /**
   * who created it (not in the API): with BAREMETAL_SCHEDULER=placement its Placement
   * consumer belongs to the owner, else to this project, and to this user
   */
  consumer_project?: string | null;
  consumer_user?: string | null;
  seq: number;
}

/** Python's datetime.isoformat() of an aware UTC time: 2026-11-22T07:41:52.877259+00:00 */
export function isoNow(d: Date = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}000+00:00`);
}

/** Is the node one an allocation could take right now (ignoring class, traits, owner)? */
export function isAllocatable(n: Pick<NodeRecord, 'provision_state' | 'maintenance' | 'power_state' | 'instance_uuid'>): boolean {
  return n.provision_state === S.AVAILABLE && !n.maintenance && n.power_state !== null && !n.instance_uuid;
}
