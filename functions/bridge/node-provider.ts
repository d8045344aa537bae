/**
 * The provider of a bare-metal node, and the consumers of its allocations
 * (BAREMETAL_SCHEDULER=placement; docs/baremetal.md, "Bare metal through Placement"): the
 * transaction items a node write adds so that the node, its provider and its
 * allocation's consumer change in ONE transaction, built from Placement's own item
 * mappings (store/placement/); the bare-metal store puts them next to its own items
 * (links.ts plans them, store/baremetal/links.ts carries them).
 *
 *   provider  create: Put RP, Put RPU (managed by the node: MANAGED_BY), Put RPNAME
 *                     (each IF absent), refs +1
 *             change: Update RPU  SET inv, updated, last [, bm] [, used.<rc> ± 1]
 *                                 ADD gen [, invVer] [, allocs ± 1]
 *                                 IF gen = <read> AND last < <entry> [AND bm = <node>]
 *                     (bm: set when the read found it unset, else a condition)
 *                     [Update RP  SET traits, aggs], refs ± 1
 *             delete: providerDeleteItems, the state item IF allocs = <read> AND gen = <read>
 *   consumer  claim:   Put CONS (type BAREMETAL) IF absent, Put the row, usage +
 *             release: Delete CONS IF gen = <read>, Delete the row, usage -
 *   change log: Put LOG carrying the provider's usage change (a claim or release that
 *               changes nothing else), else naming the provider (readers read it again)
 *
 * The generation guard makes the plan's view of the provider the one the write applies
 * to: a claim through Placement, a write adopting the provider, another node write —
 * anything that changed what the plan relied on fails the transaction, and the caller
 * plans again from fresh reads. Every write here that changes what Placement's own
 * writes would be refused for (inventory, traits, aggregates, the mark) bumps the
 * generation, so those writes, which are generation-guarded too, cannot slip between.
 */
import type { ConsumerRecord, Resources } from '../core/placement/consumers.js';
import { type ProviderDelta, type ProviderRecord, providerRecord } from '../core/placement/model.js';
import { MANAGED_CONSUMER_TYPE, sameInventories, sameSet } from '../core/placement/managed.js';
import type { NodeProviderShape } from './shape.js';
import { Expr, newItem } from '../store/ddb/expr.js';
import type { TxItem } from '../store/ddb/tx.js';
import { allocationRowItem } from '../store/placement/allocations.js';
import { missingResourceClasses, missingTraits } from '../store/placement/catalog.js';
import { logPut, logStamp, stateGuard } from '../store/placement/changelog.js';
import { consumerToItem, getConsumer } from '../store/placement/consumers.js';
import { K } from '../store/placement/keys.js';
import { readProvider } from '../store/placement/providers.js';
import { providerDeleteItems } from '../store/placement/provider-tree.js';
import { MANAGED_BY, defItem, sharingChanges, stateItem, type ProviderRead } from '../store/placement/provider-items.js';
import { diffRefs } from '../core/placement/provider-patch.js';
import { refUpdates } from '../store/placement/refs.js';
import { createCustomResourceClass } from '../store/placement/resource-classes.js';
import { createCustomTrait } from '../store/placement/traits.js';
import { usageUpdates } from '../store/placement/usage.js';
import { consumerView, providerView, type ConsumerFact, type ProviderFact } from '../core/feed/change.js';

/** A node's provider as read, and the consumer a write releases or claims with (if asked). */
export interface NodeProviderRead {
  provider?: ProviderRead;
  consumer?: ConsumerRecord;
}

/** Strongly consistent: one Query of the provider's partition, and a GetItem of the consumer (in parallel). */
export async function readNodeProvider(node: string, consumer?: string): Promise<NodeProviderRead> {
  const [provider, record] = await Promise.all([readProvider(node, { convert: true }), consumer ? getConsumer(consumer) : undefined]);
  return { ...(provider ? { provider } : {}), ...(record ? { consumer: record } : {}) };
}

/**
 * Create the custom resource classes and traits `want` names and the provider does not
 * hold yet, if they do not exist (each a one-item transaction, as PUT /traits/{name}):
 * the provider write's refs +1 require them. A class or trait deleted between this and
 * the write fails the write, which is planned again (and ensures again).
 */
export async function ensureCustomNames(want: NodeProviderShape, cur?: ProviderRecord): Promise<void> {
  const classes = Object.keys(want.inventories).filter((rc) => !cur || !Object.hasOwn(cur.inventories, rc));
  const traits = want.traits.filter((t) => !cur?.traits.includes(t));
  const [rcs, ts] = await Promise.all([missingResourceClasses(classes), missingTraits(traits)]);
  await Promise.all([...rcs.map((rc) => createCustomResourceClass(rc)), ...ts.map((t) => createCustomTrait(t))]);
}

