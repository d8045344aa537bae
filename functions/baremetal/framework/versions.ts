/**
 * Ironic's API microversions (ironic/api/controllers/v1/versions.py, base.py).
 * Berth serves 1.1 – 1.80: 1.80 only signals the project-scoped node create/delete
 * policy, which Berth has; 1.81 (node inventory) and 1.82 (shards) add endpoints
 * Berth does not implement, so it does not claim them.
 */
import { WebobError } from './errors.js';

export const MIN_MINOR = 1;
export const MAX_MINOR = 80;
export const MIN_VERSION = `1.${MIN_MINOR}`;
export const MAX_VERSION = `1.${MAX_MINOR}`;

export const HEADER = 'x-openstack-ironic-api-version';
export const MIN_HEADER = 'x-openstack-ironic-api-minimum-version';
export const MAX_HEADER = 'x-openstack-ironic-api-maximum-version';

export const V = {
  AVAILABLE_STATE: 2,
  DRIVER_INTERNAL_INFO: 3,
  MANAGEABLE_STATE: 4,
  NODE_NAME: 5,
  INSPECT_STATE: 6,
  NODE_CLEAN: 7,
  FIELDS: 8,
  PROVISION_STATE_FILTER: 9,
  UNRESTRICTED_NODE_NAME: 10,
  ENROLL_STATE: 11,
  RAID_CONFIG: 12,
  LINKS_NODESTATES: 14,
  DRIVER_FILTER: 16,
  NETWORK_INTERFACE: 20,
  RESOURCE_CLASS: 21,
  PORTGROUPS_SUBCONTROLLERS: 24,
  SOFT_POWER_OFF: 27,
  NODE_VIFS: 28,
  DYNAMIC_DRIVERS: 30,
  DYNAMIC_INTERFACES: 31,
  VOLUME: 32,
  STORAGE_INTERFACE: 33,
  NODE_TRAITS: 37,
  RESCUE_INTERFACE: 38,
  INSPECT_WAIT: 39,
  BIOS_INTERFACE: 40,
  FAULT: 42,
  DETAIL_QUERY: 43,
  DEPLOY_STEP: 44,
  RESET_INTERFACES: 45,
  CONDUCTOR_GROUP: 46,
  AUTOMATED_CLEAN: 47,
  PROTECTED: 48,
  CONDUCTORS: 49,
  NODE_OWNER: 50,
  NODE_DESCRIPTION: 51,
  ALLOCATION: 52,
  EVENTS: 54,
  ALLOCATION_UPDATE: 57,
  ALLOCATION_BACKFILL: 58,
  ALLOCATION_OWNER: 60,
  NODE_RETIRED: 61,
  NODE_LESSEE: 65,
  NODE_NETWORK_DATA: 66,
  VIF_ATTACH_PORT: 67,
  NODE_BOOT_MODE: 75,
  DRIVER_FIELDS: 77,
  ALLOCATION_NODE_NAME: 79,
} as const;

/** api_utils.VERSIONED_FIELDS for nodes */
export const VERSIONED_FIELDS: Record<string, number> = {
  driver_internal_info: V.DRIVER_INTERNAL_INFO,
  name: V.NODE_NAME,
  inspection_finished_at: V.INSPECT_STATE,
  inspection_started_at: V.INSPECT_STATE,
  clean_step: V.NODE_CLEAN,
  raid_config: V.RAID_CONFIG,
  target_raid_config: V.RAID_CONFIG,
  network_interface: V.NETWORK_INTERFACE,
  resource_class: V.RESOURCE_CLASS,
  storage_interface: V.STORAGE_INTERFACE,
  traits: V.NODE_TRAITS,
  rescue_interface: V.RESCUE_INTERFACE,
  bios_interface: V.BIOS_INTERFACE,
  fault: V.FAULT,
  deploy_step: V.DEPLOY_STEP,
  conductor_group: V.CONDUCTOR_GROUP,
  automated_clean: V.AUTOMATED_CLEAN,
  protected: V.PROTECTED,
  protected_reason: V.PROTECTED,
  conductor: V.CONDUCTORS,
  owner: V.NODE_OWNER,
  description: V.NODE_DESCRIPTION,
  allocation_uuid: V.ALLOCATION,
  events: V.EVENTS,
  retired: V.NODE_RETIRED,
  retired_reason: V.NODE_RETIRED,
  lessee: V.NODE_LESSEE,
  network_data: V.NODE_NETWORK_DATA,
  boot_mode: V.NODE_BOOT_MODE,
  secure_boot: V.NODE_BOOT_MODE,
  /** 1.82: beyond Berth's maximum, so never visible */
  shard: 82,
  boot_interface: V.DYNAMIC_INTERFACES,
  console_interface: V.DYNAMIC_INTERFACES,
  deploy_interface: V.DYNAMIC_INTERFACES,
  inspect_interface: V.DYNAMIC_INTERFACES,
  management_interface: V.DYNAMIC_INTERFACES,
  power_interface: V.DYNAMIC_INTERFACES,
  raid_interface: V.DYNAMIC_INTERFACES,
  vendor_interface: V.DYNAMIC_INTERFACES,
};

export interface ApiVersion {
  major: number;
  minor: number;
}

/** base.Version.parse_headers: absent = minimum, 'latest' = maximum, else "X.Y" */
export function parseVersionHeader(value: string | undefined): ApiVersion {
  let s = value ?? MIN_VERSION;
  if (s.toLowerCase() === 'latest') s = MAX_VERSION;
  const parts = s.split('.');
  const nums = parts.map((p) => (/^\s*[+-]?\d+\s*$/.test(p) ? Number.parseInt(p, 10) : NaN));
  if (nums.length !== 2 || nums.some((n) => Number.isNaN(n))) {
    throw new WebobError(406, 'Invalid value for X-OpenStack-Ironic-API-Version header');
  }
  return { major: nums[0]!, minor: nums[1]! };
}

export function rangeHeaders(): Record<string, string> {
  return { [MIN_HEADER]: MIN_VERSION, [MAX_HEADER]: MAX_VERSION };
}

/** Controller._check_version */
export function checkVersion(v: ApiVersion): void {
  const ver = `${v.major}.${v.minor}`;
  if (v.major !== 1) {
    throw new WebobError(
      406,
      `Mutually exclusive versions requested. Version ${ver} requested but not supported by this service. The supported version range is: [${MIN_VERSION}, ${MAX_VERSION}].`,
      rangeHeaders(),
    );
  }
  if (v.minor < MIN_MINOR || v.minor > MAX_MINOR) {
    throw new WebobError(
      406,
      `Version ${ver} was requested but the minor version is not supported by this service. The supported version range is: [${MIN_VERSION}, ${MAX_VERSION}].`,
      rangeHeaders(),
    );
  }
}

/** Fields of a node not visible at this version (api_utils.disallowed_fields). */
export function disallowedFields(minor: number): string[] {
  return Object.entries(VERSIONED_FIELDS)
    .filter(([, min]) => minor < min)
    .map(([f]) => f);
}
