/** Request schemas of /resource_providers (placement/schemas/resource_provider.py). */
import * as z from 'zod';
import { uuidString } from '../json-schema.js';

export const createProvider = z.strictObject({
  name: z.string().max(200),
  uuid: uuidString().optional(),
});

export const updateProvider = z.strictObject({
  name: z.string().max(200),
});

const parentUuid = z.union([uuidString(), z.null()]).optional();

export const createProviderV1_14 = z.strictObject({
  name: z.string().max(200),
  uuid: uuidString().optional(),
  parent_provider_uuid: parentUuid,
});

export const updateProviderV1_14 = z.strictObject({
  name: z.string().max(200),
  parent_provider_uuid: parentUuid,
});

export const listProvidersQuery1_0 = z.strictObject({
  name: z.string().optional(),
  uuid: uuidString().optional(),
});
export const listProvidersQuery1_3 = listProvidersQuery1_0.extend({ member_of: z.string().optional() });
export const listProvidersQuery1_4 = listProvidersQuery1_3.extend({ resources: z.string().optional() });
export const listProvidersQuery1_14 = listProvidersQuery1_4.extend({ in_tree: uuidString().optional() });
export const listProvidersQuery1_18 = listProvidersQuery1_14.extend({ required: z.string().optional() });

export type CreateProvider = z.infer<typeof createProviderV1_14>;
export type UpdateProvider = z.infer<typeof updateProviderV1_14>;
