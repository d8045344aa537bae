/**
 * The conductor's allocation workflows (ironic.conductor.manager create_allocation,
 * destroy_allocation, backfill_allocation, update_allocation). Handlers parse and
 * authorize; these functions read what they need, check Ironic's rules, write through
 * the store with a condition on what they read, and retry a lost race.
 *
 * Create stores the allocation `allocating` with the name of the execution that will
 * process it, then starts that execution (node-allocation.asl.json; the steps are in
 * ./allocate.ts). Backfill (a `node` given) is synchronous and all-or-nothing.
 */
import { Err, IronicError } from '../core/baremetal/errors.js';
import { ALLOCATION_STATES, allocationFailedText, backfillProblems } from '../core/baremetal/allocations.js';
import { S, UPDATE_ALLOWED_STATES } from '../core/baremetal/states.js';
import { isValidLogicalName, isoNow, type NodeRecord } from '../core/baremetal/records.js';
import { isUuidLike } from '../core/compat/uuid.js';
import { log } from '../observability/log.js';
import {
  backfillAllocation,
  createAllocation as storeAllocation,
  deleteAllocation,
  getAllocation,
  getAllocationByName,
  saveAllocation,
  type StoredAllocation,
} from '../store/baremetal/allocations.js';
import { getNode, getNodes, nodeUuidsByNames } from '../store/baremetal/nodes.js';
import { RETRY } from '../store/ddb/retry.js';
import { executionInput } from './allocate.js';
import { executionName, executor } from './executor.js';
import { nodeBusy, refusedByLink, refuseLocked, retrying, type Load } from './retries.js';
import { scheduler } from '../bridge/scheduler.js';

/**
 * dbapi.check_node_list: names and UUIDs -> UUIDs, within the nodes `project` owns or
 * leases when the caller is restricted to its project (undefined: any node).
 */
export async function resolveCandidateNodes(idents: string[], project: string | undefined): Promise<string[]> {
  const set = [...new Set(idents)];
  const uuids = set.filter((i) => isUuidLike(i));
  const names = set.filter((i) => !isUuidLike(i) && isValidLogicalName(i));
  const bad = set.filter((i) => !uuids.includes(i) && !names.includes(i));
  if (bad.length) throw Err.invalid(`Nodes cannot be found: ${bad.join(', ')}`);
  const byName = await nodeUuidsByNames(names);
  const nodes = await getNodes([...uuids.map((u) => u.toLowerCase()), ...byName.values()]);
  const mapping = new Map<string, string>();
  const visible = (u: string) => {
    const n = nodes.get(u);
    return !!n && (!project || n.owner === project || n.lessee === project);
  };
  for (const u of uuids) if (visible(u.toLowerCase())) mapping.set(u, u.toLowerCase());
  for (const [name, u] of byName) if (visible(u)) mapping.set(name, u);
  const missing = set.filter((i) => !mapping.has(i));
  if (missing.length) throw Err.invalid(`Nodes cannot be found: ${missing.join(', ')}`);
  return idents.map((i) => mapping.get(i)!);
}

function conflictFor(
  rec: StoredAllocation,
  out: { error: 'duplicate_uuid' | 'duplicate_name' | 'instance_associated'; node?: string },
  target?: string,
): IronicError {
  switch (out.error) {
    case 'duplicate_uuid':
      return Err.allocationAlreadyExists(rec.uuid);
    case 'duplicate_name':
      return Err.duplicateAllocationName(rec.name!);
    default:
      return Err.instanceAssociated(rec.uuid, target ?? out.node);
  }
}

/**
 * Create an allocation: bound to `backfillNode` at once (backfill), or stored
 * `allocating` and handed to a new execution.
 */
export async function createAllocation(rec: StoredAllocation, opts: { backfillNode?: NodeRecord } = {}): Promise<StoredAllocation> {
  return opts.backfillNode ? backfill(rec, opts.backfillNode) : startAllocation(rec);
}

/**
 * Store the allocation, then start its execution (orphan recovery covers a failed
 * start). A transaction that was not applied (a concurrent transaction on the name or
 * instance item) is tried again; a stored allocation is never answered with a 409
 * (the store resolves a lost answer before it reports anything).
 */
