/**
 * Request schema of POST /v1/nodes and of a patched node (node.node_schema /
 * node_patch_schema). network_data is accepted as any object: Berth stores it but,
 * like fake hardware, never interprets it.
 */
import * as z from 'zod';
import { exact } from '../json-schema.js';

const t = (...types: string[]) => ({ type: types.length === 1 ? types[0] : types });

export const NODE_PROPERTIES: Record<string, unknown> = {
  automated_clean: t('string', 'boolean', 'null'),
  bios_interface: t('string', 'null'),
  boot_interface: t('string', 'null'),
  boot_mode: t('string', 'null'),
  chassis_uuid: t('string', 'null'),
  conductor_group: t('string', 'null'),
  console_enabled: t('string', 'boolean', 'null'),
  console_interface: t('string', 'null'),
  deploy_interface: t('string', 'null'),
  description: { type: ['string', 'null'], maxLength: 4096 },
  driver: t('string'),
  driver_info: t('object', 'null'),
  extra: t('object', 'null'),
  inspect_interface: t('string', 'null'),
  instance_info: t('object', 'null'),
  instance_uuid: t('string', 'null'),
  lessee: t('string', 'null'),
  management_interface: t('string', 'null'),
  maintenance: t('string', 'boolean', 'null'),
  name: t('string', 'null'),
  network_data: { anyOf: [{ type: 'null' }, { type: 'object' }] },
  network_interface: t('string', 'null'),
  owner: t('string', 'null'),
  power_interface: t('string', 'null'),
  properties: t('object', 'null'),
  raid_interface: t('string', 'null'),
  rescue_interface: t('string', 'null'),
  resource_class: { type: ['string', 'null'], maxLength: 80 },
  retired: t('string', 'boolean', 'null'),
  retired_reason: t('string', 'null'),
  secure_boot: t('string', 'boolean', 'null'),
  shard: t('string', 'null'),
  storage_interface: t('string', 'null'),
  uuid: t('string', 'null'),
  vendor_interface: t('string', 'null'),
};

export const NODE_JSON = { type: 'object', properties: NODE_PROPERTIES, required: ['driver'], additionalProperties: false };

export const NODE_PATCH_JSON = {
  type: 'object',
  properties: { ...NODE_PROPERTIES, protected: t('string', 'boolean', 'null'), protected_reason: t('string', 'null') },
  required: ['driver'],
  additionalProperties: false,
};

export const createNode = exact(z.record(z.string(), z.unknown()), NODE_JSON);
export const patchedNode = exact(z.record(z.string(), z.unknown()), NODE_PATCH_JSON);

/** node.PATCH_ALLOWED_FIELDS */
export const NODE_PATCH_FIELDS = [
  'automated_clean',
  'bios_interface',
  'boot_interface',
  'chassis_uuid',
  'conductor_group',
  'console_interface',
  'deploy_interface',
  'description',
  'driver',
  'driver_info',
  'extra',
  'inspect_interface',
  'instance_info',
  'instance_uuid',
  'lessee',
  'maintenance',
  'management_interface',
  'name',
  'network_data',
  'network_interface',
  'owner',
  'power_interface',
  'properties',
  'protected',
  'protected_reason',
  'raid_interface',
  'rescue_interface',
  'resource_class',
  'retired',
  'retired_reason',
  'shard',
  'storage_interface',
  'vendor_interface',
] as const;