/** A consumer taking the node's unit (an allocation reserving it, a backfill). */
export interface NodeClaim {
  consumer: string;
  project: string;
  user: string;
  /** the Placement class of the unit */
  resourceClass: string;
  /** the consumer's record, when one exists already (as read) */
  existing?: ConsumerRecord;
}

export interface NodeProviderChange {
  /** the node (the provider's uuid, and its mark) */
  node: string;
  /** what the provider holds after the write; null: the node is deleted, and its provider with it */
  want: NodeProviderShape | null;
  /** the provider as read (undefined: there is none) */
  read?: ProviderRead;
  claim?: NodeClaim;
  /** the consumer giving the node's unit back, as read */
  release?: ConsumerRecord;
  now?: string;
}

export type NodeProviderPlan =
  | {
      items: TxItem[];
      /** positions of the items whose conditions say something: the provider's state item, its name, the claimed consumer */
      index: { state?: number; name?: number; consumer?: number };
      /** what the items change, for the change feed (the node write's own change carries them) */
      facts: { providers: ProviderFact[]; consumers: ConsumerFact[] };
    }
  /** the node's provider holds allocations of other consumers (a delete; a claim: another consumer holds the unit) */
  | { error: 'in_use' }
  /** the claiming consumer exists and holds something else than this node's unit */
  | { error: 'consumer_exists'; allocations: Record<string, Resources> };

