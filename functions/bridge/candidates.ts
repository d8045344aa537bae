/**
 * An allocation's candidates from the provider forest (BAREMETAL_SCHEDULER=placement,
 * once the migration completed: placement-migration.ts candidatesFromForest): the
 * providers of the allocation's class with a free unit, the requested traits, in the
 * owner's project aggregate, among the candidate nodes — from the warm in-memory forest
 * every Placement process keeps (store/placement/snapshot.ts), read-your-writes like
 * any forest-served answer. No node is read; the node named like the allocation is
 * looked up by name when the allocation has a name (nodes.ts nodeUuidByNameShared).
 */
import type { AllocationRequest } from '../core/baremetal/allocations.js';
import { placementResourceClass, providerCandidates, type ProviderCandidate } from './shape.js';
import type { ProviderRecord } from '../core/placement/model.js';
import { snapshot } from '../store/placement/snapshot.js';
import { nodeUuidByNameShared } from '../store/baremetal/nodes.js';

/**
 * The forest's providers an allocation could take, fresh (every write acknowledged before
 * the call is in it). `nameFirst: false` (a second look, which only drops nodes taken
 * meanwhile) skips the look-up of the node named like the allocation.
 */
export async function freeNodeProviders(req: AllocationRequest, opts: { nameFirst?: boolean } = {}): Promise<ProviderCandidate[]> {
  const byName = req.name && opts.nameFirst !== false;
  const [forest, named] = await Promise.all([snapshot().fresh(), byName ? nodeUuidByNameShared(req.name!) : undefined]);
  let records: ProviderRecord[];
  if (req.candidate_nodes.length) {
    records = req.candidate_nodes.map((u) => forest.get(u)).filter((p): p is ProviderRecord => !!p);
  } else {
    const rc = placementResourceClass(req.resource_class);
    const ids = rc ? forest.byResourceClass.get(rc) : undefined;
    records = [];
    for (const u of ids ?? []) {
      const p = forest.get(u);
      if (p) records.push(p);
    }
  }
  return providerCandidates(records, req, named);
}

/** The node's provider as the forest holds it now (no refresh: the reservation's guard catches a stale one). */
export function forestProvider(uuid: string): ProviderRecord | undefined {
  return snapshot().forest.get(uuid);
}
