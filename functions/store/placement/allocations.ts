/**
 * Allocations' items: what a claim reads (readClaimState), the ONE TransactWriteItems a
 * plan becomes (planItems, writePlan), the reads of allocations, and the legacy import.
 * The claim itself — read, plan in functions/core/placement/claim.ts, write, again from
 * fresh reads when the transaction was cancelled — is a use case
 * (functions/usecases/placement/allocations.ts). The items and their conditions are
 * written down once, in docs/consistency.md, "Which condition guards which write".
 */
import { queryPartition } from '../ddb/query.js';
import type { ProviderRecord, ProviderDelta } from '../../core/placement/model.js';
import type { AllocationMap } from '../../core/placement/consumers.js';
import {
  providersToRead,
  type ClaimPlan,
  type ConsumerRequest,
  type ConsumerState,
  type ProviderChange,
  type RowChange,
} from '../../core/placement/claim.js';
import { logPut, logStamp, stateGuard, type LogStamp } from './changelog.js';
import { K } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { keyId } from '../ddb/batch.js';
import { batchGet } from '../ddb/reads.js';
import { getProviderStates } from './providers.js';
import { layoutMigrating } from '../layout/state.js';
import { isV1Provider } from '../layout/v1.js';
import { fromItems, stateFromItem, type StateRead } from './provider-items.js';
import { consumerFromItem, consumerToItem, getConsumer, legacyAllocations, legacyRowsMayExist, beginLegacyImport } from './consumers.js';
import { usageUpdates } from './usage.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { consumerView, type ChangeOp, type ChangeSpec, type ProviderFact } from '../../core/feed/change.js';
import { Expr, newItem } from '../ddb/expr.js';
import { RETRY } from '../ddb/retry.js';
import { writeSeq } from '../../core/placement/order.js';
import { tally } from '../../observability/counters.js';

export interface ClaimState {
  states: Map<string, ConsumerState>;
  providers: Map<string, StateRead>;
}

/**
 * Everything a plan needs, strongly consistent: the consumers and the providers named
 * by the request in one BatchGet, then (rarely) the providers of consumers being
 * emptied and legacy rows of consumers without an item.
 */
export async function readClaimState(requests: ConsumerRequest[], extraProviders: string[] = []): Promise<ClaimState> {
  const consumers = requests.map((r) => r.uuid);
  const named = new Set<string>(extraProviders);
  for (const r of requests) for (const rp of Object.keys(r.allocations)) named.add(rp);
  const items = await batchGet([...consumers.map((c) => K.consumer(c)), ...[...named].map((rp) => K.providerState(rp))]);
  const states = new Map<string, ConsumerState>();
  const missing: string[] = [];
  for (const c of consumers) {
    const it = items.get(keyId(K.consumer(c)));
    if (it) states.set(c, { record: consumerFromItem(it) });
    else missing.push(c);
  }
  if (missing.length && (await legacyRowsMayExist())) {
    await Promise.all(
      missing.map(async (c) => {
        const legacy = await legacyAllocations(c);
        if (legacy) states.set(c, { legacy });
      }),
    );
  }
  const providers = new Map<string, StateRead>();
  for (const rp of named) {
    const it = items.get(keyId(K.providerState(rp)));
    if (it) providers.set(rp, stateFromItem(it));
  }
  // while a table migrates from layout 1 a provider without state item may hold it inline:
  // getProviderStates converts it before this claim writes it (store/layout/v1.ts)
  const absent = [...named].filter((rp) => !providers.has(rp));
  if (absent.length && (await layoutMigrating())) for (const [rp, p] of await getProviderStates(absent, { convert: true })) providers.set(rp, p);
  const more = providersToRead(requests, states).filter((rp) => !named.has(rp));
  if (more.length) for (const [rp, p] of await getProviderStates(more, { convert: true })) providers.set(rp, p);
  return { states, providers };
}

/**
 * A claim's write of one provider's state item. Its guard is the capacity, not the
 * generation: invVer unchanged and used <= capacity - delta, so claims on one provider
 * commute and only collide on in-flight overlap (a generation guard makes every
 * concurrent claim invalidate the others: docs/consistency.md has the measurement).
 * A reshape that replaces the inventory guards on generation and invVer.
 */
