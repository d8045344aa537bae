/**
 * Request schemas of PUT /resource_providers/{uuid}/aggregates (placement/schemas/aggregate.py).
 * zod has no uniqueItems, so the JSON Schema is pinned with `exact()`.
 */
import * as z from 'zod';
import { exact, uuidString } from '../json-schema.js';

const listJson = () => ({ type: 'array', items: { type: 'string', format: 'uuid' }, uniqueItems: true });

/** PUT_AGGREGATES_SCHEMA_V1_1: a bare list of aggregate uuids */
export const putAggregatesV1_1 = exact(z.array(uuidString()), listJson());

/** PUT_AGGREGATES_SCHEMA_V1_19: the list and the provider generation */
export const putAggregatesV1_19 = exact(z.strictObject({ aggregates: z.array(uuidString()), resource_provider_generation: z.int() }), {
  type: 'object',
  properties: { aggregates: listJson(), resource_provider_generation: { type: 'integer' } },
  required: ['aggregates', 'resource_provider_generation'],
  additionalProperties: false,
});

export type PutAggregatesV1_19 = z.infer<typeof putAggregatesV1_19>;