/** The items of one node write's change to its provider and consumer (see the module comment). */
export function nodeProviderItems(ch: NodeProviderChange): NodeProviderPlan {
  const now = ch.now ?? new Date().toISOString();
  const cur = ch.read?.record;
  const stamp = logStamp(Date.parse(now), [ch.read?.last, ch.release?.last]);
  const facts: { providers: ProviderFact[]; consumers: ConsumerFact[] } = { providers: [], consumers: [] };
  const FIELDS = ['inventories', 'traits', 'aggregates'] as const;
  // the provider's `updated` is its entry's time, as a claim's (readers of a delta need not be told it)
  const at = new Date(stamp.ts).toISOString();
  const items: TxItem[] = [];
  /** what the change-log entry says: the provider's usage change (a claim or release alone), or read it again */
  let delta: ProviderDelta | undefined;
  const index: { state?: number; name?: number; consumer?: number } = {};
  const used: Resources = {};
  let allocs = 0;
  let claimed = false;

  // ---- the consumer
  if (ch.claim) {
    const c = ch.claim;
    const res = { [c.resourceClass]: 1 };
    if (c.existing) {
      // a consumer that holds exactly this unit already (Nova's instance backfilled as an allocation): it stays as it is
      const mine = c.existing.allocations[ch.node];
      const only = Object.keys(c.existing.allocations).length === 1 && mine && Object.keys(mine).length === 1 && mine[c.resourceClass] === 1;
      if (!only) return { error: 'consumer_exists', allocations: c.existing.allocations };
    } else {
      if (cur && (cur.allocationCount > 0 || Object.values(cur.usages).some((n) => n > 0))) return { error: 'in_use' };
      const rec: ConsumerRecord = {
        uuid: c.consumer,
        project: c.project,
        user: c.user,
        type: MANAGED_CONSUMER_TYPE,
        generation: 1,
        allocations: { [ch.node]: res },
        createdAt: now,
        updatedAt: now,
        last: stamp.sk,
      };
      facts.consumers.push({ uuid: c.consumer, prev: null, before: null, after: consumerView(rec) });
      index.consumer = items.length;
      items.push(newItem(consumerToItem(rec)));
      items.push(new Expr().putItem(allocationRowItem({ provider: ch.node, consumer: c.consumer, resources: res, generation: 1 }, now, 0)));
      items.push(...usageUpdates([{ uuid: c.consumer, after: rec }]));
      used[c.resourceClass] = 1;
      allocs = 1;
      claimed = true;
    }
  }
  const release = ch.release;
  // a consumer that holds more than this node's unit is no longer the allocation's alone: left as it is
  if (release && Object.keys(release.allocations).length === 1 && release.allocations[ch.node] && cur) {
    const consumer = new Expr();
    facts.consumers.push({ uuid: release.uuid, prev: release.last ?? null, before: consumerView(release), after: null });
    items.push(consumer.when(consumer.eq('gen', release.generation)).deleteItem(K.consumer(release.uuid)));
    items.push(new Expr().deleteItem(K.providerAllocation(ch.node, release.uuid)));
    items.push(...usageUpdates([{ uuid: release.uuid, before: release }]));
    for (const [rc, n] of Object.entries(release.allocations[ch.node]!)) used[rc] = (used[rc] ?? 0) - n;
    allocs -= 1;
  }

  // ---- the provider
  const want = ch.want;
  if (want === null) {
    if (cur) {
      if (cur.allocationCount + allocs > 0) return { error: 'in_use' };
      facts.providers.push({ uuid: cur.uuid, before: providerView(cur, [...FIELDS]), after: null });
      index.state = items.length + 1; // providerDeleteItems: RP, then RPU
      items.push(...providerDeleteItems(cur, (state) => state.when(state.eq('allocs', cur.allocationCount)).when(state.eq('gen', cur.generation))));
    }
  } else if (!cur) {
    const rec = providerRecord({
      uuid: want.uuid,
      name: want.name,
      generation: claimed ? 1 : 0,
      parent: undefined,
      root: want.uuid,
      inventories: want.inventories,
      invVersion: 0,
      usages: Object.fromEntries(Object.entries(used).filter(([, n]) => n > 0)),
      traits: want.traits,
      aggregates: want.aggregates,
      children: 0,
      allocationCount: Math.max(0, allocs),
      createdAt: at,
      updatedAt: at,
      seq: want.seq,
    });
    facts.providers.push({ uuid: rec.uuid, before: null, after: providerView(rec, [...FIELDS]) });
    items.push(newItem(defItem(rec)));
    index.state = items.length;
    items.push(newItem({ ...stateItem(rec, stamp.sk), [MANAGED_BY]: ch.node }));
    index.name = items.length;
    items.push(newItem({ ...K.providerName(want.name), uuid: want.uuid }));
    items.push(...sharingChanges(rec.uuid, undefined, rec));
    items.push(...refUpdates([...diffRefs('trait', [], want.traits), ...diffRefs('resource_class', [], Object.keys(want.inventories))]).items);
  } else {
    const invChanged = !sameInventories(cur.inventories, want.inventories);
    const defChanged = !sameSet(cur.traits, want.traits) || !sameSet(cur.aggregates, want.aggregates);
    const marked = ch.read?.managedBy === ch.node;
    const usedDeltas = Object.entries(used).filter(([, n]) => n !== 0);
    if (invChanged || defChanged || !marked || usedDeltas.length || allocs) {
      const state = new Expr();
      state.when(state.exists('pk')).when(state.eq('gen', cur.generation));
      stateGuard(stamp, state).set('updated', at);
      // marked as read (or as the caller knows it: a reservation planned on the forest's record): the
      // condition holds the plan to it, else the write marks the provider
      if (marked) state.when(state.eq(MANAGED_BY, ch.node));
      else state.set(MANAGED_BY, ch.node);
      // what Placement's own writes are refused for moves the generation; so does a claim (a release does not, as DELETE)
      const bump = invChanged || defChanged || !marked || claimed ? 1 : 0;
      // a claim or a release alone: the entry carries the usage change (changelog.ts), no reader reads the provider again
      if (!invChanged && !defChanged && marked) {
        delta = { used: Object.fromEntries(usedDeltas), generation: bump, allocations: allocs, updatedAt: at };
      }
      if (bump) state.add('gen', 1);
      if (invChanged || defChanged || !marked) {
        const next = { ...cur, inventories: want.inventories, traits: want.traits, aggregates: want.aggregates, generation: cur.generation + bump };
        facts.providers.push({ uuid: cur.uuid, before: providerView(cur, [...FIELDS]), after: providerView(next, [...FIELDS]) });
      }
      if (invChanged) state.set('inv', want.inventories).add('invVer', 1);
      for (const [rc, d] of usedDeltas) state.setTo(['used', rc], `${state.ifNotExists(['used', rc], 0)} + ${state.v(d)}`);
      if (allocs) state.add('allocs', allocs);
      index.state = items.length;
      items.push(state.updateItem(K.providerState(cur.uuid)));
      if (defChanged) {
        const def = new Expr().set('traits', want.traits).set('aggs', want.aggregates);
        items.push(def.when(def.exists('pk')).updateItem(K.provider(cur.uuid)));
        items.push(...sharingChanges(cur.uuid, cur, { traits: want.traits, aggregates: want.aggregates }));
      }
      items.push(
        ...refUpdates([
          ...diffRefs('trait', cur.traits, want.traits),
          ...diffRefs('resource_class', Object.keys(cur.inventories), Object.keys(want.inventories)),
        ]).items,
      );
    }
  }
  if (items.length) items.push(logPut(delta ? { deltas: new Map([[ch.node, delta]]) } : { rereads: [ch.node] }, stamp));
  return { items, index, facts };
}
