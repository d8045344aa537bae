/** GET / and GET /v1 — the version documents. Also answers unmatched paths in AWS. */
import { httpLambda } from '../http/apigw.js';
import { baremetalApp, jsonResponse, makeLink, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { MAX_VERSION, MIN_VERSION, V } from './framework/versions.js';
// written by `npm run openapi` (scripts/openapi-document.ts), kept in sync by test/unit/openapi
import openapi from '../../schemas/openapi/baremetal.json' with { type: 'json' };

function versionObject(r: BmRequest) {
  return { id: 'v1', links: [makeLink(r, 'self', 'v1', '', true)], status: 'CURRENT', min_version: MIN_VERSION, version: MAX_VERSION };
}

async function root(r: BmRequest) {
  return jsonResponse(200, {
    name: 'OpenStack Ironic API',
    description: 'Ironic is an OpenStack project which enables the provision and management of baremetal machines.',
    default_version: versionObject(r),
    versions: [versionObject(r)],
  });
}

async function v1(r: BmRequest) {
  const res = (what: string) => [makeLink(r, 'self', what, ''), makeLink(r, 'bookmark', what, '', true)];
  const doc: Record<string, unknown> = {
    id: 'v1',
    links: [
      makeLink(r, 'self', 'v1', '', true),
      { href: 'https://docs.openstack.org//ironic/latest/contributor//webapi.html', rel: 'describedby', type: 'text/html' },
    ],
    media_types: { base: 'application/json', type: 'application/vnd.openstack.ironic.v1+json' },
    nodes: res('nodes'),
    drivers: res('drivers'),
    version: versionObject(r),
  };
  if (r.minor >= V.ALLOCATION) doc.allocations = res('allocations');
  return jsonResponse(200, doc);
}

/** GET /openapi.json — Berth's own: this API's OpenAPI 3.1 document. */
async function openapiDoc() {
  return jsonResponse(200, openapi);
}

export const routes: FamilyRoutes = { '/': { GET: root }, '/openapi.json': { GET: openapiDoc }, '/v1': { GET: v1 } };
export const handler = httpLambda(baremetalApp(routes), 'baremetal-root');
