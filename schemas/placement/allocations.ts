/**
 * Request schemas of /allocations (placement/schemas/allocation.py).
 *
 * Upstream builds each microversion's schema by deep-copying the previous one and
 * adding keys; the builders below do the same steps in the same order, because
 * property and `required` order decide which error Python's jsonschema reports. The
 * maps keyed by provider / consumer uuid and by resource class are patternProperties,
 * which zod cannot express: `exact()` pins the JSON Schema, zod types the value.
 */
import * as z from 'zod';
import { exact } from '../json-schema.js';

/** common.UUID_PATTERN */
export const UUID_PATTERN = '^[0-9a-fA-F-]{36}$';
/** common.RC_PATTERN / CONSUMER_TYPE_PATTERN */
export const RC_PATTERN = '^[A-Z0-9_]+$';
export const CONSUMER_TYPE_PATTERN = RC_PATTERN;
/** common.GROUP_PAT_1_33 */
const GROUP_PAT_1_33 = '[a-zA-Z0-9_-]{1,64}';

// biome-ignore lint/suspicious/noExplicitAny: hand-written JSON Schema fragments, checked by the validator, not by TypeScript
type Json = Record<string, any>;
const copy = <T>(v: T): T => structuredClone(v);

const resources = (): Json => ({
  type: 'object',
  minProperties: 1,
  patternProperties: { [RC_PATTERN]: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
});

const idString = (): Json => ({ type: 'string', minLength: 1, maxLength: 255 });

/** ALLOCATION_SCHEMA (1.0 - 1.7): a list of {resource_provider: {uuid}, resources} */
export const ALLOCATION_SCHEMA: Json = {
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: {
            type: 'object',
            properties: { uuid: { type: 'string', format: 'uuid' } },
            additionalProperties: false,
            required: ['uuid'],
          },
          resources: resources(),
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
  },
  required: ['allocations'],
  additionalProperties: false,
};

/** ALLOCATION_SCHEMA_V1_8: + project_id, user_id (required) */
export const ALLOCATION_SCHEMA_V1_8: Json = copy(ALLOCATION_SCHEMA);
ALLOCATION_SCHEMA_V1_8.properties.project_id = idString();
ALLOCATION_SCHEMA_V1_8.properties.user_id = idString();
ALLOCATION_SCHEMA_V1_8.required.push('project_id', 'user_id');

