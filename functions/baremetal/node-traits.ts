/**
 * /v1/nodes/{node}/traits[/{trait}] (NodeTraitsController, API >= 1.37). Traits live
 * on the node item, so a trait change is one version-checked write of the node.
 */
import { httpLambda } from '../http/apigw.js';
import { Err } from '../core/baremetal/errors.js';
import type { NodeRecord } from '../core/baremetal/records.js';
import { changeNodeTraits } from '../conductor/nodes.js';
import { TRAIT_JSON } from '../../schemas/baremetal/traits.js';
import { baremetalApp, buildUrl, jsonResponse, noContent, queryArgs, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { validateSchema } from './framework/args.js';
import { WebobError } from './framework/errors.js';
import { V } from './framework/versions.js';
import { nodeIdent, nodeWithPolicy } from './lookup.js';

const TRAITS_BODY = {
  type: 'object',
  properties: { traits: { type: 'array', items: TRAIT_JSON } },
  additionalProperties: false,
};

/**
 * Below 1.37 Ironic has no traits subcontroller: the path falls through to the nodes
 * controller, which answers GET with the node lookup and then 406, PUT with pecan's 405
 * and DELETE with a plain 404.
 */
function gate(r: BmRequest): string {
  if (r.minor < V.NODE_TRAITS) {
    if (r.http.method === 'PUT') throw new WebobError(405);
    throw Err.notFound();
  }
  return nodeIdent(r);
}

async function list(r: BmRequest) {
  if (r.minor < V.NODE_TRAITS) {
    await nodeWithPolicy(r, 'baremetal:node:get', nodeIdent(r));
    throw Err.notAcceptable();
  }
  const ident = gate(r);
  queryArgs(r, []);
  const node = await nodeWithPolicy(r, 'baremetal:node:traits:list', ident);
  return jsonResponse(200, { traits: node.traits });
}

/** write the node's new trait set (the conductor's add_node_traits / remove_node_traits) */
function writeTraits(r: BmRequest, ident: string, rule: string, change: (node: NodeRecord) => string[]): Promise<NodeRecord> {
  return changeNodeTraits(() => nodeWithPolicy(r, rule, ident), change);
}

async function put(r: BmRequest) {
  const ident = gate(r);
  queryArgs(r, []);
  const trait = r.params.trait;
  if (trait !== undefined) validateSchema('trait', trait, TRAIT_JSON as never);
  const body = r.body();
  validateSchema('body', body, TRAITS_BODY as never);
  const traits = body && typeof body === 'object' && 'traits' in body ? ((body as { traits?: string[] }).traits ?? null) : null;
  if ((trait && traits !== null) || !(trait || traits !== null)) {
    throw Err.invalid(
      'A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits specified in the request body.',
    );
  }
  if (trait) {
    if (r.http.body?.trim() && Object.keys((body as object) ?? {}).length) throw Err.invalid('No body should be provided when adding a trait');
    await writeTraits(r, ident, 'baremetal:node:traits:set', (n) => [...n.traits, trait]);
    r.headers.location = buildUrl(r, 'nodes', `${ident}/traits/${trait}`);
  } else {
    await writeTraits(r, ident, 'baremetal:node:traits:set', () => traits!);
  }
  return noContent();
}

async function remove(r: BmRequest) {
  const ident = gate(r);
  queryArgs(r, []);
  const trait = r.params.trait;
  await writeTraits(r, ident, 'baremetal:node:traits:delete', (n) => {
    if (trait === undefined) return [];
    if (!n.traits.includes(trait)) throw Err.nodeTraitNotFound(n.uuid, trait);
    return n.traits.filter((t) => t !== trait);
  });
  return noContent();
}

export const routes: FamilyRoutes = {
  '/v1/nodes/{node}/traits': { GET: list, PUT: put, DELETE: remove },
  '/v1/nodes/{node}/traits/{trait}': { PUT: put, DELETE: remove },
};
export const handler = httpLambda(baremetalApp(routes), 'baremetal-node-traits');
