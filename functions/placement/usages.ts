/**
 * GET /resource_providers/{uuid}/usages and GET /usages (placement/handlers/usage.py).
 * A provider's usage is on its item (`used`, kept by every claim); a project's or
 * user's totals come from the usage aggregates (one Query, O(1) in the number of
 * consumers: the way Nova counts quota, seed 001).
 */
import { httpLambda } from '../http/apigw.js';
import { totalUsagesView, usagesByTypeView } from '../core/placement/usage.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/usages.js';
import { getProvider } from '../store/placement/providers.js';
import { readUsage } from '../store/placement/usage.js';
import { customOrder } from '../store/placement/catalog.js';
import { sortResourceClasses } from '../core/placement/standard.js';
import { cacheHeaders, checkAccept, jsonResponse, requireVersion, validateQuery } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { notFound } from '../core/placement/errors.js';

async function providerUsages(r: PlacementRequest) {
  checkAccept(r);
  r.authorize('placement:resource_providers:usages');
  const uuid = r.params.uuid!;
  const p = await getProvider(uuid);
  if (!p) throw notFound(`No resource provider with uuid ${uuid} found: No resource provider with uuid ${uuid} found`);
  // one entry per class with inventory (upstream's outer join of inventories and
  // allocations), in Placement's class order
  const usages: Record<string, number> = {};
  const classes = Object.keys(p.inventories);
  for (const rc of sortResourceClasses(classes, await customOrder({ classes }))) usages[rc] = p.usages[rc] ?? 0;
  // "What is the usage, now?": last-modified is the time of the answer, as upstream
  return cacheHeaders(r, jsonResponse(200, { resource_provider_generation: p.generation, usages }), undefined);
}

async function totalUsages(r: PlacementRequest) {
  requireVersion(r, '1.9');
  checkAccept(r);
  r.authorize('placement:usages', { project_id: r.query.get('project_id') });
  const byType = r.version.atLeast(1, 38);
  const q = validateQuery(r, jsonSchemaOf(byType ? S.usagesQuery1_38 : S.usagesQuery1_9)) as S.UsagesQuery;
  const usage = await readUsage(q.project_id, q.user_id);
  const order = await customOrder({ classes: [...usage.values()].flatMap((u) => Object.keys(u.resources)) });
  const body = { usages: byType ? usagesByTypeView(usage, q.consumer_type, order) : totalUsagesView(usage, order) };
  return cacheHeaders(r, jsonResponse(200, body), undefined);
}

export const routes: FamilyRoutes = {
  '/resource_providers/{uuid}/usages': { GET: providerUsages },
  '/usages': { GET: totalUsages },
};
export const handler = httpLambda(placementApp(routes), 'placement-usages');
