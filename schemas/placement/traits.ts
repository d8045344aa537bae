/** Request schemas of /traits and /resource_providers/{uuid}/traits (placement/schemas/trait.py). */
import * as z from 'zod';

/** common.CUSTOM_TRAIT_PATTERN */
export const CUSTOM_TRAIT_PATTERN = '^CUSTOM_[A-Z0-9_]+$';

/** TRAIT */
export const trait = z.string().min(1).max(255);

/** CUSTOM_TRAIT: the name in PUT /traits/{name} */
export const customTrait = z.string().min(1).max(255).regex(new RegExp(CUSTOM_TRAIT_PATTERN));

/** SET_TRAITS_FOR_RP_SCHEMA */
export const setProviderTraits = z.strictObject({
  traits: z.array(trait),
  resource_provider_generation: z.int(),
});

/** LIST_TRAIT_SCHEMA (query string of GET /traits) */
export const listTraitsQuery = z.strictObject({
  name: z.string().optional(),
  associated: z.string().optional(),
});

export type SetProviderTraits = z.infer<typeof setProviderTraits>;
