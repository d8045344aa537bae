/**
 * The bare-metal API's URL map, each route tagged with the resource-family Lambda
 * that serves it. cdk/ turns this table into API Gateway routes, the local runtime
 * routes with it, and the dispatcher uses it for 404/405. Specific paths come before
 * templated ones (/v1/nodes/detail before /v1/nodes/{node}).
 */
import type { RouteSpec } from '../http/router.js';

export const BAREMETAL_ROUTES: readonly RouteSpec[] = [
  { path: '/', methods: ['GET'], family: 'root' },
  // Berth's own: the OpenAPI document of this API (scripts/openapi-document.ts)
  { path: '/openapi.json', methods: ['GET'], family: 'root' },
  { path: '/v1', methods: ['GET'], family: 'root' },
  { path: '/v1/nodes', methods: ['GET', 'POST'], family: 'nodes' },
  { path: '/v1/nodes/detail', methods: ['GET'], family: 'nodes' },
  { path: '/v1/nodes/{node}', methods: ['GET', 'PATCH', 'DELETE'], family: 'nodes' },
  { path: '/v1/nodes/{node}/validate', methods: ['GET'], family: 'nodes' },
  { path: '/v1/nodes/{node}/traits', methods: ['GET', 'PUT', 'DELETE'], family: 'node-traits' },
  { path: '/v1/nodes/{node}/traits/{trait}', methods: ['PUT', 'DELETE'], family: 'node-traits' },
  { path: '/v1/nodes/{node}/states', methods: ['GET'], family: 'node-states' },
  { path: '/v1/nodes/{node}/states/power', methods: ['PUT'], family: 'node-states' },
  { path: '/v1/nodes/{node}/states/provision', methods: ['PUT'], family: 'node-states' },
  { path: '/v1/nodes/{node}/states/raid', methods: ['PUT'], family: 'node-states' },
  { path: '/v1/nodes/{node}/maintenance', methods: ['PUT', 'DELETE'], family: 'node-states' },
  { path: '/v1/nodes/{node}/vifs', methods: ['GET', 'POST'], family: 'node-vifs' },
  { path: '/v1/nodes/{node}/vifs/{vif}', methods: ['DELETE'], family: 'node-vifs' },
  { path: '/v1/nodes/{node}/allocation', methods: ['GET', 'DELETE'], family: 'allocations' },
  { path: '/v1/drivers', methods: ['GET'], family: 'drivers' },
  { path: '/v1/drivers/{driver}', methods: ['GET'], family: 'drivers' },
  { path: '/v1/drivers/{driver}/properties', methods: ['GET'], family: 'drivers' },
  { path: '/v1/allocations', methods: ['GET', 'POST'], family: 'allocations' },
  { path: '/v1/allocations/{allocation}', methods: ['GET', 'PATCH', 'DELETE'], family: 'allocations' },
];

/** The family whose Lambda also answers every unmatched path (API Gateway's $default route). */
export const BAREMETAL_DEFAULT_FAMILY = 'root';

export const BAREMETAL_FAMILIES = [...new Set(BAREMETAL_ROUTES.map((r) => r.family))];
