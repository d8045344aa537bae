/** Request schema of POST /v1/allocations (ironic/api/controllers/v1/allocation.py ALLOCATION_SCHEMA). */
import * as z from 'zod';
import { exact } from '../json-schema.js';
import { TRAIT_JSON } from './traits.js';
import { ALLOCATION_LIMITS } from '../../functions/core/baremetal/allocations.js';

const nullable = (t: string) => ({ type: [t, 'null'] });

export const ALLOCATION_JSON = {
  type: 'object',
  properties: {
    candidate_nodes: { type: ['array', 'null'], items: { type: 'string' } },
    extra: nullable('object'),
    name: nullable('string'),
    node: nullable('string'),
    owner: nullable('string'),
    resource_class: { type: ['string', 'null'], maxLength: 80 },
    traits: { type: ['array', 'null'], items: TRAIT_JSON },
    uuid: nullable('string'),
  },
  additionalProperties: false,
};

export const createAllocation = exact(
  z.strictObject({
    candidate_nodes: z.array(z.string()).nullable().optional(),
    extra: z.record(z.string(), z.unknown()).nullable().optional(),
    name: z.string().nullable().optional(),
    node: z.string().nullable().optional(),
    owner: z.string().nullable().optional(),
    resource_class: z.string().max(80).nullable().optional(),
    traits: z.array(z.string()).nullable().optional(),
    uuid: z.string().nullable().optional(),
  }),
  ALLOCATION_JSON,
);
export type CreateAllocation = z.infer<typeof createAllocation>;

/**
 * POST /v1/allocations as published (OpenAPI): Ironic's schema plus Berth's bounds
 * (ALLOCATION_LIMITS), which the handler checks after the schema, with its own text.
 */
export const ALLOCATION_DOC_JSON = {
  ...ALLOCATION_JSON,
  properties: {
    ...ALLOCATION_JSON.properties,
    candidate_nodes: { ...ALLOCATION_JSON.properties.candidate_nodes, maxItems: ALLOCATION_LIMITS.candidateNodes },
    owner: { ...ALLOCATION_JSON.properties.owner, maxLength: ALLOCATION_LIMITS.owner },
    traits: { ...ALLOCATION_JSON.properties.traits, maxItems: ALLOCATION_LIMITS.traits },
  },
};

/** the fields PATCH may change */
export const ALLOCATION_PATCH_FIELDS = ['name', 'extra'] as const;
