/** GET / — the version document (no token needed). Also answers unmatched paths in AWS. */
import { httpLambda } from '../http/apigw.js';
import { cacheHeaders, checkAccept, jsonResponse } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { MAX_VERSION, MIN_VERSION } from './framework/versions.js';
// written by `npm run openapi` (scripts/openapi-document.ts), kept in sync by test/unit/openapi
import openapi from '../../schemas/openapi/placement.json' with { type: 'json' };

async function home(r: PlacementRequest) {
  const res = jsonResponse(200, {
    versions: [
      {
        id: `v${MIN_VERSION}`,
        max_version: MAX_VERSION,
        min_version: MIN_VERSION,
        status: 'CURRENT',
        links: [{ rel: 'self', href: '' }],
      },
    ],
  });
  return cacheHeaders(r, res, undefined);
}

/** GET /openapi.json — Berth's own: this API's OpenAPI 3.1 document (any token). */
async function openapiDoc(r: PlacementRequest) {
  checkAccept(r);
  return jsonResponse(200, openapi);
}

export const routes: FamilyRoutes = { '/': { GET: home }, '/openapi.json': { GET: openapiDoc } };
export const handler = httpLambda(placementApp(routes), 'placement-root');
