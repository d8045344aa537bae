/**
 * What a node write carries for what else follows the node (docs/baremetal.md, "Bare metal
 * through Placement"): with the placement scheduler the node's resource provider and its
 * allocation's Placement consumer change in the node's own transaction, so the three
 * always agree and nothing needs reconciling. The scheduler (functions/bridge/
 * scheduler.ts, chosen once per configuration) plans those items; the node writers here
 * (nodes.ts, allocations.ts) only put them next to their own and read a failure back.
 * Nothing of Placement is imported: with the database scheduler there are no links.
 */
import type { ChangeSpec, ConsumerFact, ProviderFact } from '../../core/feed/change.js';
import type { NodeRecord } from '../../core/baremetal/records.js';
import type { TxItem, TxOutcome } from '../ddb/tx.js';

/** What says who an allocation's consumer belongs to. */
export interface AllocationIdentity {
  uuid: string;
  owner?: string | null;
  /** who created the allocation (the handler stores it; absent on allocations from before) */
  consumer_project?: string | null;
  consumer_user?: string | null;
}

/** A node write, as what follows the node sees it. */
export interface NodeChange {
  /** the node as read (undefined: being created) */
  before?: NodeRecord;
  /** the node as written (undefined: being deleted) */
  after?: NodeRecord;
  /** the allocation whose consumer gives the node's unit back in this write */
  release?: string;
  /** the allocation whose consumer takes the node's unit in this write (a backfill, an import) */
  claim?: AllocationIdentity;
}

/** Why what follows the node refuses a node write: answered (409), not retried. */
export interface LinkRefusal {
  error: 'refused';
  reason: 'in_use' | 'consumer_exists' | 'name_taken';
  node: string;
  consumer?: string;
  /** the bare-metal API's text */
  detail: string;
}

/** The items one node write adds to its transaction. */
export interface LinkItems {
  items: TxItem[];
  /** what they change, for the change feed (the node write's own change carries them) */
  facts?: { providers: ProviderFact[]; consumers: ConsumerFact[] };
  /** items (by position among `items`) whose failed condition is a refusal no retry changes */
  final?: ReadonlyMap<number, LinkRefusal>;
}

/** What follows a node: the plan of a node write's links, on fresh reads (every attempt plans again). */
export interface NodeLinks {
  plan(ch: NodeChange): Promise<LinkItems | LinkRefusal>;
}

const NONE: LinkItems = { items: [] };

/** The database scheduler: nothing follows a node. */
export const NO_LINKS: NodeLinks = { plan: async () => NONE };

/** A node write's change with what its links change. */
export function withLink(change: ChangeSpec, link: LinkItems | undefined): ChangeSpec {
  const f = link?.facts;
  if (!f || (!f.providers.length && !f.consumers.length)) return change;
  return {
    ...change,
    ...(f.providers.length ? { providers: [...(change.providers ?? []), ...f.providers] } : {}),
    ...(f.consumers.length ? { consumers: [...(change.consumers ?? []), ...f.consumers] } : {}),
  };
}

/** After a transaction that carried `link` from position `base` failed: the refusal a final condition means, if one failed. */
export function linkFailure(out: TxOutcome, link: LinkItems, base: number): LinkRefusal | undefined {
  if (out.ok || !link.final) return undefined;
  for (const [i, refusal] of link.final) if (out.failed.includes(base + i)) return refusal;
  return undefined;
}
