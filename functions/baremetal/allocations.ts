/**
 * /v1/allocations, /v1/allocations/{allocation} and /v1/nodes/{node}/allocation
 * (ironic/api/controllers/v1/allocation.py; conductor create_allocation,
 * destroy_allocation, backfill_allocation).
 *
 * Parse, authorize, call the conductor (functions/conductor/allocations.ts), render.
 * POST answers 201 once the allocation is stored `allocating` and its execution
 * started; a backfill (`node`, API >= 1.58) is bound to its node before the answer.
 * The list is allocations/list.ts; the version gate and the owner checks, allocations/args.ts.
 */
import { httpLambda } from '../http/apigw.js';
import { Err, IronicError } from '../core/baremetal/errors.js';
import { ALLOCATION_STATES, allocationLimitProblem } from '../core/baremetal/allocations.js';
import { isoNow, type NodeRecord } from '../core/baremetal/records.js';
import { newUuid } from '../core/compat/uuid.js';
import { getAllocation, type StoredAllocation } from '../store/baremetal/allocations.js';
import { nextBmSeq } from '../store/baremetal/keys.js';
import { createAllocation, destroyAllocation, resolveCandidateNodes, updateAllocation } from '../conductor/allocations.js';
import { ALLOCATION_JSON, ALLOCATION_PATCH_FIELDS } from '../../schemas/baremetal/allocations.js';
import { baremetalApp, buildUrl, jsonResponse, noContent, queryArgs, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { stringArg, stringListArg, uuidArg, uuidOrNameArg, validateSchema } from './framework/args.js';
import { WebobError } from './framework/errors.js';
import { applyPatch, patchFields, patchValues, validatePatch } from './framework/jsonpatch.js';
import { V } from './framework/versions.js';
import { allocationWithPolicy, checkOwnerPolicy, getRpcNode, nodeIdent, validLogicalName } from './lookup.js';
import { allocationView, ownerTarget } from './views.js';
import { authorizeCreate, checkOwnerField, gate, patchableDict, type Body } from './allocations/args.js';
import { list } from './allocations/list.js';

// ------------------------------------------------------------------ create

async function create(r: BmRequest) {
  gate(r);
  const body = r.body();
  if (body === null) throw Err.invalid("Schema error for allocation: None is not of type 'object'");
  validateSchema('allocation', body, ALLOCATION_JSON as never);
  // what the request asks travels in its execution's state: bounded (ALLOCATION_LIMITS)
  const tooLarge = allocationLimitProblem(body as Body);
  if (tooLarge) throw Err.invalid(tooLarge);
  const a = { ...(body as Body) };
  if (a.uuid !== undefined) a.uuid = uuidArg('uuid', a.uuid) ?? null;
  authorizeCreate(r, a);
  if (a.name && !validLogicalName(r, a.name)) throw Err.invalid(`Cannot create allocation with invalid name '${a.name}'`);
  if (r.policy.enforceNewDefaults && r.creds.systemScope !== 'all') {
    const project = r.creds.projectId ?? null;
    if (a.owner) {
      if (!r.allowed('baremetal:allocation:create_restricted') && a.owner !== project) {
        throw Err.notAuthorized(
          `Cannot create allocation with an owner Project ID value ${a.owner} not matching the requestor Project ID ${project}. Policy baremetal:allocation:create_restricted is required for this capability.`,
        );
      }
    } else a.owner = project;
  }
  let node: NodeRecord | undefined;
  if (a.node) {
    if (r.minor < V.ALLOCATION_BACKFILL) throw Err.invalid('Cannot set node when creating an allocation in this API version');
    try {
      node = await getRpcNode(r, a.node);
      checkOwnerPolicy(r, 'node', 'baremetal:node:get', node.owner, node.lessee, a.node);
    } catch (e) {
      if (e instanceof IronicError && e.status === 404) throw new IronicError(400, e.faultstring);
      throw e;
    }
  }
  if (!a.resource_class) {
    if (node?.resource_class) a.resource_class = node.resource_class;
    else throw Err.invalid('The resource_class field is mandatory when not backfilling');
  }
  let candidates: string[] = [];
  if (a.candidate_nodes?.length) {
    // only nodes the caller's project owns or leases, unless it may allocate any node;
    // a caller without a project has none (never "no filter")
    const restricted = r.allowed('baremetal:allocation:create_restricted');
    if (!restricted && !r.creds.projectId) throw Err.forbidden('baremetal:allocation:create_restricted');
    candidates = await resolveCandidateNodes(a.candidate_nodes, restricted ? undefined : r.creds.projectId);
  }
  const uuid = (a.uuid ?? (node?.instance_uuid || newUuid())).toLowerCase();
  const now = isoNow();
  const rec: StoredAllocation = {
    uuid,
    name: a.name ?? null,
    resource_class: a.resource_class,
    traits: a.traits ?? [],
    candidate_nodes: candidates,
    extra: a.extra ?? {},
    owner: a.owner ?? null,
    state: ALLOCATION_STATES.ALLOCATING,
    last_error: null,
    node_uuid: null,
    created_at: now,
    updated_at: null,
    exec: null,
    exec_at: Date.now(),
    seq: nextBmSeq(),
    ver: 0,
    // whose consumer it is in Placement when it has no owner (BAREMETAL_SCHEDULER=placement)
    consumer_project: r.creds.projectId ?? null,
    consumer_user: r.creds.userId ?? null,
  };
  const saved = await createAllocation(rec, { backfillNode: node });
  r.headers.location = buildUrl(r, 'allocations', uuid);
  return jsonResponse(201, allocationView(r, saved));
}

// ------------------------------------------------------------------ show

async function show(r: BmRequest) {
  gate(r);
  const q = queryArgs(r, ['fields']);
  const ident = uuidOrNameArg('allocation_ident', r.params.allocation)!;
  const fields = stringListArg('fields', q.fields);
  const a = await allocationWithPolicy(r, 'baremetal:allocation:get', ident);
  checkOwnerField(r, fields);
  return jsonResponse(200, allocationView(r, a, fields));
}

// ------------------------------------------------------------------ update

async function update(r: BmRequest) {
  gate(r);
  queryArgs(r, []);
  const ident = stringArg('allocation_ident', r.params.allocation)!;
  const patch = validatePatch(r.body());
  if (r.minor < V.ALLOCATION_UPDATE) throw new IronicError(405, 'The API version does not allow updating allocations');
  const saved = await updateAllocation(
    () => allocationWithPolicy(r, 'baremetal:allocation:update', ident),
    (cur) => {
      checkOwnerField(r, patchFields(patch, ALLOCATION_PATCH_FIELDS));
      for (const name of patchValues(patch, '/name')) {
        if (name && !validLogicalName(r, name)) throw Err.invalid(`Cannot update allocation with invalid name '${name}'`);
      }
      const patched = applyPatch(patchableDict(cur), patch);
      for (const k of Object.keys(patched)) if (!(k in ALLOCATION_JSON.properties)) delete patched[k];
      validateSchema('patch', patched, ALLOCATION_JSON as never);
      uuidArg('uuid', patched.uuid);
      return {
        ...cur,
        name: (patched.name as string | null | undefined) ?? null,
        extra: (patched.extra as Record<string, unknown> | null | undefined) ?? {},
        updated_at: isoNow(),
      };
    },
  );
  return jsonResponse(200, allocationView(r, saved));
}

// ------------------------------------------------------------------ delete

async function remove(r: BmRequest) {
  gate(r);
  queryArgs(r, []);
  const ident = uuidOrNameArg('allocation_ident', r.params.allocation)!;
  await destroyAllocation(() => allocationWithPolicy(r, 'baremetal:allocation:delete', ident));
  return noContent();
}

// ------------------------------------------------------------------ /v1/nodes/{node}/allocation

function nodeGate(r: BmRequest): string {
  if (r.minor < V.ALLOCATION) throw new WebobError(404);
  return nodeIdent(r);
}

async function nodeAllocation(r: BmRequest) {
  const ident = nodeGate(r);
  const q = queryArgs(r, ['fields']);
  const fields = stringListArg('fields', q.fields);
  let node: NodeRecord;
  try {
    node = await getRpcNode(r, ident);
  } catch (e) {
    if (e instanceof IronicError && e.status === 404) throw new IronicError(400, e.faultstring);
    throw e;
  }
  if (!r.allowed('baremetal:node:get', ownerTarget('node', node.owner, node.lessee))) throw Err.notFound();
  const a = node.allocation_uuid ? await getAllocation(node.allocation_uuid) : undefined;
  if (!a || a.node_uuid !== node.uuid) throw new IronicError(404, `Allocation for node ${ident} was not found`);
  checkOwnerPolicy(r, 'allocation', 'baremetal:allocation:get', a.owner);
  return jsonResponse(200, allocationView(r, a, fields));
}

async function removeNodeAllocation(r: BmRequest) {
  const ident = nodeGate(r);
  queryArgs(r, []);
  await destroyAllocation(async () => {
    const node = await getRpcNode(r, ident);
    checkOwnerPolicy(r, 'node', 'baremetal:node:get', node.owner, node.lessee, ident);
    const a = node.allocation_uuid ? await getAllocation(node.allocation_uuid) : undefined;
    if (!a || a.node_uuid !== node.uuid) throw new IronicError(404, `Allocation for node ${ident} was not found`);
    checkOwnerPolicy(r, 'allocation', 'baremetal:allocation:delete', a.owner);
    return a;
  });
  return noContent();
}

export const routes: FamilyRoutes = {
  '/v1/allocations': { GET: list, POST: create },
  '/v1/allocations/{allocation}': { GET: show, PATCH: update, DELETE: remove },
  '/v1/nodes/{node}/allocation': { GET: nodeAllocation, DELETE: removeNodeAllocation },
};
export const handler = httpLambda(baremetalApp(routes), 'baremetal-allocations');
