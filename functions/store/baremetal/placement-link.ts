/**
 * Bare metal through Placement (BAREMETAL_SCHEDULER=placement; docs/baremetal.md, "Bare
 * metal through Placement"): what a node write adds to its own transaction so that the
 * node's resource provider and its allocation's Placement consumer change with it —
 * never in a transaction of their own, so the three always agree and nothing ever needs
 * reconciling. The bare-metal store's writers (nodes.ts, allocations.ts) call these;
 * with the database scheduler they add nothing.
 *
 * The items themselves come from the Placement store (store/placement/node-provider.ts);
 * this module decides what a node change means for them (functions/core/baremetal/
 * placement.ts says how a node looks as a provider), reads what the plan needs and turns
 * a failed condition into the caller's outcome.
 */
import { config } from '../../config.js';
import {
  allocationConsumer,
  nodeInventory,
  nodeProviderShape,
  placementResourceClass,
  sameShape,
  type NodeProviderShape,
} from '../../core/baremetal/placement.js';
import type { NodeRecord } from '../../core/baremetal/records.js';
import type { ProviderRecord } from '../../core/placement/model.js';
import type { TxItem, TxOutcome } from '../ddb/tx.js';
import { ensureCustomNames, nodeProviderItems, readNodeProvider, type NodeClaim } from '../placement/node-provider.js';
import type { ProviderRead } from '../placement/provider-items.js';
import type { ChangeSpec, ConsumerFact, ProviderFact } from '../../core/feed/change.js';

/** Does this deployment schedule bare metal through Placement? */
export const placementMode = (): boolean => config().baremetal.scheduler === 'placement';

/** Why Placement refuses a node write (the conductor answers it in Ironic's words). */
export type PlacementRefusal =
  | { error: 'placement'; reason: 'in_use'; node: string }
  | { error: 'placement'; reason: 'consumer_exists'; node: string; consumer: string }
  | { error: 'placement'; reason: 'name_taken'; node: string };

/** The Placement items of one node write, where their telling conditions sit, and what they change (the change feed). */
export interface LinkItems {
  items: TxItem[];
  index: { state?: number; name?: number; consumer?: number };
  facts?: { providers: ProviderFact[]; consumers: ConsumerFact[] };
}

const NONE: LinkItems = { items: [], index: {} };

/** A node write's change with its Placement side (the provider and consumer facts `link` carries). */
export function withLink(change: ChangeSpec, link: LinkItems | undefined): ChangeSpec {
  const f = link?.facts;
  if (!f || (!f.providers.length && !f.consumers.length)) return change;
  return {
    ...change,
    ...(f.providers.length ? { providers: [...(change.providers ?? []), ...f.providers] } : {}),
    ...(f.consumers.length ? { consumers: [...(change.consumers ?? []), ...f.consumers] } : {}),
  };
}

/** What says who an allocation's consumer belongs to. */
export interface AllocationIdentity {
  uuid: string;
  owner?: string | null;
  /** who created the allocation (the handler stores it; absent on allocations from before) */
  consumer_project?: string | null;
  consumer_user?: string | null;
}

/** The project and user an allocation's consumer belongs to. */
export function consumerOf(a: Omit<AllocationIdentity, 'uuid'>) {
  return allocationConsumer(a, { project: config().incompleteConsumerProjectId, user: config().incompleteConsumerUserId });
}

export interface NodeChange {
  /** the node as read (undefined: being created) */
  before?: NodeRecord;
  /** the node as written (undefined: being deleted) */
  after?: NodeRecord;
  /** the allocation whose consumer gives the node's unit back in this write */
  release?: string;
  /** the allocation whose consumer takes the node's unit in this write (a backfill) */
  claim?: AllocationIdentity;
}

/**
 * The Placement items of a node write, planned on fresh, strongly consistent reads of
 * the node's provider (and the consumer released or claimed). A write that changes
 * nothing Placement sees reads nothing and adds nothing.
 */
