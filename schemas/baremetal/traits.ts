/** Ironic's trait schema (api_utils.TRAITS_SCHEMA): a custom trait or an os-traits name. */
import * as z from 'zod';
import { exact } from '../json-schema.js';
import { STANDARD_TRAITS } from '../../functions/core/os-traits.js';

export const CUSTOM_TRAIT_PATTERN = '^CUSTOM_[A-Z0-9_]+$';

export const TRAIT_JSON = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  anyOf: [{ pattern: CUSTOM_TRAIT_PATTERN }, { enum: [...STANDARD_TRAITS] }],
};

export const trait = exact(z.string(), TRAIT_JSON);

/** PUT /v1/nodes/{node}/traits body (node.TRAITS_SCHEMA) */
export const nodeTraitsBody = exact(z.strictObject({ traits: z.array(z.string()).optional() }), {
  type: 'object',
  properties: { traits: { type: 'array', items: TRAIT_JSON } },
  additionalProperties: false,
});
