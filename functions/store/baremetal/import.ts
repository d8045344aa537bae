/**
 * Moving in from a running Ironic (`npx berth import-ironic`, cli/import-ironic.ts):
 * what the table holds already, the import's progress item, and its writes.
 *
 * Each node is ONE transaction — the node with its name and instance items, its active
 * allocation with that allocation's name and, with the placement scheduler, the node's
 * resource provider and the allocation's Placement consumer — built by the API's own
 * writers (nodes.ts createNode, allocations.ts allocationCreateItems, the scheduler's links
 * through createNode), so an imported node is exactly what Berth's own would be: the
 * same items, conditions and change-log entry. An allocation bound to no node (an error
 * one) is its own transaction, as createAllocation writes it. Every item is written only
 * if absent, so a node is either wholly there or not at all: an interrupted pass leaves
 * whole nodes, and the next pass writes the rest.
 *
 * The progress item (`META` / `import-ironic`) names the source, the scheduler the
 * import wrote for and when it started and ended; it is what lets a later pass tell
 * its own earlier pass from somebody else's data.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { NodeRecord } from '../../core/baremetal/records.js';
import { tableName } from '../ddb/client.js';
import { batchGet, ddb } from '../ddb/reads.js';
import { RETRY, withRetries } from '../ddb/retry.js';
import { transact } from '../ddb/tx.js';
import { Expr } from '../ddb/expr.js';
import { metaKey } from '../ddb/keys.js';
import { unrecordedState, verdict } from '../../core/layout.js';
import { holdsLayout1Items, readLayoutRecord } from '../layout/state.js';
import { allocationCreateItems, allocationFromItem, createAllocation, getAllocation, type StoredAllocation } from './allocations.js';
import { BK, BM_TX } from './keys.js';
import { getNodes } from './nodes.js';
import { createNode } from './node-writes.js';
import type { LinkRefusal, NodeLinks } from './links.js';

const STATE_KEY = metaKey('import-ironic');

/** What `META` / `import-ironic` says about the import into this table. */
export interface IronicImportState {
  /** the Ironic endpoint the nodes came from */
  source: string;
  /** the scheduler the import wrote for (placement: providers and consumers too) */
  scheduler: 'database' | 'placement';
  startedAt: string;
  /** the microversion it read at */
  version: string;
  /** what the last pass found in Ironic, and when it ended (absent: it has not) */
  nodes?: number;
  allocations?: number;
  completedAt?: string;
}

export async function readImportState(): Promise<IronicImportState | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: STATE_KEY, ConsistentRead: true }));
  if (!r.Item) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = r.Item;
  return rest as IronicImportState;
}

export async function writeImportState(s: IronicImportState): Promise<void> {
  // a one-item transaction: its outcome is known
  const out = await transact([new Expr().putItem({ ...STATE_KEY, ...s })], {
    ...BM_TX,
    change: { op: 'internal', note: 'import-ironic: its progress' },
  });
  if (!out.ok) throw new Error('the import progress item could not be written (a concurrent write): run the import again');
}

/**
 * Why this release may not write the table, read without writing anything (the layout
 * record is the APIs' to write, on first contact): a table whose layout it does not serve
 * (a newer release's; a layout-1 table whose migration has not begun — `npx berth
 * migrate`), or one holding layout-1 items and no record yet. Undefined: it may.
 */
export async function layoutProblem(): Promise<string | undefined> {
  const rec = await readLayoutRecord();
  const state = rec ?? unrecordedState(await holdsLayout1Items());
  const v = verdict(state);
  return v.serve ? undefined : v.message;
}

/**
 * What the table holds of bare metal — the only kinds of rows the import writes but for
 * the node's providers and the allocations' consumers (placement scheduler), which
 * Berth's own writes adopt when they exist (Nova's ironic driver made them, and a
 * Placement import brought them over): the nodes and allocations by uuid, and how many
 * other bare-metal items (names, instance items). Placement's own data, settings (`META`),
 * the change log and transaction markers do not count.
 */
export interface TableSurvey {
  nodes: Set<string>;
  allocations: Set<string>;
  /** other bare-metal items (names, instance items): how many, and a few keys */
  others: number;
  otherKeys: string[];
}

export function surveyIsEmpty(s: TableSurvey): boolean {
  return !s.nodes.size && !s.allocations.size && !s.others;
}

/** the bare-metal items (store/baremetal/keys.ts BK) but transaction markers */
const BAREMETAL = /^(BMN|BMNNAME|BMNINST|BMA|BMANAME)#/;

/** One strongly consistent scan of the table's keys, keeping the bare-metal ones (an import runs against a table nobody else uses yet). */
export async function surveyTable(): Promise<TableSurvey> {
  const s: TableSurvey = { nodes: new Set(), allocations: new Set(), others: 0, otherKeys: [] };
  let start: Record<string, unknown> | undefined;
  do {
    const r = await ddb().send(
      new ScanCommand({
        TableName: tableName(),
        ConsistentRead: true,
        ExclusiveStartKey: start,
        ProjectionExpression: '#pk, #sk',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      }),
    );
    for (const it of r.Items ?? []) {
      const pk = String(it.pk);
      const sk = String(it.sk);
      if (!BAREMETAL.test(pk)) continue;
      if (pk.startsWith('BMN#') && sk === 'BMN') s.nodes.add(pk.slice(4));
      else if (pk.startsWith('BMA#') && sk === 'BMA') s.allocations.add(pk.slice(4));
      else {
        s.others++;
        if (s.otherKeys.length < 5) s.otherKeys.push(`${pk} / ${sk}`);
      }
    }
    start = r.LastEvaluatedKey;
  } while (start);
  return s;
}

/** The nodes and allocations of these uuids the table holds (strongly consistent). */
export async function storedRecords(nodes: Iterable<string>, allocations: Iterable<string>) {
  const [n, a] = await Promise.all([getNodes(nodes), batchGet([...allocations].map((u) => BK.allocation(u)))]);
  const allocs = new Map<string, StoredAllocation>();
  for (const it of a.values()) allocs.set(String(it.uuid), allocationFromItem(it));
  return { nodes: n, allocations: allocs };
}

export type ImportWrite = { ok: true } | { error: 'duplicate_uuid' | 'duplicate_name' | 'instance_associated' | 'allocation_exists' } | LinkRefusal;

/**
 * Write one node and its active allocation (if any), in one transaction, each item only
 * if absent; with the placement scheduler the node's provider and the allocation's
 * consumer too. Lost races (a concurrent transaction) are tried again.
 */
export async function importNode(node: NodeRecord, links: NodeLinks, allocation?: StoredAllocation): Promise<ImportWrite> {
  const extra = allocation ? allocationCreateItems(allocation).items : [];
  return withRetries<ImportWrite>(async () => {
    const out = await createNode(node, links, { extra, claim: allocation });
    if ('ok' in out) return { ok: true };
    if (out.error === 'refused') return out;
    if (out.error !== 'stale') return { error: out.error };
    // the allocation's own items are among createNode's "anything else": one that exists is not a race
    if (allocation && (await getAllocation(allocation.uuid))) return { error: 'allocation_exists' };
    return RETRY;
  });
}

/** Write an allocation bound to no node (an error one), as createAllocation writes a new one. */
export async function importAllocation(a: StoredAllocation): Promise<ImportWrite> {
  return withRetries<ImportWrite>(async () => {
    const out = await createAllocation(a);
    if ('ok' in out) return { ok: true };
    if (out.error === 'stale') return RETRY;
    return out.error === 'duplicate_uuid' ? { error: 'allocation_exists' } : { error: out.error };
  });
}