async function startAllocation(rec: StoredAllocation): Promise<StoredAllocation> {
  rec.exec = executionName('a', rec.uuid);
  await retrying(async () => {
    const out = await storeAllocation(rec);
    if ('ok' in out) return true;
    if (out.error === 'stale') return RETRY;
    throw conflictFor(rec, out);
  });
  try {
    await executor().start('allocation', rec.exec, executionInput(rec, rec.exec));
  } catch (e) {
    log.error('allocation execution did not start; orphan recovery will resume it', {
      allocation: rec.uuid,
      error: String((e as Error)?.message ?? e),
    });
  }
  return rec;
}

/** backfill_allocation, synchronously and all-or-nothing */
async function backfill(rec: StoredAllocation, first: NodeRecord): Promise<StoredAllocation> {
  // Ironic inserts the allocation before it validates the backfill: a taken uuid or
  // name is the answer first (the write below is still conditional on both)
  const [byUuid, byName] = await Promise.all([getAllocation(rec.uuid), rec.name ? getAllocationByName(rec.name) : undefined]);
  if (byUuid) throw Err.allocationAlreadyExists(rec.uuid);
  if (byName) throw Err.duplicateAllocationName(rec.name!);
  return retrying(
    async (attempt) => {
      const node = attempt === 0 ? first : await getNode(first.uuid);
      if (!node) throw new IronicError(400, `Node ${first.uuid} could not be found.`);
      refuseLocked(node);
      const problems = backfillProblems(node, rec);
      if (problems.length) {
        throw new IronicError(400, allocationFailedText(rec.uuid, `Cannot backfill an allocation for node ${node.uuid}: ${problems.join('; ')}`));
      }
      if (node.instance_uuid && node.instance_uuid !== rec.uuid) throw Err.nodeAssociated(node.uuid, node.instance_uuid);
      if (node.allocation_uuid && node.allocation_uuid !== rec.uuid) throw Err.nodeAssociated(node.uuid, node.allocation_uuid);
      const done: StoredAllocation = { ...rec, state: ALLOCATION_STATES.ACTIVE, node_uuid: node.uuid, updated_at: isoNow() };
      const out = refusedByLink(await backfillAllocation(done, node, scheduler().links));
      if ('ok' in out) return done;
      if (out.error === 'stale') return RETRY;
      throw conflictFor(rec, out, node.uuid);
    },
    () => nodeBusy(first.uuid),
  );
}

/**
 * update_allocation: `change` computes the new record from the current one (the
 * handler's patch, re-applied on every attempt); the write is conditional on the
 * version read.
 */
export async function updateAllocation(load: Load<StoredAllocation>, change: (cur: StoredAllocation) => StoredAllocation): Promise<StoredAllocation> {
  return retrying(async () => {
    const cur = await load();
    const next = change(cur);
    const out = await saveAllocation(cur, next);
    if ('ok' in out) return out.allocation;
    if (out.error === 'duplicate_name') throw Err.duplicateAllocationName(next.name!);
    return RETRY;
  });
}

/** verify_node_for_deallocation */
function verifyNodeForDeallocation(node: NodeRecord, a: StoredAllocation): void {
  if (node.maintenance) return;
  if (node.target_provision_state && !UPDATE_ALLOWED_STATES.includes(node.provision_state)) {
    throw Err.conflict(
      `Cannot remove allocation ${a.uuid} for node ${node.uuid}, because the node is in state ${node.provision_state} where updates are not allowed (and maintenance mode is off)`,
    );
  }
  if (node.provision_state === S.ACTIVE) {
    throw Err.conflict(`Cannot remove allocation ${a.uuid} for node ${node.uuid}, because the node is active (and maintenance mode is off)`);
  }
}

/** destroy_allocation: release the node and delete the allocation, atomically */
export async function destroyAllocation(load: Load<StoredAllocation>): Promise<void> {
  await retrying(async () => {
    const a = await load();
    let node: NodeRecord | undefined;
    if (a.node_uuid) {
      node = await getNode(a.node_uuid);
      if (node?.allocation_uuid !== a.uuid) node = undefined;
      if (node) {
        refuseLocked(node);
        verifyNodeForDeallocation(node, a);
      }
    }
    const out = refusedByLink(await deleteAllocation(a, node, scheduler().links));
    return 'ok' in out ? true : RETRY;
  });
}
