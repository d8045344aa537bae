/**
 * GET /v1/nodes and /v1/nodes/detail (NodesController.get_all, detail): the query's
 * arguments checked against the request's version, the nodes filtered, sorted and paged.
 */
import { Err } from '../../core/baremetal/errors.js';
import { ALL_STATES } from '../../core/baremetal/states.js';
import type { NodeRecord } from '../../core/baremetal/records.js';
import { config } from '../../config.js';
import { getNode, queryNodes } from '../../store/baremetal/nodes.js';
import { jsonResponse, queryArgs, type BmRequest } from '../framework/app.js';
import { booleanArg, integerArg, stringArg, stringListArg, uuidArg } from '../framework/args.js';
import { V, VERSIONED_FIELDS } from '../framework/versions.js';
import { listScope, paginate, validateLimit, validateSortDir } from '../lookup.js';
import { NODE_DEFAULT_LIST_FIELDS, nextLink, nodeSanitizer, nodeView } from '../views.js';
import { checkAllowedFields } from './args.js';

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

/** NodesController.get_all / detail: the filtered, sorted page of nodes the caller may see */
export async function listNodes(r: BmRequest, detailEndpoint: boolean) {
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
