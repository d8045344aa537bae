/**
 * Switching a deployment to BAREMETAL_SCHEDULER=placement (docs/design.md, "Bare metal
 * through Placement"): its nodes get their resource providers and its active
 * allocations their Placement consumers. Resumable and idempotent: one node at a time,
 * each in ONE transaction with a condition on the node's version (a node written
 * meanwhile wrote its provider itself, and is looked at again), a node already in
 * agreement costs its reads only, and the progress (the creation sequence of the last
 * node done) lives in a META item, so a pass that stops is resumed by the next.
 *
 * Until a pass that started SETTLE after the switch was first seen finds every node in
 * agreement, allocations take their candidates from the node index (a node written by
 * a process still running the old configuration may have no provider yet; reserving
 * one creates its provider in the same transaction); from then on, from the forest.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config.js';
import { nodeProviderShape, placementResourceClass } from '../../core/baremetal/placement.js';
import { ALLOCATION_STATES } from '../../core/baremetal/allocations.js';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { tableKey } from '../ddb/per-table.js';
import { RETRY, withRetries } from '../ddb/retry.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { Expr } from '../ddb/expr.js';
import { ensureCustomNames, nodeProviderItems, readNodeProvider } from '../placement/node-provider.js';
import { K } from '../placement/keys.js';
import { getAllocation } from './allocations.js';
import { BK, BM_TX } from './keys.js';
import { getNode, queryNodes } from './nodes.js';
import { consumerOf, placementMode, withLink } from './placement-link.js';

const STATE_KEY = K.meta('baremetal-scheduler');

/** What the META item says about the switch. */
export interface SchedulerState {
  /** the scheduler the last pass migrated to */
  mode?: string;
  /** when a process first saw the placement scheduler (ms epoch) */
  switchedAt?: number;
  /** a pass found every node in agreement (and started SETTLE after switchedAt) */
  complete?: boolean;
  /** the creation sequence of the last node the current pass finished */
  cursor?: number;
  /** nodes given (or corrected) a provider or consumer, in all passes */
  synced?: number;
  /** nodes whose active allocation could not get its consumer: another consumer holds the provider */
  conflicts?: string[];
  /** when the last pass began (ms epoch) */
  passStartedAt?: number;
  completedAt?: string;
}

export async function readSchedulerState(): Promise<SchedulerState> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: STATE_KEY, ConsistentRead: true }));
  return (r.Item ?? {}) as SchedulerState;
}

async function writeSchedulerState(s: SchedulerState): Promise<void> {
  // a one-item transaction (its outcome is known); concurrent passes write the same facts
  await transact([new Expr().putItem({ ...STATE_KEY, ...s })], {
    ...BM_TX,
    change: { op: 'internal', note: 'bare-metal scheduler migration progress' },
  });
}

/** how long after the switch a pass must begin to complete the migration (ms): in-flight work of the old configuration ends before */
export function settleMs(): number {
  return config().baremetal.migrationSettleS * 1000;
}

const completeTables = new Set<string>();

/**
 * Do allocations take their candidates from the forest? Only in placement mode, once
 * the migration has completed (a process remembers that; until then it asks each time,
 * one consistent GetItem).
 */
export async function candidatesFromForest(): Promise<boolean> {
  if (!placementMode()) return false;
  if (completeTables.has(tableKey())) return true;
  const s = await readSchedulerState();
  const done = s.mode === 'placement' && s.complete === true;
  if (done) completeTables.add(tableKey());
  return done;
}

/** forget what this process knows (tests point it at new tables) */
export function forgetSchedulerState(): void {
  completeTables.clear();
}

export type SyncOutcome = 'unchanged' | 'synced' | 'gone' | 'conflict';

/**
 * Bring one node's provider (and its active allocation's consumer) into agreement with
 * the node, in one transaction conditioned on the node's version.
 */
