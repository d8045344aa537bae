/**
 * /v1/nodes/{node}/vifs[/{vif}] (NodeVIFController, API >= 1.28): list, attach and
 * detach the VIFs of a node. Ironic binds a VIF to one of the node's ports; Berth has no
 * ports and keeps the attachments on the node (functions/conductor/nodes.ts attachVif).
 */
import { httpLambda } from '../http/apigw.js';
import { Err } from '../core/baremetal/errors.js';
import { attachVif, detachVif } from '../conductor/nodes.js';
import { VIF_JSON } from '../../schemas/baremetal/raid.js';
import { baremetalApp, jsonResponse, noContent, queryArgs, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { uuidOrNameArg, validateSchema } from './framework/args.js';
import { WebobError } from './framework/errors.js';
import { V } from './framework/versions.js';
import { nodeIdent, nodeWithPolicy } from './lookup.js';

/** below 1.28 there is no vifs subcontroller: a plain 404 */
function gate(r: BmRequest): string {
  if (r.minor < V.NODE_VIFS) throw new WebobError(404);
  return nodeIdent(r);
}

async function list(r: BmRequest) {
  const ident = gate(r);
  queryArgs(r, []);
  const node = await nodeWithPolicy(r, 'baremetal:node:vif:list', ident);
  return jsonResponse(200, { vifs: node.vifs.map((id) => ({ id })) });
}

async function attach(r: BmRequest) {
  const ident = gate(r);
  queryArgs(r, []);
  const vif = r.body();
  if (vif === null) throw Err.invalid("Schema error for vif: None is not of type 'object'");
  validateSchema('vif', vif, VIF_JSON as never);
  const info = vif as { id: string; port_uuid?: unknown; portgroup_uuid?: unknown };
  uuidOrNameArg('id', info.id);
  await attachVif(async () => {
    const node = await nodeWithPolicy(r, 'baremetal:node:vif:attach', ident);
    if (r.minor >= V.VIF_ATTACH_PORT && 'port_uuid' in info && 'portgroup_uuid' in info) {
      throw Err.invalid('Cannot specify both port_uuid and portgroup_uuid');
    }
    return node;
  }, info);
  return noContent();
}

async function detach(r: BmRequest) {
  const ident = gate(r);
  const vifId = uuidOrNameArg('vif_id', r.params.vif)!;
  queryArgs(r, []);
  await detachVif(() => nodeWithPolicy(r, 'baremetal:node:vif:detach', ident), vifId);
  return noContent();
}

export const routes: FamilyRoutes = {
  '/v1/nodes/{node}/vifs': { GET: list, POST: attach },
  '/v1/nodes/{node}/vifs/{vif}': { DELETE: detach },
};
export const handler = httpLambda(baremetalApp(routes), 'baremetal-node-vifs');
