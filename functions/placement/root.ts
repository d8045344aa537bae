/** GET / — the version document (no token needed). Also answers unmatched paths in AWS. */
import { httpLambda } from '../http/apigw.js';
import { cacheHeaders, jsonResponse, placementApp, type FamilyRoutes, type PlacementRequest } from './framework/app.js';
import { MAX_VERSION, MIN_VERSION } from './framework/errors.js';

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

export const routes: FamilyRoutes = { '/': { GET: home } };
export const handler = httpLambda(placementApp(routes), 'placement-root');
