/**
 * Bare metal through Placement (BAREMETAL_SCHEDULER=placement; docs/baremetal.md, "Bare
 * metal through Placement"): what a node write adds to its own transaction so that the
 * node's resource provider and its allocation's Placement consumer change with it —
 * never in a transaction of their own, so the three always agree and nothing ever needs
 * reconciling. The placement scheduler (scheduler.ts) hands these to the bare-metal
 * store's writers (store/baremetal/links.ts NodeLinks, ReservationCommit).
 *
 * The items come from node-provider.ts, built on Placement's item mappings; this module
 * decides what a node change means for them (shape.ts says how a node looks as a
 * provider), reads what the plan needs and turns a failed condition into the caller's
 * outcome.
 */
import { config } from '../config.js';
import type { NodeRecord } from '../core/baremetal/records.js';
import { BM_TX } from '../store/baremetal/keys.js';
import type { AllocationIdentity, LinkItems, LinkRefusal, NodeChange, NodeLinks } from '../store/baremetal/links.js';
import { linkFailure, withLink } from '../store/baremetal/links.js';
import { reserveAlone, reserveChange, reserveFailure, type ReservationCommit, type ReservationRequest } from '../store/baremetal/reservation.js';
import { getNode } from '../store/baremetal/nodes.js';
import { transact } from '../store/ddb/tx.js';
import type { ProviderRecord } from '../core/placement/model.js';
import { readProvider } from '../store/placement/providers.js';
import type { ProviderRead } from '../store/placement/provider-items.js';
import { ensureCustomNames, nodeProviderItems, readNodeProvider, type NodeClaim, type NodeProviderPlan } from './node-provider.js';
import {
  allocationConsumer,
  nodeInventory,
  nodeProviderShape,
  placementRefusalText,
  placementResourceClass,
  sameShape,
  type NodeProviderShape,
  type PlacementRefusalInfo,
} from './shape.js';

/** The project and user an allocation's consumer belongs to. */
export function consumerOf(a: Omit<AllocationIdentity, 'uuid'>) {
  return allocationConsumer(a, { project: config().incompleteConsumerProjectId, user: config().incompleteConsumerUserId });
}

/** A refusal in the bare-metal API's words. */
export function refusal(r: PlacementRefusalInfo): LinkRefusal {
  return { error: 'refused', ...r, detail: placementRefusalText(r) };
}

/**
 * The Placement items of a node write, planned on fresh, strongly consistent reads of
 * the node's provider (and the consumer released or claimed). A write that changes
 * nothing Placement sees reads nothing and adds nothing.
 */
export const PLACEMENT_LINKS: NodeLinks = {
  async plan(ch: NodeChange): Promise<LinkItems | LinkRefusal> {
    const node = (ch.after ?? ch.before)!;
    if (!ch.release && !ch.claim && ch.before && ch.after && sameShape(nodeProviderShape(ch.before), nodeProviderShape(ch.after)))
      return { items: [] };
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
    return linkOf(plan, node.uuid, ch.claim?.uuid);
  },
};

/**
 * The plan as the bare-metal store carries it: a provider name another provider holds
 * (the node's uuid as a name: nothing a retry changes) is final; any other failed
 * condition was a lost race, planned again from fresh reads.
 */
function linkOf(plan: NodeProviderPlan, node: string, consumer?: string): LinkItems | LinkRefusal {
  if ('error' in plan) {
    return plan.error === 'consumer_exists'
      ? refusal({ reason: 'consumer_exists', node, consumer: consumer ?? '' })
      : refusal({ reason: 'in_use', node });
  }
  const final = plan.index.name === undefined ? undefined : new Map([[plan.index.name, refusal({ reason: 'name_taken', node })]]);
  return { items: plan.items, facts: plan.facts, ...(final ? { final } : {}) };
}

/**
 * The Placement items of a reservation: the allocation's consumer takes the node's unit
 * (a claim alone: the unit of an available node stays unreserved, its own allocation
 * uses it, and the change-log entry carries the usage change). Planned on `provider` —
 * the forest's record (no read on the common path; a stale one fails the generation
 * guard and is read again) or a consistent read — or, for a node without a provider yet
 * (a deployment still migrating), on the node itself (`node`).
 */
function reservationPlan(a: ReservationRequest, uuid: string, provider: ProviderRead | undefined, node?: NodeRecord): NodeProviderPlan | undefined {
  const rc = placementResourceClass(a.resource_class);
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
  return nodeProviderItems({ node: uuid, want, read: provider, claim });
}

/** how many times a reservation reads the node's provider again after it changed under the plan */
const PROVIDER_REREADS = 3;

/**
 * The reservation and the allocation's Placement claim in ONE transaction: the node's
 * conditions as always, and its provider's generation as read — so a Placement client
 * that claimed the node's unit first, or a stale forest record, fails it. A provider
 * that changed is read again (consistently): held by a consumer now, the node is taken;
 * otherwise the reservation is planned again on what was read. `hint`: the forest's
 * record of the node's provider (saves the first read).
 */
export function reserveThroughPlacement(hint?: (uuid: string) => ProviderRecord | undefined): ReservationCommit {
  return async (a, node, own) => {
    const known = hint?.(node.uuid);
    // the forest's record of a node's provider: managed by its node, as every node's provider is
    // (node-provider.ts: the state item's condition checks it, and a provider not marked yet is read again)
    let read: ProviderRead | undefined = known ? { record: known, managedBy: node.uuid } : await readProvider(node.uuid, { convert: true });
    for (let attempt = 0; attempt < PROVIDER_REREADS; attempt++) {
      let full: NodeRecord | undefined;
      if (!read) {
        // a node without a provider yet (the deployment is still migrating): created with the reservation
        full = await getNode(node.uuid);
        if (!full) return { error: 'taken' };
        await ensureNodeNames({ ...full, instance_uuid: a.uuid, allocation_uuid: a.uuid });
      }
      const plan = reservationPlan(a, node.uuid, read, full);
      // no Placement class (no resource class: nothing an allocation asks for): the reservation alone
      if (!plan) return reserveAlone(a, node, own);
      if ('error' in plan) {
        return plan.error === 'consumer_exists' ? { error: 'consumer_exists', detail: consumerExists(a, node) } : { error: 'taken' };
      }
      const link = linkOf(plan, node.uuid, a.uuid) as LinkItems;
      const out = await transact([...own, ...link.items], { ...BM_TX, change: withLink(reserveChange(a, node), link) });
      if (out.ok) return { ok: true };
      if (out.conflict || out.failed.some((i) => i < own.length)) return reserveFailure(out, a);
      if (linkFailure(out, link, own.length)) return { error: 'taken' };
      if (plan.index.consumer !== undefined && out.failed.includes(own.length + plan.index.consumer))
        return { error: 'consumer_exists', detail: consumerExists(a, node) };
      read = await readProvider(node.uuid, { convert: true });
    }
    return { error: 'busy' };
  };
}

function consumerExists(a: ReservationRequest, node: { uuid: string }): string {
  return placementRefusalText({ reason: 'consumer_exists', node: node.uuid, consumer: a.uuid });
}

/** Create the custom class and traits a node names (before its transaction). */
export async function ensureNodeNames(n: NodeRecord, cur?: ProviderRecord): Promise<void> {
  await ensureCustomNames(nodeProviderShape(n, cur), cur);
}
