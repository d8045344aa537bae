/** Query schemas of GET /usages (placement/schemas/usage.py). */
import * as z from 'zod';
import { exact } from '../json-schema.js';
import { RC_PATTERN } from './allocations.js';

/** common.CONSUMER_TYPE_GET_PATTERN: a type name, or "all" / "unknown" */
export const CONSUMER_TYPE_GET_PATTERN = `${RC_PATTERN}|^all|^unknown$`;

const idString = () => ({ type: 'string', minLength: 1, maxLength: 255 });

const base = {
  project_id: z.string(),
  user_id: z.string().optional(),
};

/** GET_USAGES_SCHEMA_1_9 */
export const usagesQuery1_9 = exact(z.object(base), {
  type: 'object',
  properties: { project_id: idString(), user_id: idString() },
  required: ['project_id'],
  additionalProperties: false,
});

/** GET_USAGES_SCHEMA_V1_38: + consumer_type */
export const usagesQuery1_38 = exact(z.object({ ...base, consumer_type: z.string().optional() }), {
  type: 'object',
  properties: {
    project_id: idString(),
    user_id: idString(),
    consumer_type: { type: 'string', pattern: CONSUMER_TYPE_GET_PATTERN, minLength: 1, maxLength: 255 },
  },
  required: ['project_id'],
  additionalProperties: false,
});

export type UsagesQuery = z.infer<typeof usagesQuery1_38>;
