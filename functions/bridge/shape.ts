/**
 * Bare metal through Placement (BAREMETAL_SCHEDULER=placement; docs/baremetal.md, "Bare
 * metal through Placement"), pure: how a node looks as a resource provider and an
 * allocation as a Placement consumer, and how the providers of the forest become the
 * candidates of an allocation.
 *
 * A node is reported as Nova's ironic driver reports one (nova/virt/ironic/driver.py
 * update_provider_tree): provider uuid = node uuid, provider name = node uuid, one
 * inventory record of the node's resource class normalised to a custom class, total 1,
 * min/max/step 1, ratio 1.0, reserved 1 whenever the node cannot take an allocation; the
 * node's traits are the provider's. Berth adds what its allocations filter on and
 * Nova's driver does not report: the node's owner and lessee, as one aggregate per
 * project (projectAggregate), so an allocation's candidates come from the forest alone.
 */
import { capacity, type Inventory, type ProviderRecord } from '../core/placement/model.js';
import { sameInventories, sameSet } from '../core/placement/managed.js';
import { uuid5 } from '../core/compat/uuid.js';
import type { AllocationRequest, CandidateNode } from '../core/baremetal/allocations.js';
import { isAllocatable, type NodeRecord } from '../core/baremetal/records.js';
import { S } from '../core/baremetal/states.js';

/**
 * nova.utils.normalize_rc_name: CUSTOM_ + the name with every run of characters other
 * than A-Z, a-z, 0-9 replaced by one '_', upper-cased. A node without a resource class
 * (None, or empty: no valid class) has no inventory.
 */
export function placementResourceClass(rc: string | null | undefined): string | undefined {
  if (rc === null || rc === undefined || rc === '') return undefined;
  return `CUSTOM_${rc.replace(/[^0-9A-Za-z]+/g, '_').toUpperCase()}`;
}

/**
 * Is the node's unit reserved in Placement? Whenever an allocation could not take the
 * node: not available, in maintenance, power state unknown, an instance on it (set
 * without an allocation: Nova's flow), retired (Ironic never makes a retired node
 * available). The instance of the node's own allocation does not reserve the unit: that
 * allocation's consumer uses it (capacity is 0 either way; reserving it as well would
 * count the unit twice), as Nova's driver does with `[workarounds]
 * skip_reserve_in_use_ironic_nodes`. So an allocation taking or giving back an available
 * node changes the provider's usage only, which the change log carries to every forest.
 */
export function nodeUnitReserved(
  n: Pick<NodeRecord, 'provision_state' | 'maintenance' | 'power_state' | 'instance_uuid' | 'retired'> & { allocation_uuid?: string | null },
): boolean {
  const foreignInstance = n.instance_uuid && n.instance_uuid !== n.allocation_uuid ? n.instance_uuid : null;
  return !isAllocatable({ ...n, instance_uuid: foreignInstance }) || n.retired;
}

/** the namespace of the aggregates that stand for projects (uuid5 names) */
export const PROJECT_AGGREGATE_NAMESPACE = '3b8a6d8e-7a42-5c8e-9a1f-0b5e4e7d2c11';

/** The aggregate of the nodes a project owns or leases: uuid5(namespace, 'baremetal-project:<project>'). */
export function projectAggregate(project: string): string {
  return uuid5(PROJECT_AGGREGATE_NAMESPACE, `baremetal-project:${project}`);
}

/** The inventory record of a node's class: one unit, reserved or not. */
export function nodeInventory(reserved: boolean): Inventory {
  return { total: 1, reserved: reserved ? 1 : 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0 };
}

/** What a node's provider holds (its uuid, name and creation sequence are the node's). */
export interface NodeProviderShape {
  uuid: string;
  name: string;
  seq: number;
  inventories: Record<string, Inventory>;
  traits: string[];
  aggregates: string[];
}

/** What the provider holds now, as far as the shape depends on it. */
export interface HeldState {
  inventories: Readonly<Record<string, Inventory>>;
  usages: Readonly<Record<string, number>>;
}

/**
 * The provider a node is. `held`: a class that still has allocations keeps its inventory
 * record, fully reserved (Placement never removes inventory in use; it goes with the
 * allocation) — a node whose resource class changed while it was allocated.
 */
