/**
 * GET /v1/allocations (AllocationsController.get_all): the query's arguments checked,
 * the allocations the caller may see filtered, sorted and paged.
 */
import { Err, IronicError } from '../../core/baremetal/errors.js';
import type { NodeRecord } from '../../core/baremetal/records.js';
import { getAllocation, queryAllocations, type StoredAllocation } from '../../store/baremetal/allocations.js';
import { jsonResponse, queryArgs, type BmRequest } from '../framework/app.js';
import { integerArg, stringArg, stringListArg, uuidArg, uuidOrNameArg } from '../framework/args.js';
import { V } from '../framework/versions.js';
import { checkOwnerPolicy, getRpcNode, listScope, paginate, validateLimit, validateSortDir } from '../lookup.js';
import { allocationView, nextLink, ownerTarget } from '../views.js';
import { checkOwnerField, gate } from './args.js';

const INVALID_SORT_KEYS = ['extra', 'candidate_nodes', 'traits'];
const SORT_KEYS = ['id', 'uuid', 'name', 'state', 'resource_class', 'created_at', 'updated_at', 'owner', 'last_error', 'node_uuid'];

const LIST_ARGS = ['node', 'resource_class', 'state', 'marker', 'limit', 'sort_key', 'sort_dir', 'fields', 'owner'];

/** AllocationsController.get_all: the query's arguments, then the collection */
export async function list(r: BmRequest) {
  gate(r);
  const q = queryArgs(r, LIST_ARGS);
  const nodeArg = uuidOrNameArg('node', q.node);
  const marker = uuidArg('marker', q.marker);
  const limitArg = integerArg('limit', q.limit);
  const fields = stringListArg('fields', q.fields);
  let owner = stringArg('owner', q.owner);
  const requestor = listScope(r, 'allocation', owner);
  checkOwnerField(r, fields);
  if (owner !== undefined && r.minor < V.ALLOCATION_OWNER) throw Err.notAcceptable();
  if (owner !== undefined && requestor !== undefined && owner !== requestor) throw Err.notAuthorized();
  if (requestor !== undefined) owner = requestor;
  return collection(r, {
    node: nodeArg,
    resourceClass: q.resource_class,
    state: q.state,
    owner,
    marker,
    limit: limitArg,
    sortKey: q.sort_key ?? 'id',
    sortDir: q.sort_dir ?? 'asc',
    fields,
  });
}

interface CollectionQuery {
  node?: string;
  resourceClass?: string;
  state?: string;
  owner?: string;
  marker?: string;
  limit?: number;
  sortKey: string;
  sortDir: string;
  fields?: string[];
}

/** _get_allocations_collection (the top-level list) */
async function collection(r: BmRequest, c: CollectionQuery) {
  const limit = validateLimit(c.limit);
  const sortDir = validateSortDir(c.sortDir);
  if (INVALID_SORT_KEYS.includes(c.sortKey)) throw Err.invalid(`The sort_key value ${c.sortKey} is an invalid field for sorting`);
  if (!SORT_KEYS.includes(c.sortKey)) throw Err.invalid(`The sort_key value "${c.sortKey}" is an invalid field for sorting`);
  let owner = c.owner;
  if (r.creds.systemScope !== 'all' && !r.allowed('baremetal:allocation:list_all')) {
    if (!r.creds.projectId) throw Err.forbidden('baremetal:allocation:list_all');
    owner = r.creds.projectId;
  }
  let markerRec: StoredAllocation | undefined;
  if (c.marker) {
    markerRec = await getAllocation(c.marker.toLowerCase());
    if (!markerRec) throw Err.allocationNotFound(c.marker);
  }
  let items: StoredAllocation[];
  if (c.node) {
    let node: NodeRecord;
    try {
      node = await getRpcNode(r, c.node);
    } catch (e) {
      if (e instanceof IronicError && e.status === 404) throw new IronicError(400, e.faultstring);
      throw e;
    }
    if (!r.allowed('baremetal:node:get', ownerTarget('node', node.owner, node.lessee))) throw Err.notFound();
    const a = node.allocation_uuid ? await getAllocation(node.allocation_uuid) : undefined;
    items = a && a.node_uuid === node.uuid ? [a] : [];
    if (c.state !== undefined) items = items.filter((x) => x.state === c.state);
  } else {
    items = await queryAllocations(c.state !== undefined ? { state: c.state } : {});
  }
  items = items.filter((a) => {
    if (c.resourceClass !== undefined && a.resource_class !== c.resourceClass) return false;
    if (owner !== undefined && a.owner !== owner) return false;
    return true;
  });
  const page = paginate(items, { sortKey: c.sortKey === 'id' ? 'id' : c.sortKey, sortDir, limit, marker: markerRec });
  for (const a of page) checkOwnerPolicy(r, 'allocation', 'baremetal:allocation:get', a.owner);
  const body: Record<string, unknown> = { allocations: page.map((a) => allocationView(r, a, c.fields)) };
  const params: Record<string, string> = { sort_key: c.sortKey, sort_dir: sortDir };
  if (c.fields) params.fields = c.fields.join(',');
  const next = nextLink(r, 'allocations', page, limit, params);
  if (next) body.next = next;
  return jsonResponse(200, body);
}
