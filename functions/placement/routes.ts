/**
 * Placement's URL map (placement/handler.py ROUTE_DECLARATIONS), each route tagged
 * with the resource-family Lambda that serves it. cdk/ turns this table into API
 * Gateway routes, the local runtime routes with it, and the dispatcher uses it for
 * 404/405. Methods are listed in Placement's order (that is the Allow header).
 */
import type { RouteSpec } from '../http/router.js';

export const PLACEMENT_ROUTES: readonly RouteSpec[] = [
  { path: '/', methods: ['GET'], family: 'root' },
  // Berth's own: the OpenAPI document of this API (scripts/openapi-document.ts)
  { path: '/openapi.json', methods: ['GET'], family: 'root' },
  { path: '/resource_classes', methods: ['GET', 'POST'], family: 'resource-classes' },
  { path: '/resource_classes/{name}', methods: ['GET', 'PUT', 'DELETE'], family: 'resource-classes' },
  { path: '/resource_providers', methods: ['GET', 'POST'], family: 'resource-providers' },
  { path: '/resource_providers/{uuid}', methods: ['GET', 'DELETE', 'PUT'], family: 'resource-providers' },
  { path: '/resource_providers/{uuid}/inventories', methods: ['GET', 'POST', 'PUT', 'DELETE'], family: 'inventories' },
  { path: '/resource_providers/{uuid}/inventories/{resource_class}', methods: ['GET', 'PUT', 'DELETE'], family: 'inventories' },
  { path: '/resource_providers/{uuid}/usages', methods: ['GET'], family: 'usages' },
  { path: '/resource_providers/{uuid}/aggregates', methods: ['GET', 'PUT'], family: 'aggregates' },
  { path: '/resource_providers/{uuid}/allocations', methods: ['GET'], family: 'allocations' },
  { path: '/allocations', methods: ['POST'], family: 'allocations' },
  { path: '/allocations/{consumer_uuid}', methods: ['GET', 'PUT', 'DELETE'], family: 'allocations' },
  { path: '/allocation_candidates', methods: ['GET'], family: 'allocation-candidates' },
  { path: '/traits', methods: ['GET'], family: 'traits' },
  { path: '/traits/{name}', methods: ['GET', 'PUT', 'DELETE'], family: 'traits' },
  { path: '/resource_providers/{uuid}/traits', methods: ['GET', 'PUT', 'DELETE'], family: 'traits' },
  { path: '/usages', methods: ['GET'], family: 'usages' },
  { path: '/reshaper', methods: ['POST'], family: 'reshaper' },
];

/** The family whose Lambda also answers every unmatched path (API Gateway's $default route). */
export const PLACEMENT_DEFAULT_FAMILY = 'root';

export const PLACEMENT_FAMILIES = [...new Set(PLACEMENT_ROUTES.map((r) => r.family))];
