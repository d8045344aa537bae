/**
 * /v1/nodes, /v1/nodes/detail, /v1/nodes/{node} and /v1/nodes/{node}/validate
 * (ironic/api/controllers/v1/node.py NodesController, plus the conductor's
 * update_node / destroy_node rules). Bookkeeping only: no conductor, no hardware.
 */
import { httpLambda } from '../http/apigw.js';
import { Err, IronicError } from '../core/baremetal/errors.js';
import { ALL_STATES, S, UPDATE_ALLOWED_STATES } from '../core/baremetal/states.js';
import { INTERFACES, type NodeRecord } from '../core/baremetal/records.js';
import { validateInterfaces } from '../core/baremetal/interfaces.js';
import { raidConfigProblem } from './raid-config.js';
import { isUuidLike, newUuid } from '../core/compat/uuid.js';
import { config } from '../config.js';
import { getAllocation } from '../store/baremetal/allocations.js';
import { getNode, queryNodes } from '../store/baremetal/nodes.js';
import { createNode, destroyNode, updateNode } from '../conductor/nodes.js';
import { NODE_JSON, NODE_PATCH_FIELDS, NODE_PATCH_JSON } from '../../schemas/baremetal/nodes.js';
import { baremetalApp, buildUrl, jsonResponse, noContent, queryArgs, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { booleanArg, integerArg, stringArg, stringListArg, uuidArg, validateSchema } from './framework/args.js';
import { applyPatch, patchFields, patchValues, validatePatch, type PatchOp } from './framework/jsonpatch.js';
import { V, VERSIONED_FIELDS, disallowedFields } from './framework/versions.js';
import { listScope, nodeIdent, nodeWithPolicies, nodeWithPolicy, paginate, validateLimit, validateSortDir, validLogicalName } from './lookup.js';
import { NODE_DEFAULT_LIST_FIELDS, nextLink, nodeSanitizer, nodeView, ownerTarget } from './views.js';

const RESERVED_NAMES = ['maintenance', 'management', 'states', 'vendor_passthru', 'detail', 'validate'];
const INVALID_SORT_KEYS = [
  'properties',
  'driver_info',
  'extra',
  'instance_info',
  'driver_internal_info',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
  'traits',
  'network_data',
];
const VALID_FAULTS = ['power failure', 'clean failure', 'rescue abort failure'];
/** CONF.api.project_admin_can_manage_own_nodes (default True) */
const projectAdminCanManageOwnNodes = () => config().baremetal.projectAdminCanManageOwnNodes;

/** NodesController._check_names_acceptable */
function checkNames(r: BmRequest, names: unknown[], msg: (name: string) => string): void {
  if (r.minor < V.NODE_NAME) throw Err.notAcceptable();
  for (const name of names) {
    if (!validLogicalName(r, name) || isUuidLike(name)) throw Err.invalid(msg(String(name)));
    if (RESERVED_NAMES.includes(name as string)) {
      throw Err.invalid(`The word "${name}" is reserved and can not be used as a node name. Reserved words are: ${RESERVED_NAMES.join(', ')}.`);
    }
  }
}

const BOOL_FIELDS = ['automated_clean', 'console_enabled', 'protected', 'maintenance', 'retired', 'secure_boot'];
const UUID_FIELDS = ['chassis_uuid', 'instance_uuid', 'uuid'];

/** NODE_VALIDATE_EXTRA: booleans from strings, UUID checks */
function validateNodeDict(name: string, d: Record<string, unknown>, schema: object): void {
  validateSchema(name, d, schema as never);
  for (const f of BOOL_FIELDS) if (f in d && f !== 'secure_boot') d[f] = booleanArg(f, d[f]) ?? null;
  for (const f of UUID_FIELDS) if (f in d) d[f] = uuidArg(f, d[f]) ?? null;
}

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

// ------------------------------------------------------------------ list

const LIST_ARGS = [
  'chassis_uuid',
  'instance_uuid',
  'associated',
  'maintenance',
  'retired',
  'provision_state',
  'marker',
  'limit',
  'sort_key',
  'sort_dir',
  'driver',
  'resource_class',
  'fault',
  'conductor_group',
  'conductor',
  'owner',
  'description_contains',
  'lessee',
  'project',
  'shard',
  'sharded',
];

function notAcceptableBelow(r: BmRequest, value: unknown, minor: number): void {
  if (value !== undefined && r.minor < minor) {
    throw Err.notAcceptable(`Request not acceptable. The minimal required API version should be 1.${minor}`);
  }
}

function checkAllowedFields(r: BmRequest, fields: string[] | undefined): void {
  if (!fields) return;
  const disallowed = disallowedFields(r.minor);
  if (fields.some((f) => disallowed.includes(f))) throw Err.notAcceptable();
}

async function listNodes(r: BmRequest, detailEndpoint: boolean) {
  const q = queryArgs(r, detailEndpoint ? LIST_ARGS : [...LIST_ARGS, 'fields', 'detail']);
  const chassisUuid = uuidArg('chassis_uuid', q.chassis_uuid);
  const instanceUuid = uuidArg('instance_uuid', q.instance_uuid);
  const associated = booleanArg('associated', q.associated);
  const maintenance = booleanArg('maintenance', q.maintenance);
  const retired = booleanArg('retired', q.retired);
  const provisionState = stringArg('provision_state', q.provision_state);
  const marker = uuidArg('marker', q.marker);
  const limitArg = integerArg('limit', q.limit);
  const sortKey = q.sort_key ?? 'id';
  const sortDirArg = q.sort_dir ?? 'asc';
  const driver = q.driver;
  let fields = detailEndpoint ? undefined : stringListArg('fields', q.fields);
  const detail = detailEndpoint ? undefined : booleanArg('detail', q.detail);
  const project = listScope(r, 'node', q.project);
  if (!detailEndpoint) {
    if (fields !== undefined && r.minor < V.FIELDS) throw Err.notAcceptable();
    checkAllowedFields(r, fields);
  }
  checkAllowedFields(r, [sortKey]);
  if (provisionState !== undefined) {
    if (r.minor < V.PROVISION_STATE_FILTER) throw Err.notAcceptable();
    if (!ALL_STATES.includes(provisionState)) throw Err.invalid(`Provision state "${provisionState}" is not valid`);
  }
  notAcceptableBelow(r, driver, V.DRIVER_FILTER);
  notAcceptableBelow(r, q.resource_class, V.RESOURCE_CLASS);
  if (q.fault !== undefined) {
    notAcceptableBelow(r, q.fault, V.FAULT);
    if (!VALID_FAULTS.includes(q.fault)) {
      throw Err.invalid(`Unrecognized fault "${q.fault}" is specified, allowed faults are (${VALID_FAULTS.map((f) => `'${f}'`).join(', ')})`);
    }
  }
  notAcceptableBelow(r, q.conductor_group, V.CONDUCTOR_GROUP);
  notAcceptableBelow(r, q.conductor, V.CONDUCTORS);
  notAcceptableBelow(r, q.owner, V.NODE_OWNER);
  notAcceptableBelow(r, q.lessee, V.NODE_LESSEE);
  notAcceptableBelow(r, q.shard, 82);
  notAcceptableBelow(r, q.sharded, 82);
  if (!detailEndpoint) {
    if (detail !== undefined && r.minor < V.DETAIL_QUERY) {
      throw Err.invalid(`Invalid query parameter ?detail=${detail ? 'True' : 'False'} received.`);
    }
    if (fields !== undefined && detail) throw Err.invalid('Can not specify ?detail=True and fields in the same request.');
    if (fields === undefined && !detail) fields = NODE_DEFAULT_LIST_FIELDS;
  }
  const limit = validateLimit(limitArg);
  const sortDir = validateSortDir(sortDirArg);
  if (INVALID_SORT_KEYS.includes(sortKey)) throw Err.invalid(`The sort_key value ${sortKey} is an invalid field for sorting`);
  if (sortKey !== 'id' && !(sortKey in VERSIONED_FIELDS) && !NODE_SORT_KEYS.includes(sortKey)) {
    throw Err.invalid(`The sort_key value "${sortKey}" is an invalid field for sorting`);
  }
  let markerNode: NodeRecord | undefined;
  if (marker) {
    markerNode = await getNode(marker.toLowerCase());
    if (!markerNode) throw Err.nodeNotFound(marker);
  }
  if (chassisUuid) throw Err.notFound(`Chassis ${chassisUuid} could not be found.`);
  const rc = q.resource_class;
  let nodes = await queryNodes(rc !== undefined ? { resourceClass: rc } : {});
  nodes = nodes.filter((n) => {
    if (maintenance !== undefined && n.maintenance !== maintenance) return false;
    if (associated !== undefined && !!n.instance_uuid !== associated) return false;
    if (retired !== undefined && n.retired !== retired) return false;
    if (provisionState !== undefined && n.provision_state !== provisionState) return false;
    if (driver !== undefined && n.driver !== driver) return false;
    if (rc !== undefined && n.resource_class !== rc) return false;
    if (q.fault !== undefined && n.fault !== q.fault) return false;
    if (q.conductor_group !== undefined && n.conductor_group !== q.conductor_group.toLowerCase()) return false;
    if (q.owner !== undefined && n.owner !== q.owner) return false;
    if (q.lessee !== undefined && n.lessee !== q.lessee) return false;
    if (project !== undefined && n.owner !== project && n.lessee !== project) return false;
    if (q.description_contains !== undefined && !(n.description ?? '').includes(q.description_contains)) return false;
    if (instanceUuid !== undefined && n.instance_uuid !== instanceUuid.toLowerCase()) return false;
    if (q.conductor !== undefined && q.conductor !== config().baremetal.conductorName) return false;
    return true;
  });
  const page = paginate(nodes, { sortKey, sortDir, limit, marker: markerNode });
  const sanitizer = nodeSanitizer(r);
  const items = page.map((n) => nodeView(r, n, fields, sanitizer));
  const body: Record<string, unknown> = { nodes: items };
  const params: Record<string, string> = { sort_key: sortKey, sort_dir: sortDir };
  if (associated) params.associated = 'True';
  if (maintenance) params.maintenance = 'True';
  if (retired) params.retired = 'True';
  if (detail !== undefined) params.detail = detail ? 'True' : 'False';
  if (fields && !detailEndpoint) params.fields = fields.join(',');
  const next = nextLink(r, detailEndpoint ? 'nodes/detail' : 'nodes', page, instanceUuid ? 0 : limit, params);
  if (next) body.next = next;
  return jsonResponse(200, body);
}

const NODE_SORT_KEYS = [
  'uuid',
  'created_at',
  'updated_at',
  'provision_state',
  'power_state',
  'driver',
  'maintenance',
  'instance_uuid',
  'last_error',
  'maintenance_reason',
  'target_power_state',
  'target_provision_state',
  'provision_updated_at',
  'reservation',
  'console_enabled',
  'inspection_started_at',
  'inspection_finished_at',
];

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

const INTERFACE_FIELDS = INTERFACES.map((i) => `${i}_interface`);

/** the policy rules a patch needs (NodesController._authorize_patch_and_get_node) */
function patchRules(patch: PatchOp[]): string[] {
  const rules: string[] = [];
  let generic = false;
  for (const p of patch) {
    const path = p.path;
    if (path.startsWith('/instance_info')) rules.push('baremetal:node:update_instance_info');
    else if (path.startsWith('/extra')) rules.push('baremetal:node:update_extra');
    else if (path.startsWith('/automated_clean') && safeBool(p.value) === false) rules.push('baremetal:node:disable_cleaning');
    else if (path.startsWith('/driver_info')) rules.push('baremetal:node:update:driver_info');
    else if (path.startsWith('/properties')) rules.push('baremetal:node:update:properties');
    else if (path.startsWith('/chassis_uuid')) rules.push('baremetal:node:update:chassis_uuid');
    else if (path.startsWith('/instance_uuid')) rules.push('baremetal:node:update:instance_uuid');
    else if (path.startsWith('/lessee')) rules.push('baremetal:node:update:lessee');
    else if (path.startsWith('/owner')) rules.push('baremetal:node:update:owner');
    else if (path.startsWith('/driver')) rules.push('baremetal:node:update:driver_interfaces');
    else if (INTERFACE_FIELDS.includes(path.slice(1))) rules.push('baremetal:node:update:driver_interfaces');
    else if (path.startsWith('/network_data')) rules.push('baremetal:node:update:network_data');
    else if (path.startsWith('/conductor_group')) rules.push('baremetal:node:update:conductor_group');
    else if (path.startsWith('/name')) rules.push('baremetal:node:update:name');
    else if (path.startsWith('/retired')) rules.push('baremetal:node:update:retired');
    else if (path.startsWith('/shard')) rules.push('baremetal:node:update:shard');
    else generic = true;
  }
  if (generic || !rules.length) rules.push('baremetal:node:update');
  return rules;
}

function safeBool(v: unknown): boolean | undefined {
  try {
    return booleanArg('value', v);
  } catch {
    return undefined;
  }
}

/** node.as_dict() + chassis_uuid: what a patch is applied to */
function patchableDict(n: NodeRecord): Record<string, unknown> {
  const d: Record<string, unknown> = { ...n, chassis_uuid: null, shard: null };
  delete d.lock;
  delete d.ver;
  delete d.seq;
  d.id = n.seq;
  d.reservation = n.lock ? config().baremetal.conductorName : null;
  return d;
}

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