/** ALLOCATION_SCHEMA_V1_12: the dict form keyed by provider uuid */
export const ALLOCATION_SCHEMA_V1_12: Json = {
  type: 'object',
  properties: {
    allocations: {
      type: 'object',
      minProperties: 1,
      patternProperties: {
        [UUID_PATTERN]: {
          type: 'object',
          properties: {
            generation: { type: 'integer' },
            resources: resources(),
          },
          required: ['resources'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    project_id: idString(),
    user_id: idString(),
  },
  additionalProperties: false,
  required: ['allocations', 'project_id', 'user_id'],
};

/** DELETABLE_ALLOCATIONS: as 1.12 but allocations may be empty */
export const DELETABLE_ALLOCATIONS: Json = copy(ALLOCATION_SCHEMA_V1_12);
DELETABLE_ALLOCATIONS.properties.allocations.minProperties = 0;

/** POST_ALLOCATIONS_V1_13: consumer uuid -> DELETABLE_ALLOCATIONS */
export const POST_ALLOCATIONS_V1_13: Json = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  patternProperties: { [UUID_PATTERN]: DELETABLE_ALLOCATIONS },
};

const consumerGeneration = (): Json => ({ type: ['integer', 'null'], additionalProperties: false });

/** ALLOCATION_SCHEMA_V1_28: + consumer_generation (required), empty allocations allowed */
export const ALLOCATION_SCHEMA_V1_28: Json = copy(DELETABLE_ALLOCATIONS);
ALLOCATION_SCHEMA_V1_28.properties.consumer_generation = consumerGeneration();
ALLOCATION_SCHEMA_V1_28.required.push('consumer_generation');

const REQUIRED_GENERATION_ALLOCS_POST: Json = copy(DELETABLE_ALLOCATIONS);
REQUIRED_GENERATION_ALLOCS_POST.properties.consumer_generation = consumerGeneration();
REQUIRED_GENERATION_ALLOCS_POST.required.push('consumer_generation');
/** POST_ALLOCATIONS_V1_28 */
export const POST_ALLOCATIONS_V1_28: Json = copy(POST_ALLOCATIONS_V1_13);
POST_ALLOCATIONS_V1_28.patternProperties = { [UUID_PATTERN]: REQUIRED_GENERATION_ALLOCS_POST };

const mappingsSchema = (): Json => ({
  type: 'object',
  minProperties: 1,
  patternProperties: {
    [GROUP_PAT_1_33]: { type: 'array', minItems: 1, items: { type: 'string', format: 'uuid' } },
  },
});

/** ALLOCATION_SCHEMA_V1_34: + mappings (accepted, not stored: upstream ignores them too) */
export const ALLOCATION_SCHEMA_V1_34: Json = copy(ALLOCATION_SCHEMA_V1_28);
ALLOCATION_SCHEMA_V1_34.properties.mappings = mappingsSchema();
export const POST_ALLOCATIONS_V1_34: Json = copy(POST_ALLOCATIONS_V1_28);
POST_ALLOCATIONS_V1_34.patternProperties = { [UUID_PATTERN]: ALLOCATION_SCHEMA_V1_34 };

/** ALLOCATION_SCHEMA_V1_38: + consumer_type (required) */
export const ALLOCATION_SCHEMA_V1_38: Json = copy(ALLOCATION_SCHEMA_V1_34);
ALLOCATION_SCHEMA_V1_38.properties.consumer_type = { type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255 };
ALLOCATION_SCHEMA_V1_38.required.push('consumer_type');
export const POST_ALLOCATIONS_V1_38: Json = copy(POST_ALLOCATIONS_V1_34);
POST_ALLOCATIONS_V1_38.patternProperties = { [UUID_PATTERN]: ALLOCATION_SCHEMA_V1_38 };

// ---- zod types of the validated bodies

const zResources = z.record(z.string(), z.int());
const zDictAllocations = z.record(z.string(), z.object({ generation: z.int().optional(), resources: zResources }));

/** one consumer's allocations in the dict form (1.12+), with the fields later versions add */
const zConsumerAllocations = z.object({
  allocations: zDictAllocations,
  project_id: z.string(),
  user_id: z.string(),
  consumer_generation: z.int().nullable().optional(),
  consumer_type: z.string().optional(),
  mappings: z.record(z.string(), z.array(z.string())).optional(),
});

export const putAllocationsList = exact(
  z.object({
    allocations: z.array(z.object({ resource_provider: z.object({ uuid: z.string() }), resources: zResources })),
    project_id: z.string().optional(),
    user_id: z.string().optional(),
  }),
  ALLOCATION_SCHEMA,
);
export const putAllocationsListV1_8 = exact(putAllocationsList.clone(), ALLOCATION_SCHEMA_V1_8);
export const putAllocationsV1_12 = exact(zConsumerAllocations, ALLOCATION_SCHEMA_V1_12);
export const putAllocationsV1_28 = exact(zConsumerAllocations.clone(), ALLOCATION_SCHEMA_V1_28);
export const putAllocationsV1_34 = exact(zConsumerAllocations.clone(), ALLOCATION_SCHEMA_V1_34);
export const putAllocationsV1_38 = exact(zConsumerAllocations.clone(), ALLOCATION_SCHEMA_V1_38);

const zPost = z.record(z.string(), zConsumerAllocations);
export const postAllocationsV1_13 = exact(zPost, POST_ALLOCATIONS_V1_13);
export const postAllocationsV1_28 = exact(zPost.clone(), POST_ALLOCATIONS_V1_28);
export const postAllocationsV1_34 = exact(zPost.clone(), POST_ALLOCATIONS_V1_34);
export const postAllocationsV1_38 = exact(zPost.clone(), POST_ALLOCATIONS_V1_38);

export type PutAllocationsList = z.infer<typeof putAllocationsList>;
export type ConsumerAllocations = z.infer<typeof zConsumerAllocations>;
export type PostAllocations = z.infer<typeof zPost>;