function providerUpdate(c: ProviderChange, now: string, stamp: LogStamp, inventory?: { after: Record<string, unknown> }): TxItem | undefined {
  const used = Object.entries(c.usedDelta);
  if (!used.length && !c.generationDelta && !c.allocsDelta && !inventory) return undefined;
  const e = new Expr();
  stateGuard(stamp, e.when(e.exists('pk')).set('updated', now));
  for (const [rc, d] of used) e.setTo(['used', rc], `${e.ifNotExists(['used', rc], 0)} + ${e.v(d)}`);
  if (c.generationDelta) e.add('gen', c.generationDelta);
  if (c.allocsDelta) e.add('allocs', c.allocsDelta);
  if (inventory) {
    e.set('inv', inventory.after).add('invVer', 1);
    e.when(e.eq('gen', c.read!.generation)).when(e.eq('invVer', c.read!.invVersion));
  } else if (c.read && Object.keys(c.limits).length) {
    e.when(e.eq('invVer', c.read.invVersion));
    for (const [rc, lim] of Object.entries(c.limits)) e.when(e.atMost(['used', rc], lim));
  }
  return e.updateItem(K.providerState(c.uuid));
}

export interface PlanWriteOptions {
  now: string;
  /** provider -> its new inventory (reshaper) */
  inventories?: Map<string, Record<string, unknown>>;
  /** extra transaction actions (refs of custom classes) */
  extra?: TxItem[];
  /** what the change is (default allocations.set) */
  op?: ChangeOp;
  /** the providers whose inventory changes too (a reshape), as facts */
  providerFacts?: ProviderFact[];
}

/**
 * What a plan changes, for the change feed: every consumer before (as read, guarded by
 * its generation) and after, and the id of the change that made `before` (`last`).
 */
export function planChange(plan: ClaimPlan, opts: Pick<PlanWriteOptions, 'op' | 'providerFacts'>): ChangeSpec {
  return {
    op: opts.op ?? 'allocations.set',
    consumers: plan.consumers.map((c) => ({
      uuid: c.uuid,
      prev: c.before?.last ?? null,
      before: c.before ? consumerView(c.before) : null,
      after: c.after ? consumerView(c.after) : null,
    })),
    ...(opts.providerFacts?.length ? { providers: opts.providerFacts } : {}),
  };
}

/**
 * The transaction that writes a plan. Its change-log entry carries each provider's usage
 * delta (readers add it up); a provider whose inventory changes too (reshape) is named
 * for readers to read again.
 */
export function planItems(plan: ClaimPlan, opts: PlanWriteOptions): TxItem[] {
  const items: TxItem[] = [];
  // after the last write of every provider and consumer it changes: their changes' ids follow their commit order
  const stamp = logStamp(undefined, [
    ...[...plan.providers.values()].map((c) => (c.read as StateRead | undefined)?.last),
    ...plan.consumers.map((c) => c.before?.last),
  ]);
  const deltas = new Map<string, ProviderDelta>();
  const rereads: string[] = [];
  // the providers' updatedAt is the entry's time (readers need not be told it)
  const updated = new Date(stamp.ts).toISOString();
  for (const c of plan.providers.values()) {
    const inv = opts.inventories?.get(c.uuid);
    const it = providerUpdate(c, updated, stamp, inv ? { after: inv } : undefined);
    if (!it) continue;
    items.push(it);
    if (inv) rereads.push(c.uuid);
    else deltas.set(c.uuid, { used: c.usedDelta, generation: c.generationDelta, allocations: c.allocsDelta, updatedAt: updated });
  }
  const position = new Map(plan.consumers.map((c, i) => [c.uuid, i]));
  for (const r of plan.rows) {
    if (r.resources) {
      items.push(new Expr().putItem(allocationRowItem(r, opts.now, position.get(r.consumer) ?? 0)));
    } else {
      items.push(new Expr().deleteItem(K.providerAllocation(r.provider, r.consumer)));
    }
  }
  for (const c of plan.consumers) {
    // the consumer as read: its generation, or (no record) still none
    const e = new Expr();
    e.when(c.before ? e.eq('gen', c.before.generation) : e.absent('pk'));
    if (c.after) items.push(e.putItem(consumerToItem({ ...c.after, last: stamp.sk })));
    else if (c.before) items.push(e.deleteItem(K.consumer(c.uuid)));
    else items.push(e.checkItem(K.consumer(c.uuid)));
  }
  items.push(...usageUpdates(plan.consumers));
  items.push(...(opts.extra ?? []));
  items.push(logPut({ rereads, deltas }, stamp));
  return items;
}

/** The allocation row of a consumer on a provider (`position`: the consumer's place in its request, for wseq). */
export function allocationRowItem(r: RowChange, now: string, position: number): Record<string, unknown> {
  return {
    ...K.providerAllocation(r.provider, r.consumer),
    kind: 'ALLOC',
    provider: r.provider,
    consumer: r.consumer,
    resources: r.resources,
    cgen: r.generation,
    created: now,
    wseq: writeSeq(now, position),
  };
}

/**
 * Write a plan; RETRY when the transaction was cancelled (conflict or a condition): the
 * caller reads again and plans again.
 */
export async function writePlan(plan: ClaimPlan, opts: PlanWriteOptions): Promise<true | typeof RETRY> {
  tally('claim.attempts');
  const out = await transact(planItems(plan, opts), { change: planChange(plan, opts) });
  if (out.ok) return true;
  if (out.conflict) tally('claim.conflicts');
  else tally('claim.conditionFailures');
  return RETRY;
}