export async function nodeLink(ch: NodeChange): Promise<LinkItems | PlacementRefusal> {
  if (!placementMode()) return NONE;
  const node = (ch.after ?? ch.before)!;
  if (!ch.release && !ch.claim && ch.before && ch.after && sameShape(nodeProviderShape(ch.before), nodeProviderShape(ch.after))) return NONE;
  const read = await readNodeProvider(node.uuid, ch.release ?? ch.claim?.uuid);
  const cur = read.provider?.record;
  const want = ch.after ? nodeProviderShape(ch.after, cur) : null;
  if (want) await ensureCustomNames(want, cur);
  let claim: NodeClaim | undefined;
  if (ch.claim && ch.after) {
    const rc = placementResourceClass(ch.after.resource_class);
    if (rc) claim = { consumer: ch.claim.uuid, ...consumerOf(ch.claim), resourceClass: rc, existing: read.consumer };
  }
  const plan = nodeProviderItems({ node: node.uuid, want, read: read.provider, claim, release: ch.release ? read.consumer : undefined });
  return refusalOf(plan, node.uuid, ch.claim?.uuid);
}

function refusalOf(plan: ReturnType<typeof nodeProviderItems>, node: string, consumer?: string): LinkItems | PlacementRefusal {
  if (!('error' in plan)) return plan;
  if (plan.error === 'consumer_exists') return { error: 'placement', reason: 'consumer_exists', node, consumer: consumer ?? '' };
  return { error: 'placement', reason: 'in_use', node };
}

/**
 * After a transaction that carried `link` at position `base` failed: a provider name
 * another provider holds (the node's uuid as a name: nothing a retry changes) is
 * refused; anything else was a lost race, planned again from fresh reads.
 */
export function linkFailure(out: TxOutcome, link: LinkItems, base: number, node: string): PlacementRefusal | undefined {
  if (out.ok || link.index.name === undefined) return undefined;
  return out.failed.includes(base + link.index.name) ? { error: 'placement', reason: 'name_taken', node } : undefined;
}

/** What a reservation knows of the node it reserves. */
export interface ReservedNode {
  uuid: string;
  resource_class: string;
}

/**
 * The Placement items of a reservation: the allocation's consumer takes the node's unit
 * (a claim alone: the unit of an available node stays unreserved, its own allocation
 * uses it, and the change-log entry carries the usage change). Planned on `provider` —
 * the forest's record (allocate.ts: no read on the common path; a stale one fails the
 * generation guard and is read again) or a consistent read — or, for a node without a
 * provider yet (a deployment still migrating), on the node itself (`node`).
 */
export function reservationLink(
  a: AllocationIdentity,
  reserved: ReservedNode,
  provider: ProviderRead | undefined,
  node?: NodeRecord,
): LinkItems | PlacementRefusal | undefined {
  const rc = placementResourceClass(reserved.resource_class);
  if (!rc) return undefined;
  let want: NodeProviderShape;
  if (provider) {
    const p = provider.record;
    want = {
      uuid: p.uuid,
      name: p.name,
      seq: p.seq,
      // an available node taken by its own allocation: its unit is used, not reserved (nodeUnitReserved)
      inventories: { [rc]: nodeInventory(false) },
      traits: [...p.traits],
      aggregates: [...p.aggregates],
    };
  } else if (node) {
    want = nodeProviderShape({ ...node, instance_uuid: a.uuid, allocation_uuid: a.uuid });
  } else return undefined;
  const claim: NodeClaim = { consumer: a.uuid, ...consumerOf(a), resourceClass: rc };
  return refusalOf(nodeProviderItems({ node: reserved.uuid, want, read: provider, claim }), reserved.uuid, a.uuid);
}

/** Create the custom class and traits a node being created names (before its transaction). */
export async function ensureNodeNames(n: NodeRecord, cur?: ProviderRecord): Promise<void> {
  if (placementMode()) await ensureCustomNames(nodeProviderShape(n, cur), cur);
}
