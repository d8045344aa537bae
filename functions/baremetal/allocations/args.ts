/**
 * The allocation handlers' checks (functions/baremetal/allocations.ts): the version gate,
 * the owner field by version, who may create an allocation for whom, and the dict a
 * patch applies to.
 */
import { Err, IronicError } from '../../core/baremetal/errors.js';
import type { StoredAllocation } from '../../store/baremetal/allocations.js';
import type { BmRequest } from '../framework/app.js';
import { WebobError } from '../framework/errors.js';
import { V } from '../framework/versions.js';

/** AllocationsController._route: below 1.52 GET is 404, everything else 405 */
export function gate(r: BmRequest): void {
  if (r.minor < V.ALLOCATION) {
    const msg = 'The API version does not allow allocations';
    throw r.http.method === 'GET' ? new WebobError(404, msg) : new WebobError(405, msg);
  }
}

/** _check_allowed_allocation_fields */
export function checkOwnerField(r: BmRequest, fields: Iterable<string> | undefined): void {
  if (!fields) return;
  if ([...fields].includes('owner') && r.minor < V.ALLOCATION_OWNER) throw Err.notAcceptable();
}

// ------------------------------------------------------------------ create

/** the body of POST /v1/allocations */
export type Body = Record<string, unknown> & {
  uuid?: string | null;
  name?: string | null;
  node?: string | null;
  owner?: string | null;
  resource_class?: string | null;
  traits?: string[] | null;
  candidate_nodes?: string[] | null;
  extra?: Record<string, unknown> | null;
};

/** AllocationsController._authorize_create_allocation */
export function authorizeCreate(r: BmRequest, a: Body): void {
  const enforceNew = r.policy.enforceNewDefaults;
  try {
    r.authorize('baremetal:allocation:create');
    checkOwnerField(r, Object.keys(a));
    if (!enforceNew && !a.owner) r.authorize('baremetal:allocation:create_pre_rbac');
  } catch (e) {
    if (!(e instanceof IronicError && e.status === 403)) throw e;
    const project = r.creds.projectId;
    if (project && a.owner && project !== a.owner) throw e;
    if (a.owner && !enforceNew) r.authorize('baremetal:allocation:create_pre_rbac');
    r.authorize('baremetal:allocation:create_restricted');
    checkOwnerField(r, Object.keys(a));
    a.owner = project ?? null;
  }
}

// ------------------------------------------------------------------ update

/** allocation.as_dict(): what a patch is applied to */
export function patchableDict(cur: StoredAllocation): Record<string, unknown> {
  return {
    id: cur.seq,
    uuid: cur.uuid,
    name: cur.name,
    node_id: cur.node_uuid,
    state: cur.state,
    last_error: cur.last_error,
    resource_class: cur.resource_class,
    traits: cur.traits,
    candidate_nodes: cur.candidate_nodes,
    extra: cur.extra,
    conductor_affinity: cur.exec,
    owner: cur.owner,
    created_at: cur.created_at,
    updated_at: cur.updated_at,
  };
}
