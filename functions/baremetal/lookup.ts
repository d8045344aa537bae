/**
 * Finding nodes and allocations by UUID or name, with Ironic's owner/lessee policy
 * checks (api_utils.get_rpc_node, check_node_policy_and_retrieve,
 * check_allocation_policy_and_retrieve, check_list_policy).
 */
import { isHostnameSafe, isValidLogicalName, type NodeRecord } from '../core/baremetal/records.js';
import { isUuidLike } from '../core/compat/uuid.js';
import { getNode, getNodeByName } from '../store/baremetal/nodes.js';
import { getAllocation, getAllocationByName, type StoredAllocation } from '../store/baremetal/allocations.js';
import { WebobError } from './framework/errors.js';
import { Err, IronicError } from '../core/baremetal/errors.js';
import { uuidOrNameArg } from './framework/args.js';
import type { BmRequest } from './framework/app.js';
import { V } from './framework/versions.js';
import { ownerTarget } from './views.js';

/** api_utils.is_valid_logical_name (hostname rules before 1.10) */
export function validLogicalName(r: BmRequest, name: unknown): boolean {
  return r.minor < V.UNRESTRICTED_NODE_NAME ? isHostnameSafe(name) : isValidLogicalName(name);
}

/** api_utils.get_rpc_node */
export async function getRpcNode(r: BmRequest, ident: string): Promise<NodeRecord> {
  let node: NodeRecord | undefined;
  if (isUuidLike(ident)) node = await getNode(ident.toLowerCase());
  else if (r.minor >= V.NODE_NAME) {
    if (!validLogicalName(r, ident)) throw Err.invalidUuidOrName(ident);
    node = await getNodeByName(ident);
  }
  if (!node) throw Err.nodeNotFound(ident);
  return node;
}

/** check_owner_policy */
export function checkOwnerPolicy(
  r: BmRequest,
  kind: 'node' | 'allocation',
  rule: string,
  owner: string | null,
  lessee?: string | null,
  conceal?: string,
): void {
  if (!r.allowed(rule, ownerTarget(kind, owner, lessee))) {
    if (conceal) throw Err.nodeNotFound(conceal);
    throw Err.forbidden(rule);
  }
}

/** check_node_policy_and_retrieve: a node the caller may not see is not found */
export async function nodeWithPolicy(r: BmRequest, rule: string, ident: string): Promise<NodeRecord> {
  const node = await getRpcNode(r, ident);
  if (!r.allowed('baremetal:node:get', ownerTarget('node', node.owner, node.lessee))) throw Err.nodeNotFound(ident);
  checkOwnerPolicy(r, 'node', rule, node.owner, node.lessee);
  return node;
}

/** check_multiple_node_policies_and_retrieve */
export async function nodeWithPolicies(r: BmRequest, rules: string[], ident: string): Promise<NodeRecord> {
  const node = await nodeWithPolicy(r, rules[0]!, ident);
  for (const rule of rules.slice(1)) checkOwnerPolicy(r, 'node', rule, node.owner, node.lessee);
  return node;
}

/** api_utils.get_rpc_allocation */
export async function getRpcAllocation(ident: string): Promise<StoredAllocation> {
  let a: StoredAllocation | undefined;
  if (isUuidLike(ident)) a = await getAllocation(ident.toLowerCase());
  else if (isValidLogicalName(ident)) a = await getAllocationByName(ident);
  else throw Err.invalidUuidOrName(ident);
  if (!a) throw Err.allocationNotFound(ident);
  return a;
}

/** check_allocation_policy_and_retrieve */
export async function allocationWithPolicy(r: BmRequest, rule: string, ident: string): Promise<StoredAllocation> {
  const a = await getRpcAllocation(ident);
  if (!r.allowed('baremetal:allocation:get', ownerTarget('allocation', a.owner))) throw Err.allocationNotFound(ident);
  checkOwnerPolicy(r, 'allocation', rule, a.owner);
  return a;
}

/**
 * check_list_policy: list_all, or — for a project-scoped caller allowed to list —
 * only what its project owns (the returned project).
 */
export function listScope(r: BmRequest, kind: 'node' | 'allocation', owner?: string): string | undefined {
  if (r.allowed(`baremetal:${kind}:list_all`)) return owner;
  const project = r.creds.projectId;
  if (!project || (owner && owner !== project)) throw Err.forbidden(`baremetal:${kind}:list_all`);
  r.authorize(`baremetal:${kind}:list`);
  return project;
}

/** validate_limit / validate_sort_dir */
export const MAX_LIMIT = 1000;
export function validateLimit(limit: number | undefined): number {
  if (limit === undefined) return MAX_LIMIT;
  if (limit <= 0) throw new IronicError(400, 'Limit must be positive');
  return Math.min(MAX_LIMIT, limit);
}
export function validateSortDir(dir: string): 'asc' | 'desc' {
  if (dir !== 'asc' && dir !== 'desc') throw new IronicError(400, `Invalid sort direction: ${dir}. Acceptable values are 'asc' or 'desc'`);
  return dir;
}

/** sort by a field (id = creation order), then page after the marker */
export function paginate<T extends { uuid: string; seq: number }>(
  items: T[],
  opts: { sortKey: string; sortDir: 'asc' | 'desc'; limit: number; marker?: T },
): T[] {
  const key = (x: T): unknown => (opts.sortKey === 'id' ? x.seq : (x as unknown as Record<string, unknown>)[opts.sortKey]);
  const cmp = (a: T, b: T) => {
    const ka = key(a);
    const kb = key(b);
    let c = 0;
    if (ka !== kb) {
      if (ka === null || ka === undefined) c = -1;
      else if (kb === null || kb === undefined) c = 1;
      else c = ka < kb ? -1 : 1;
    }
    if (c === 0) c = a.seq - b.seq;
    return opts.sortDir === 'asc' ? c : -c;
  };
  const sorted = [...items].sort(cmp);
  let start = 0;
  if (opts.marker) {
    start = sorted.length;
    for (let i = 0; i < sorted.length; i++) {
      if (cmp(sorted[i]!, opts.marker) > 0) {
        start = i;
        break;
      }
    }
  }
  return sorted.slice(start, start + opts.limit);
}

const SUBRESOURCES = ['ports', 'portgroups', 'vifs', 'volume', 'traits', 'bios', 'allocation', 'history', 'inventory'];

/** NodesController._lookup: the {node} path segment must be a UUID or a name */
export function nodeIdent(r: BmRequest): string {
  const ident = r.params.node!;
  if (SUBRESOURCES.includes(ident)) throw new WebobError(404);
  try {
    uuidOrNameArg('node', ident);
  } catch {
    throw new WebobError(400, `Expected UUID or name for node: ${ident}`);
  }
  return ident;
}