export async function syncNode(uuid: string): Promise<SyncOutcome> {
  return withRetries<SyncOutcome>(async () => {
    const node = await getNode(uuid);
    if (!node) return 'gone';
    const alloc = node.allocation_uuid ? await getAllocation(node.allocation_uuid) : undefined;
    const active = alloc && alloc.state === ALLOCATION_STATES.ACTIVE && alloc.node_uuid === node.uuid ? alloc : undefined;
    const read = await readNodeProvider(uuid, active?.uuid);
    const want = nodeProviderShape(node, read.provider?.record);
    await ensureCustomNames(want, read.provider?.record);
    const rc = placementResourceClass(node.resource_class);
    const claim = active && rc && !read.consumer ? { consumer: active.uuid, ...consumerOf(active), resourceClass: rc } : undefined;
    const plan = nodeProviderItems({ node: uuid, want, read: read.provider, claim });
    if ('error' in plan) return 'conflict';
    if (!plan.items.length) return 'unchanged';
    const asRead = new Expr();
    const items: TxItem[] = [asRead.when(asRead.eq('ver', node.ver)).checkItem(BK.node(uuid)), ...plan.items];
    // the node's provider (and its allocation's consumer) brought in line with the node
    const change = withLink({ op: 'node.provider', nodes: [{ uuid, before: null, after: null }] }, plan);
    const out = await transact(items, { ...BM_TX, change });
    return out.ok ? 'synced' : RETRY;
  });
}

export interface MigrationReport {
  mode: string;
  complete: boolean;
  nodes: number;
  synced: number;
  conflicts: string[];
  /** the pass stopped at its deadline (the next resumes) */
  partial?: boolean;
  /** a complete pass that began too soon after the switch (SETTLE): the next one completes */
  settling?: boolean;
}

/**
 * One pass (or the rest of one) over every node, in creation order, until `deadline`.
 * Nothing to do outside placement mode, or once complete.
 */
export async function migrateNodesToPlacement(opts: { deadline: number; onNode?: (done: number, total: number) => void }): Promise<MigrationReport> {
  const mode = config().baremetal.scheduler;
  if (mode !== 'placement') return { mode, complete: false, nodes: 0, synced: 0, conflicts: [] };
  let state = await readSchedulerState();
  if (state.mode === 'placement' && state.complete) {
    completeTables.add(tableKey());
    return { mode, complete: true, nodes: 0, synced: 0, conflicts: state.conflicts ?? [] };
  }
  if (state.mode !== 'placement') {
    state = { mode: 'placement', switchedAt: Date.now(), complete: false, cursor: 0, synced: state.synced ?? 0, conflicts: [] };
    await writeSchedulerState(state);
  }
  const passStartedAt = (state.cursor ?? 0) > 0 ? (state.passStartedAt ?? Date.now()) : Date.now();
  const nodes = (await queryNodes()).filter((n) => n.seq > (state.cursor ?? 0));
  const conflicts = new Set(state.conflicts ?? []);
  let synced = 0;
  let done = 0;
  for (const n of nodes) {
    if (Date.now() > opts.deadline) {
      await writeSchedulerState({ ...state, cursor: state.cursor, synced: (state.synced ?? 0) + synced, conflicts: [...conflicts], passStartedAt });
      return { mode, complete: false, nodes: done, synced, conflicts: [...conflicts], partial: true };
    }
    const out = await syncNode(n.uuid);
    if (out === 'synced') synced++;
    if (out === 'conflict') conflicts.add(n.uuid);
    else conflicts.delete(n.uuid);
    state.cursor = n.seq;
    done++;
    opts.onNode?.(done, nodes.length);
  }
  const settled = passStartedAt >= (state.switchedAt ?? 0) + settleMs();
  const next: SchedulerState = {
    ...state,
    // a pass that began before the settle time starts over: nodes the old configuration wrote are looked at again
    cursor: 0,
    synced: (state.synced ?? 0) + synced,
    conflicts: [...conflicts],
    passStartedAt: undefined,
    complete: settled,
    ...(settled ? { completedAt: new Date().toISOString() } : {}),
  };
  await writeSchedulerState(next);
  if (settled) completeTables.add(tableKey());
  return { mode, complete: settled, nodes: done, synced, conflicts: [...conflicts], ...(settled ? {} : { settling: true }) };
}
