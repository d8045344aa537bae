/**
 * Request schemas of POST /reshaper (placement/schemas/reshaper.py): inventories in
 * the form of PUT /resource_providers/{uuid}/inventories per provider, allocations in
 * the form of POST /allocations (1.28, 1.34 or 1.38) where an empty set is allowed.
 */
import * as z from 'zod';
import { exact, jsonSchemaOf } from '../json-schema.js';
import { putInventories } from './inventories.js';
import { POST_ALLOCATIONS_V1_28, POST_ALLOCATIONS_V1_34, POST_ALLOCATIONS_V1_38, UUID_PATTERN, type PostAllocations } from './allocations.js';

// biome-ignore lint/suspicious/noExplicitAny: hand-written JSON Schema fragments, checked by the validator, not by TypeScript
type Json = Record<string, any>;

function schema(postAllocations: Json): Json {
  const allocations = structuredClone(postAllocations);
  allocations.minProperties = 0;
  return {
    type: 'object',
    properties: {
      inventories: {
        type: 'object',
        patternProperties: { [UUID_PATTERN]: structuredClone(jsonSchemaOf(putInventories)) },
        minProperties: 1,
        additionalProperties: false,
      },
      allocations,
    },
    required: ['inventories', 'allocations'],
    additionalProperties: false,
  };
}

const zReshape = z.object({
  inventories: z.record(z.string(), z.custom<z.infer<typeof putInventories>>()),
  allocations: z.custom<PostAllocations>(),
});

/** POST_RESHAPER_SCHEMA (1.30) */
export const reshape = exact(zReshape, schema(POST_ALLOCATIONS_V1_28));
/** POST_RESHAPER_SCHEMA_V1_34: allocations may carry mappings */
export const reshapeV1_34 = exact(zReshape.clone(), schema(POST_ALLOCATIONS_V1_34));
/** POST_RESHAPER_SCHEMA_V1_38: allocations carry a consumer type */
export const reshapeV1_38 = exact(zReshape.clone(), schema(POST_ALLOCATIONS_V1_38));

export type Reshape = z.infer<typeof zReshape>;