// ------------------------------------------------------------------ reads

export interface AllocationRow {
  provider: string;
  consumer: string;
  resources: Record<string, number>;
  /** the consumer's generation */
  generation: number;
  createdAt: string;
  /** when the consumer's allocations were written (order.ts writeSeq; older rows: their creation time) */
  writeSeq: number;
}

/**
 * A provider and every allocation against it (rows of consumers that have a record,
 * as upstream's join), from ONE strongly consistent Query of the provider's partition
 * (the provider item and its allocation rows share it). Undefined if no provider.
 */
export async function providerWithAllocations(rp: string): Promise<{ provider: ProviderRecord; rows: AllocationRow[] } | undefined> {
  if (!keyFits(K.provider(rp))) return undefined;
  let provider: ProviderRecord | undefined;
  const rows: AllocationRow[] = [];
  let def: Record<string, unknown> | undefined;
  let state: Record<string, unknown> | undefined;
  let items = await queryPartition({ pk: K.provider(rp).pk, consistent: true });
  // a layout-2 definition without its state item was read while it was being converted: read again
  const torn = () => {
    const d = items.find((it) => it.sk === K.provider(rp).sk);
    return d && !isV1Provider(d) && !items.some((it) => it.sk === K.providerState(rp).sk);
  };
  for (let n = 0; torn() && n < 5; n++) items = await queryPartition({ pk: K.provider(rp).pk, consistent: true });
  for (const it of items) {
    if (it.sk === K.provider(rp).sk) def = it;
    else if (it.sk === K.providerState(rp).sk) state = it;
    else if (String(it.sk).startsWith(K.providerAllocationPrefix) && !it.legacy) {
      rows.push({
        provider: rp,
        consumer: it.consumer,
        resources: it.resources,
        generation: Number(it.cgen),
        createdAt: it.created,
        writeSeq: it.wseq !== undefined ? Number(it.wseq) : writeSeq(it.created, 0),
      });
    }
  }
  // a layout-1 provider (a migrating table) carries its state inline
  if (def) provider = fromItems(def, state ?? (isV1Provider(def) ? def : undefined));
  return provider ? { provider, rows } : undefined;
}

/** A consumer's record and the current generation of each provider it uses. */
export async function consumerAllocations(consumer: string) {
  const record = await getConsumer(consumer);
  if (!record) return undefined;
  const providers = await getProviderStates(Object.keys(record.allocations));
  return { record, providers };
}

// ------------------------------------------------------------------ legacy import

/**
 * Write allocation rows WITHOUT consumer records, as a pre-1.8 Placement database
 * holds them (the operators' import tool uses this; so do the migration's tests).
 * Providers' usage and allocation counts include them; capacity is not checked (the
 * data is what it is). One transaction per consumer; refused if the consumer already
 * has a record or a row on one of the providers. Raises the legacy flag first and
 * waits until every process's cached "no legacy rows" has expired.
 */
export async function importLegacyAllocations(consumers: Array<{ uuid: string; allocations: AllocationMap }>): Promise<void> {
  await beginLegacyImport();
  for (const c of consumers) {
    const rps = Object.keys(c.allocations);
    if (!rps.length) continue;
    const now = new Date().toISOString();
    const stamp = logStamp();
    const none = new Expr();
    const items: TxItem[] = [none.when(none.absent('pk')).checkItem(K.consumer(c.uuid))];
    for (const rp of rps) {
      items.push(
        newItem({
          ...K.providerAllocation(rp, c.uuid),
          ...K.allocationByConsumer(c.uuid, rp),
          ...K.legacyAllocationIndex(c.uuid, rp),
          kind: 'ALLOC',
          provider: rp,
          consumer: c.uuid,
          resources: c.allocations[rp],
          legacy: true,
          legacyRps: rps,
          created: now,
        }),
      );
      const it = providerUpdate(
        {
          uuid: rp,
          generationDelta: 0,
          usedDelta: { ...c.allocations[rp] },
          limits: {},
          allocsDelta: 1,
        },
        now,
        stamp,
      );
      if (it) items.push(it);
    }
    items.push(logPut({ rereads: rps }, stamp));
    const out = await transact(items, {
      change: {
        op: 'allocations.import',
        consumers: [{ uuid: c.uuid, prev: null, before: null, after: null }],
        note: 'legacy rows without a consumer record',
      },
    });
    if (!out.ok) {
      throw new Error(
        `legacy import of consumer ${c.uuid} refused: ${out.conflict ? 'concurrent write' : `condition failed on action(s) ${out.failed.join(', ')} (consumer record exists, row exists or provider missing)`}`,
      );
    }
  }
}
