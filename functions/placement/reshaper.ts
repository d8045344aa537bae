/**
 * POST /reshaper (placement/handlers/reshaper.py): replace the inventories of several
 * providers and the allocations of several consumers atomically (one transaction,
 * functions/usecases/placement/reshape.ts; the rules in functions/core/placement/reshaper.ts).
 */
import { httpLambda } from '../http/apigw.js';
import { noContent } from '../http/types.js';
import { withDefaults } from '../core/placement/inventory.js';
import type { InventoryReplacement, ReshapeFailure } from '../core/placement/reshaper.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/reshaper.js';
import { reshape } from '../usecases/placement/reshape.js';
import { RetriesExhausted } from '../store/ddb/retry.js';
import { extractJson, forVersion, requireJsonContent, requireVersion } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { ErrorCodes, type PlacementError, badRequest, conflict } from '../core/placement/errors.js';
import { CONCURRENT_UPDATE_TEXT, consumerRequests } from './allocations.js';

function reshapeError(f: ReshapeFailure): PlacementError {
  switch (f.error) {
    case 'inventory_provider_missing':
      return badRequest(f.detail, ErrorCodes.RESOURCE_PROVIDER_NOT_FOUND);
    case 'provider_generation':
    case 'consumer_generation':
      return conflict(f.detail, ErrorCodes.CONCURRENT_UPDATE);
    case 'provider_missing':
      return badRequest(f.detail);
    case 'class_missing':
      return badRequest(`malformed reshaper data: ${f.detail}`);
    case 'inventory_in_use':
      return conflict(`update conflict: ${f.detail}`, ErrorCodes.INVENTORY_INUSE);
    case 'invalid_inventory':
      return conflict(`Unable to allocate inventory: ${f.detail}`);
    case 'managed_elsewhere':
      return conflict(f.detail);
  }
}

async function reshapeHandler(r: PlacementRequest) {
  requireVersion(r, '1.30');
  requireJsonContent(r);
  r.authorize('placement:reshaper:reshape');
  const schema = forVersion(r, [
    [1, 38, S.reshapeV1_38],
    [1, 34, S.reshapeV1_34],
    [1, 30, S.reshape],
  ]);
  const data = extractJson<S.Reshape>(r, jsonSchemaOf(schema));
  const replacements: InventoryReplacement[] = Object.entries(data.inventories).map(([rp, d]) => ({
    provider: rp.toLowerCase(),
    generation: d.resource_provider_generation,
    inventories: Object.fromEntries(Object.entries(d.inventories).map(([rc, inv]) => [rc, withDefaults(inv)])),
  }));
  let out: true | ReshapeFailure;
  try {
    out = await reshape(replacements, consumerRequests(r, data.allocations));
  } catch (e) {
    if (e instanceof RetriesExhausted) throw conflict(`update conflict: ${CONCURRENT_UPDATE_TEXT}`, ErrorCodes.CONCURRENT_UPDATE);
    throw e;
  }
  if (out !== true) throw reshapeError(out);
  return noContent();
}

export const routes: FamilyRoutes = {
  '/reshaper': { POST: reshapeHandler },
};
export const handler = httpLambda(placementApp(routes), 'placement-reshaper');
