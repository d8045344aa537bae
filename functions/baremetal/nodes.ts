/**
 * /v1/nodes, /v1/nodes/detail, /v1/nodes/{node} and /v1/nodes/{node}/validate
 * (ironic/api/controllers/v1/node.py NodesController, plus the conductor's
 * update_node / destroy_node rules). Bookkeeping only: no conductor, no hardware.
 * The lists are nodes/list.ts; the checks of names, fields and patches, nodes/args.ts.
 */
import { httpLambda } from '../http/apigw.js';
import { Err, IronicError } from '../core/baremetal/errors.js';
import { S, UPDATE_ALLOWED_STATES } from '../core/baremetal/states.js';
import { validateInterfaces } from '../core/baremetal/interfaces.js';
import { raidConfigProblem } from './raid-config.js';
import { isUuidLike, newUuid } from '../core/compat/uuid.js';
import { config } from '../config.js';
import { getAllocation } from '../store/baremetal/allocations.js';
import { createNode, destroyNode, updateNode } from '../conductor/nodes.js';
import { NODE_JSON, NODE_PATCH_FIELDS, NODE_PATCH_JSON } from '../../schemas/baremetal/nodes.js';
import { baremetalApp, buildUrl, jsonResponse, noContent, queryArgs, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { booleanArg, stringListArg, uuidArg } from './framework/args.js';
import { applyPatch, patchFields, patchValues, validatePatch } from './framework/jsonpatch.js';
import { V, disallowedFields } from './framework/versions.js';
import { nodeIdent, nodeWithPolicies, nodeWithPolicy } from './lookup.js';
import { nodeView, ownerTarget } from './views.js';
import { checkAllowedFields, checkNames, patchableDict, patchRules, validateNodeDict } from './nodes/args.js';
import { listNodes } from './nodes/list.js';

/** CONF.api.project_admin_can_manage_own_nodes (default True) */
const projectAdminCanManageOwnNodes = () => config().baremetal.projectAdminCanManageOwnNodes;

// ------------------------------------------------------------------ create

async function create(r: BmRequest) {
  const body = r.body();
  // Ironic's schema validator skips None and its handler then fails (a 500): refuse it
  if (body === null) throw Err.invalid("Schema error for node: None is not of type 'object'");
  validateNodeDict('node', body as Record<string, unknown>, NODE_JSON);
  const node = { ...(body as Record<string, unknown>) };
  let owned = false;
  if (projectAdminCanManageOwnNodes()) owned = r.allowed('baremetal:node:create:self_owned_node');
  if (!owned) r.authorize('baremetal:node:create');
  // reject_fields_in_newer_versions
  for (const f of disallowedFields(r.minor)) {
    if (f === 'name' && (node.name === null || node.name === undefined)) continue;
    const empty = f === 'conductor_group' ? '' : null;
    if (f in node && node[f] !== empty) throw Err.notAcceptable();
  }
  const uuid = node.uuid ? String(node.uuid).toLowerCase() : newUuid();
  if (node.name !== null && node.name !== undefined) checkNames(r, [node.name], (n) => `Cannot create node with invalid name '${n}'`);
  if (r.creds.systemScope !== 'all' && owned) {
    const project = r.creds.projectId ?? null;
    if (node.owner && node.owner !== project) {
      throw Err.invalid('Cannot create a node as a project scoped admin with an owner other than your own project.');
    }
    node.owner = project;
  }
  if (node.chassis_uuid) throw Err.invalid(`Chassis ${node.chassis_uuid} could not be found.`);
  const created = await createNode({ uuid, fields: node, initialState: r.minor < V.ENROLL_STATE ? S.AVAILABLE : S.ENROLL });
  r.headers.location = buildUrl(r, 'nodes', uuid);
  return jsonResponse(201, nodeView(r, created));
}

// ------------------------------------------------------------------ show

async function show(r: BmRequest) {
  const ident = nodeIdent(r);
  const q = queryArgs(r, ['fields']);
  const fields = stringListArg('fields', q.fields);
  const node = await nodeWithPolicy(r, 'baremetal:node:get', ident);
  if (fields !== undefined && r.minor < V.FIELDS) throw Err.notAcceptable();
  checkAllowedFields(r, fields);
  return jsonResponse(200, nodeView(r, node, fields));
}

// ------------------------------------------------------------------ update

async function update(r: BmRequest) {
  const ident = nodeIdent(r);
  const q = queryArgs(r, ['reset_interfaces']);
  const resetInterfaces = booleanArg('reset_interfaces', q.reset_interfaces);
  if (resetInterfaces !== undefined && r.minor < V.RESET_INTERFACES) throw Err.notAcceptable();
  const patch = validatePatch(r.body());
  // _validate_patch
  patchFields(patch, NODE_PATCH_FIELDS);
  for (const f of disallowedFields(r.minor)) if (patchValues(patch, `/${f}`).length) throw Err.notAcceptable();
  if (patchValues(patch, '/traits').length) {
    throw Err.invalid('Cannot update node traits via node patch. Node traits should be updated via the node traits API.');
  }
  const drivers = patchValues(patch, '/driver');
  if (resetInterfaces && !drivers.length) throw Err.invalid("The reset_interfaces parameter can only be used when changing the node's driver.");
  const desc = patchValues(patch, '/description');
  if (desc.length && typeof desc[0] === 'string' && [...desc[0]].length > 4096) {
    throw Err.invalid('Cannot update node with description exceeding 4096 characters');
  }
  const rules = patchRules(patch);
  const saved = await updateNode(
    () => nodeWithPolicies(r, rules, ident),
    async (cur) => {
      const removeOnly = patch.length === 1 && patch[0]!.op === 'remove' && patch[0]!.path === '/instance_uuid';
      if (cur.maintenance && removeOnly) {
        // always allowed in maintenance
      } else if (cur.target_provision_state && !UPDATE_ALLOWED_STATES.includes(cur.provision_state)) {
        throw Err.conflict(`Node ${ident} can not be updated while a state transition is in progress.`);
      } else if (cur.provision_state === S.INSPECTING && r.minor >= V.INSPECT_WAIT) {
        throw Err.conflict(`Cannot update node "${cur.uuid}" while it is in state "${S.INSPECTING}".`);
      } else if (patchValues(patch, '/owner').length) {
        if (cur.provision_state === S.ACTIVE && !r.allowed('baremetal:node:update_owner_provisioned', ownerTarget('node', cur.owner, cur.lessee))) {
          throw Err.conflict(`Cannot update owner of node "${cur.uuid}" while it is in state "${S.ACTIVE}".`);
        }
        if (cur.allocation_uuid) {
          const alloc = await getAllocation(cur.allocation_uuid);
          if (alloc?.owner) {
            throw Err.conflict(`Cannot update owner of node "${cur.uuid}" while it is allocated to an allocation with an  owner.`);
          }
        }
      }
      const names = patchValues(patch, '/name');
      if (names.length) checkNames(r, names, (n) => `Node ${ident}: Cannot change name to invalid name '${n}'`);
      const patched = applyPatch(patchableDict(cur), patch);
      for (const k of Object.keys(patched)) if (!(k in (NODE_PATCH_JSON.properties as object))) delete patched[k];
      validateNodeDict('patch', patched, NODE_PATCH_JSON);
      if (patched.chassis_uuid) throw Err.invalid(`Chassis ${patched.chassis_uuid} could not be found.`);
      return patched;
    },
    { resetInterfaces: resetInterfaces === true, patchable: Object.keys(NODE_PATCH_JSON.properties) },
  );
  return jsonResponse(200, nodeView(r, saved));
}

// ------------------------------------------------------------------ delete

async function remove(r: BmRequest) {
  const ident = nodeIdent(r);
  queryArgs(r, []);
  await destroyNode(async () => {
    try {
      return await nodeWithPolicy(r, 'baremetal:node:delete', ident);
    } catch (e) {
      if (!(e instanceof IronicError && e.status === 403) || !projectAdminCanManageOwnNodes()) throw e;
      return nodeWithPolicy(r, 'baremetal:node:delete:self_owned_node', ident);
    }
  });
  return noContent();
}

// ------------------------------------------------------------------ validate

/** NodesController.validate: each driver interface's verdict on the node (a read) */
async function validate(r: BmRequest) {
  const ident = nodeIdent(r);
  const q = queryArgs(r, ['node_uuid']);
  const nodeUuid = uuidArg('node_uuid', q.node_uuid);
  if (r.minor < V.NODE_NAME && !isUuidLike(ident)) throw Err.notAcceptable();
  const node = await nodeWithPolicy(r, 'baremetal:node:validate', nodeUuid ?? ident);
  return jsonResponse(200, validateInterfaces(node, raidConfigProblem));
}

export const routes: FamilyRoutes = {
  '/v1/nodes': { GET: (r) => listNodes(r, false), POST: create },
  '/v1/nodes/detail': { GET: (r) => listNodes(r, true) },
  '/v1/nodes/{node}': { GET: show, PATCH: update, DELETE: remove },
  '/v1/nodes/{node}/validate': { GET: validate },
};
export const handler = httpLambda(baremetalApp(routes), 'baremetal-nodes');
