/**
 * PUT /v1/nodes/{node}/states/raid: the target RAID configuration Ironic's RAID
 * interface accepts (its raid_config_schema: logical disks with a RAID level and a
 * size, optional placement hints), and the body of POST /v1/nodes/{node}/vifs
 * (VIF_VALIDATOR's schema: an object with a string id).
 */
import * as z from 'zod';
import { exact } from '../json-schema.js';

export const RAID_LEVELS = ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0'] as const;

export const LOGICAL_DISK_JSON = {
  type: 'object',
  properties: {
    raid_level: { type: 'string', enum: [...RAID_LEVELS] },
    size_gb: {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'string', enum: ['MAX'] },
      ],
    },
    volume_name: { type: 'string' },
    is_root_volume: { type: 'boolean' },
    share_physical_disks: { type: 'boolean' },
    disk_type: { type: 'string', enum: ['hdd', 'ssd'] },
    interface_type: { type: 'string', enum: ['sata', 'scsi', 'sas'] },
    number_of_physical_disks: { type: 'integer', exclusiveMinimum: 0 },
    controller: { type: 'string' },
    physical_disks: {
      anyOf: [
        { type: 'array', items: { type: 'string' } },
        { type: 'array', items: { type: 'object' }, minItems: 2 },
      ],
    },
  },
  required: ['raid_level', 'size_gb'],
  additionalProperties: false,
  dependencies: { physical_disks: ['controller'] },
};

export const RAID_CONFIG_JSON = {
  type: 'object',
  properties: { logical_disks: { type: 'array', items: LOGICAL_DISK_JSON, minItems: 1 } },
  required: ['logical_disks'],
  additionalProperties: false,
};

export const raidConfig = exact(z.record(z.string(), z.unknown()), RAID_CONFIG_JSON);

export const VIF_JSON = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
  additionalProperties: true,
};

export const vifAttach = exact(z.looseObject({ id: z.string() }), VIF_JSON);