export function nodeProviderShape(
  n: Pick<
    NodeRecord,
    | 'uuid'
    | 'seq'
    | 'resource_class'
    | 'traits'
    | 'owner'
    | 'lessee'
    | 'provision_state'
    | 'maintenance'
    | 'power_state'
    | 'instance_uuid'
    | 'allocation_uuid'
    | 'retired'
  >,
  held?: HeldState,
): NodeProviderShape {
  const inventories: Record<string, Inventory> = {};
  const rc = placementResourceClass(n.resource_class);
  if (rc) inventories[rc] = nodeInventory(nodeUnitReserved(n));
  for (const [cls, used] of Object.entries(held?.usages ?? {})) {
    const inv = held?.inventories[cls];
    if (cls !== rc && used > 0 && inv) inventories[cls] = { ...inv, reserved: inv.total };
  }
  const aggregates = [...new Set([n.owner, n.lessee].filter((p): p is string => !!p).map(projectAggregate))];
  return { uuid: n.uuid, name: n.uuid, seq: n.seq, inventories, traits: [...new Set(n.traits ?? [])].sort(), aggregates };
}

/** Two shapes say the same to Placement (inventories, traits and aggregates as sets). */
export function sameShape(a: NodeProviderShape, b: NodeProviderShape): boolean {
  return sameInventories(a.inventories, b.inventories) && sameSet(a.traits, b.traits) && sameSet(a.aggregates, b.aggregates);
}

/** The project and user of an allocation's consumer. */
export interface ConsumerIdentity {
  project: string;
  user: string;
}

/**
 * Who an allocation's consumer belongs to: the allocation's owner, else the project of
 * the caller who created it; the user who created it. Allocations created before (or
 * by callers without a project or user) fall back to Placement's incomplete-consumer
 * project and user, as consumers migrated from before 1.8 do.
 */
export function allocationConsumer(
  a: { owner?: string | null; consumer_project?: string | null; consumer_user?: string | null },
  incomplete: ConsumerIdentity,
): ConsumerIdentity {
  return { project: a.owner || a.consumer_project || incomplete.project, user: a.consumer_user || incomplete.user };
}

/** A provider of the forest as a candidate node (plus what the reservation needs: its creation sequence). */
export type ProviderCandidate = CandidateNode & { seq: number };

/**
 * The providers of `records` an allocation could take, as the candidate nodes Ironic's
 * rules (allocations.ts chooseCandidates) filter, shuffle and order: those with a free
 * unit of the allocation's class (a free unit means the node was allocatable when it
 * was last written: reserved 0 exactly then) and no allocation. The owner filter reads
 * the project aggregates (a provider in the owner's aggregate is owned or leased by
 * it); `nameNode` is the node named like the allocation, if any (1.79: tried first).
 */
export function providerCandidates(records: Iterable<ProviderRecord>, req: AllocationRequest, nameNode?: string): ProviderCandidate[] {
  const rc = placementResourceClass(req.resource_class);
  const ownerAgg = req.owner ? projectAggregate(req.owner) : undefined;
  const out: ProviderCandidate[] = [];
  if (!rc) return out;
  for (const p of records) {
    const inv = p.inventories[rc];
    if (!inv || p.allocationCount > 0 || capacity(inv) - (p.usages[rc] ?? 0) < 1) continue;
    out.push({
      uuid: p.uuid,
      seq: p.seq,
      name: p.uuid === nameNode ? (req.name ?? null) : null,
      resource_class: req.resource_class,
      provision_state: S.AVAILABLE,
      maintenance: false,
      power_state: 'reported',
      instance_uuid: null,
      owner: ownerAgg && p.aggregates.includes(ownerAgg) ? req.owner : null,
      lessee: null,
      traits: [...p.traits],
    });
  }
  return out;
}

/** Why Placement refuses a node write. */
export interface PlacementRefusalInfo {
  reason: 'in_use' | 'consumer_exists' | 'name_taken';
  node: string;
  consumer?: string;
}

/** The bare-metal API's 409 text for a node write Placement refuses. */
export function placementRefusalText(r: PlacementRefusalInfo): string {
  switch (r.reason) {
    case 'in_use':
      return `Node ${r.node} is in use in Placement: its resource provider holds allocations of other consumers.`;
    case 'consumer_exists':
      return `A Placement consumer ${r.consumer} exists and holds other resources than node ${r.node}'s; it cannot be the allocation ${r.consumer}.`;
    case 'name_taken':
      return `Node ${r.node} cannot be reported to Placement: another resource provider is named ${r.node}.`;
  }
}
