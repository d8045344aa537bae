/**
 * /resource_providers/{uuid}/aggregates (placement/handlers/aggregate.py), from 1.1.
 * 1.1-1.18: a bare list in and out, the generation untouched. From 1.19: an object
 * with resource_provider_generation, checked (409 placement.concurrent_update) and
 * bumped in one conditional write.
 */
import { managedProviderRefusal } from '../core/placement/managed.js';
import { httpLambda } from '../http/apigw.js';
import type { HttpResponse } from '../http/types.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/aggregates.js';
import { inFirstSeenOrder } from '../store/placement/aggregates.js';
import { replaceAggregates } from '../usecases/placement/provider-aspects.js';
import { checkAccept, extractJson, jsonResponse, requireJsonContent, requireVersion, cacheHeaders } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { ErrorCodes, conflict } from '../core/placement/errors.js';
import { providerNotFound, providerOr404 } from './provider-lookup.js';

const P = 'placement:resource_providers:aggregates';

/** handlers.aggregate._send_aggregates */
function send(r: PlacementRequest, aggregates: string[], generation: number): HttpResponse {
  const body: Record<string, unknown> = { aggregates };
  if (r.version.atLeast(1, 19)) body.resource_provider_generation = generation;
  // associations carry no timestamp (upstream punts to now as well)
  return cacheHeaders(r, jsonResponse(200, body), undefined);
}

function generationConflict() {
  return conflict("Resource provider's generation already changed. Please update the generation and try again.", ErrorCodes.CONCURRENT_UPDATE);
}

async function get(r: PlacementRequest) {
  checkAccept(r);
  requireVersion(r, '1.1');
  r.authorize(`${P}:list`);
  const p = await providerOr404(r.params.uuid!);
  return send(r, await inFirstSeenOrder(p.aggregates), p.generation);
}

async function put(r: PlacementRequest) {
  requireJsonContent(r);
  requireVersion(r, '1.1');
  r.authorize(`${P}:update`);
  const uuid = r.params.uuid!;
  const cur = await providerOr404(uuid);
  const withGeneration = r.version.atLeast(1, 19);
  let aggregates: string[];
  let generation: number | undefined;
  if (withGeneration) {
    const data = extractJson<S.PutAggregatesV1_19>(r, jsonSchemaOf(S.putAggregatesV1_19));
    if (data.resource_provider_generation !== cur.generation) throw generationConflict();
    aggregates = data.aggregates;
    generation = data.resource_provider_generation;
  } else {
    aggregates = extractJson<string[]>(r, jsonSchemaOf(S.putAggregatesV1_1));
  }
  const res = await replaceAggregates(uuid, { current: cur, generation, bumpGeneration: withGeneration }, aggregates);
  if ('error' in res) {
    if (res.error === 'not_found') throw providerNotFound(uuid);
    if (res.error === 'managed_elsewhere') throw conflict(managedProviderRefusal(uuid, res.by, 'aggregates'));
    throw generationConflict();
  }
  // upstream answers with the list it was sent
  return send(r, aggregates, res.generation);
}

export const routes: FamilyRoutes = {
  '/resource_providers/{uuid}/aggregates': { GET: get, PUT: put },
};
export const handler = httpLambda(placementApp(routes), 'placement-aggregates');
