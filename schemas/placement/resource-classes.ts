/**
 * Request schemas of /resource_classes (placement/schemas/resource_class.py). The JSON
 * Schema is pinned with `exact()` so `pattern` is checked before `maxLength`, as in
 * upstream (zod emits maxLength first; the first failure is the one reported).
 */
import * as z from 'zod';
import { exact } from '../json-schema.js';

/** common.CUSTOM_RC_PATTERN */
export const CUSTOM_RC_PATTERN = '^CUSTOM_[A-Z0-9_]+$';

/** POST_RC_SCHEMA_V1_2 (PUT_RC_SCHEMA_V1_2 is the same) */
export const postResourceClass = exact(z.strictObject({ name: z.string().max(255).regex(new RegExp(CUSTOM_RC_PATTERN)) }), {
  type: 'object',
  properties: { name: { type: 'string', pattern: CUSTOM_RC_PATTERN, maxLength: 255 } },
  required: ['name'],
  additionalProperties: false,
});
export const putResourceClass = postResourceClass;

export type ResourceClassBody = z.infer<typeof postResourceClass>;
