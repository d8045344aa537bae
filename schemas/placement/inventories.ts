/**
 * Request schemas of /resource_providers/{uuid}/inventories (placement/schemas/inventory.py).
 *
 * The zod objects type the bodies; `exact()` pins the JSON Schema to upstream's
 * because zod orders `required` by property order, while upstream lists `total`
 * before `resource_provider_generation` (and Python jsonschema reports the first
 * missing one), and PUT's map of inventories is a patternProperties object.
 */
import * as z from 'zod';
import { exact } from '../json-schema.js';
import { MAX_INT, SQL_SP_FLOAT_MAX } from '../../functions/core/placement/inventory.js';

/** common.RC_PATTERN */
export const RC_PATTERN = '^[A-Z0-9_]+$';

const intField = { type: 'integer', maximum: MAX_INT, minimum: 1 };

function baseProperties(): Record<string, unknown> {
  return {
    resource_provider_generation: { type: 'integer' },
    total: { ...intField },
    reserved: { type: 'integer', maximum: MAX_INT, minimum: 0 },
    min_unit: { ...intField },
    max_unit: { ...intField },
    step_size: { ...intField },
    allocation_ratio: { type: 'number', maximum: SQL_SP_FLOAT_MAX },
  };
}

const count = (min: number) => z.int().min(min).max(MAX_INT);
const fields = {
  total: count(1),
  reserved: count(0).optional(),
  min_unit: count(1).optional(),
  max_unit: count(1).optional(),
  step_size: count(1).optional(),
  allocation_ratio: z.number().max(SQL_SP_FLOAT_MAX).optional(),
};

/** BASE_INVENTORY_SCHEMA: PUT /resource_providers/{uuid}/inventories/{rc} */
export const putInventory = exact(z.strictObject({ resource_provider_generation: z.int(), ...fields }), {
  type: 'object',
  properties: baseProperties(),
  required: ['total', 'resource_provider_generation'],
  additionalProperties: false,
});

/** POST_INVENTORY_SCHEMA: POST /resource_providers/{uuid}/inventories */
export const postInventory = exact(
  z.strictObject({ resource_provider_generation: z.int().optional(), ...fields, resource_class: z.string().regex(new RegExp(RC_PATTERN)) }),
  {
    type: 'object',
    properties: { ...baseProperties(), resource_class: { type: 'string', pattern: RC_PATTERN } },
    required: ['total', 'resource_class'],
    additionalProperties: false,
  },
);

const inventoryRecord = z.strictObject({ resource_provider_generation: z.int().optional(), ...fields });

/** PUT_INVENTORY_SCHEMA: PUT /resource_providers/{uuid}/inventories */
export const putInventories = exact(z.strictObject({ resource_provider_generation: z.int(), inventories: z.record(z.string(), inventoryRecord) }), {
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    inventories: {
      type: 'object',
      patternProperties: {
        [RC_PATTERN]: {
          type: 'object',
          properties: baseProperties(),
          required: ['total'],
          additionalProperties: false,
        },
      },
    },
  },
  required: ['resource_provider_generation', 'inventories'],
  additionalProperties: false,
});

export type PutInventory = z.infer<typeof putInventory>;
export type PostInventory = z.infer<typeof postInventory>;
export type PutInventories = z.infer<typeof putInventories>;
