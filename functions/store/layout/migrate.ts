/**
 * The online migration from layout 1 to layout 2 (docs/items.md, "Layout versions and
 * upgrades"), run in bounded, resumable batches by the maintenance function (task
 * `layout`) or at once by `npx berth migrate`. Its steps, each recorded in the table's
 * layout record (state.ts), so a run that dies anywhere resumes where the last finished
 * batch left off, and repeating a batch changes nothing:
 *
 *   open       waiting -> preparing: the previous release is gone (the deploy finished,
 *              or an operator said so)
 *   prepare    custom classes and traits move to their layout-2 partitions (a few
 *              hundred items; no request is served meanwhile), then -> migrating
 *   scan       a parallel Scan of the whole table in segments, each page's layout-1
 *              items converted (v1.ts) before the segment's cursor moves past them:
 *              providers get their state items, usage items move, project usage items
 *              go, allocation rows lose their consumer index entry
 *   derived    every root's tree item and every aggregate's sharing list, from the
 *              provider index (gsi1), each entry checked to hold when it is added
 *   complete   migrating -> complete at layout 2
 *
 * Requests are served from `migrating` on, reading what is not converted yet as it is
 * (v1.ts): nothing half-converted is ever read, since every conversion is one transaction.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { LAYOUT } from '../../core/layout.js';
import { config } from '../../config.js';
import { keyId } from '../ddb/batch.js';
import { batchGet, ddb } from '../ddb/reads.js';
import { ddbRaw, type Item, tableName } from '../ddb/client.js';
import { Expr } from '../ddb/expr.js';
import { queryPartition } from '../ddb/query.js';
import { RETRY, retryTransient, withRetries } from '../ddb/retry.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { K, PROVIDER_SHARDS } from '../placement/keys.js';
import { sharedVia } from '../../core/placement/provider-filters.js';
import { SHARING_TRAIT } from '../../core/placement/candidates/view.js';
import {
  ensureLayout,
  fractionOf,
  type LayoutProgress,
  type LayoutRecord,
  movePhase,
  readLayoutRecord,
  updateLayout,
  V1_CATALOG_PKS,
} from './state.js';
import { isV1Provider, isV1Row, isV1Usage, materializeProviders, moveCatalogItem, moveUsage, readV1Catalog, stripRow } from './v1.js';

/** what the migration's own writes are, for the change feed: nothing an API shows changes */
const LAYOUT_CHANGE = { op: 'internal', note: 'layout migration: derived items written' } as const;

/** Scan segments (each its own cursor; the migration reads them in parallel) */
export const SCAN_SEGMENTS = 4;
/** items per Scan page */
export const SCAN_PAGE = 200;
/** conversions in flight at once within a page */
const PARALLEL = 8;
/** members per tree transaction (one ConditionCheck each, the tree item's update, the marker) */
const TREE_CHUNK = 90;

export interface MigrationReport {
  phase: LayoutRecord['phase'];
  /** what this run did */
  did: Partial<LayoutProgress>;
  /** what the whole migration did so far */
  progress?: LayoutProgress;
  /** an estimate, 0..1, of how far it is (scan items over the table's item count, then trees) */
  fraction?: number;
  done: boolean;
}

const zero = (): LayoutProgress => ({ scanned: 0, providers: 0, usage: 0, rows: 0, catalog: 0, trees: 0, sharing: 0 });

/** Hooks a test uses to stop a run midway (as a dying Lambda would) or slow it down. */
export const migrationHooks: { afterPage?: (segment: number, page: number) => Promise<void> | void } = {};

/**
 * Open the migration of a table waiting at layout 1 (the previous release is gone).
 * True if it is open now (by this call or before).
 */
export async function openMigration(by: string): Promise<boolean> {
  const rec = await ensureLayout();
  if (rec.phase !== 'waiting') return rec.phase !== 'complete' || rec.version === LAYOUT;
  let estimate = 0;
  try {
    const t = await ddbRaw().send(new DescribeTableCommand({ TableName: tableName() }));
    estimate = Number(t.Table?.ItemCount ?? 0);
  } catch {
    // an estimate only
  }
  const now = new Date().toISOString();
  const settleUntil = Date.now() + config().layoutSettleS * 1000;
  await movePhase('waiting', 'preparing', {
    by,
    startedAt: now,
    settleUntil,
    estimate,
    progress: zero(),
    cursors: {},
    trees: {},
    batches: 0,
    target: LAYOUT,
  });
  return true;
}

/**
 * Move layout 1's custom classes and traits (nothing serves the table meanwhile), then
 * serve it — once the settle time has passed (false until then).
 */
async function prepare(rec: LayoutRecord, did: Partial<LayoutProgress>): Promise<boolean> {
  if ((rec.settleUntil ?? 0) > Date.now()) return false;
  const items = await readV1Catalog();
  for (const it of items) await moveCatalogItem(it);
  did.catalog = (did.catalog ?? 0) + items.length;
  await updateLayout('preparing', {}, { 'progress.catalog': items.length });
  await movePhase('preparing', 'migrating');
  return true;
}

/** One page of the scan: convert what is layout 1. */
async function convertPage(items: Item[], did: Partial<LayoutProgress>): Promise<void> {
  const add = (k: keyof LayoutProgress, n: number) => (did[k] = (did[k] ?? 0) + n);
  add('scanned', items.length);
  const defs = items.filter(isV1Provider);
  if (defs.length) add('providers', await materializeProviders(defs));
  const rest = items.filter((it) => isV1Usage(it) || isV1Row(it) || it.pk === V1_CATALOG_PKS.rc || it.pk === V1_CATALOG_PKS.trait);
  for (let i = 0; i < rest.length; i += PARALLEL) {
    await Promise.all(
      rest.slice(i, i + PARALLEL).map(async (it) => {
        if (isV1Usage(it)) {
          if (await moveUsage(it)) add('usage', 1);
        } else if (isV1Row(it)) {
          await stripRow(it);
          add('rows', 1);
        } else {
          await moveCatalogItem(it);
          add('catalog', 1);
        }
      }),
    );
  }
}

async function recordPage(segment: number, cursor: Record<string, unknown> | 'done', did: Partial<LayoutProgress>): Promise<boolean> {
  const add: Record<string, number> = { batches: 1 };
  for (const [k, v] of Object.entries(did)) if (v) add[`progress.${k}`] = v;
  return updateLayout('migrating', { [`cursors.${segment}`]: cursor }, add);
}

/** Scan one segment page by page until it is done or the deadline passes; false when the record moved on under it. */
async function scanSegment(segment: number, rec: LayoutRecord, deadline: number, pageSize: number, did: Partial<LayoutProgress>): Promise<void> {
  let cursor = rec.cursors?.[String(segment)];
  let page = 0;
  while (cursor !== 'done' && Date.now() < deadline) {
    const r = await retryTransient(() =>
      ddb().send(
        new ScanCommand({
          TableName: tableName(),
          Segment: segment,
          TotalSegments: SCAN_SEGMENTS,
          Limit: pageSize,
          // eventually consistent (half the units): every conversion is conditional, so a
          // stale copy of an item converted meanwhile only costs a failed condition
          ExclusiveStartKey: cursor as Record<string, unknown> | undefined,
        }),
      ),
    );
    const pageDid: Partial<LayoutProgress> = {};
    await convertPage(r.Items ?? [], pageDid);
    cursor = r.LastEvaluatedKey ?? 'done';
    if (!(await recordPage(segment, cursor, pageDid))) return;
    for (const [k, v] of Object.entries(pageDid)) did[k as keyof LayoutProgress] = (did[k as keyof LayoutProgress] ?? 0) + (v ?? 0);
    await migrationHooks.afterPage?.(segment, page++);
  }
}

/** The actions adding `members` to root `root`'s tree, each member (and the root) checked to be in that tree still. */
function treeActions(root: string, members: string[]): TxItem[] {
  const items: TxItem[] = members.map((m) => {
    const e = new Expr();
    return e.when(e.exists('pk')).when(e.eq('root', root)).checkItem(K.provider(m));
  });
  const top = new Expr();
  items.push(top.when(top.exists('pk')).when(top.eq('root', root)).checkItem(K.provider(root)));
  items.push(new Expr().add('members', new Set(members)).updateItem(K.providerTree(root)));
  return items;
}

/** The actions listing `uuid` with aggregate `agg`'s sharing providers, if it still shares through it. */
function sharingActions(uuid: string, agg: string): TxItem[] {
  const e = new Expr();
  e.when(e.exists('pk')).when(e.contains('traits', SHARING_TRAIT)).when(e.contains('aggs', agg));
  return [e.checkItem(K.provider(uuid)), new Expr().putItem({ ...K.sharing(agg, uuid), uuid })];
}

/** Write `actions()` until it holds, re-reading (`again`) after a failed condition; false when `again` says it no longer applies. */
async function derive(actions: () => TxItem[], again: () => Promise<boolean>): Promise<void> {
  await withRetries(async () => {
    const out = await transact(actions(), { change: LAYOUT_CHANGE });
    if (out.ok) return true;
    if (out.conflict) return RETRY;
    return (await again()) ? RETRY : true;
  });
}

/**
 * Layout 2's derived items, which layout 1 has not: every root's tree item and every
 * aggregate's list of sharing providers, from the provider index (a tree's members are
 * spread over every gsi1 shard, so all of them are read first). Each item is added
 * under a check that what it says still holds (a member moved or deleted meanwhile, a
 * trait or aggregate removed, is read again and left out); writes made meanwhile keep
 * them up to date themselves, as layout 2's writes always do. Idempotent.
 */
async function buildDerived(did: Partial<LayoutProgress>): Promise<void> {
  const parts = await Promise.all(
    Array.from({ length: PROVIDER_SHARDS }, (_, s) =>
      queryPartition({
        index: 'gsi1',
        pk: K.providerIndexPk(s),
        projection: { expression: '#u, #r, #t, #a', names: { '#u': 'uuid', '#r': 'root', '#t': 'traits', '#a': 'aggs' } },
      }),
    ),
  );
  const byRoot = new Map<string, string[]>();
  const sharing: Array<[string, string]> = [];
  for (const it of parts.flat()) {
    const u = String(it.uuid);
    for (const a of sharedVia({ traits: (it.traits as string[]) ?? [], aggregates: (it.aggs as string[]) ?? [] })) sharing.push([u, a]);
    const root = String(it.root ?? u);
    if (root === u) continue;
    const list = byRoot.get(root) ?? [];
    list.push(u);
    byRoot.set(root, list);
  }
  for (const [root, members] of byRoot) {
    for (let i = 0; i < members.length; i += TREE_CHUNK) {
      let chunk = members.slice(i, i + TREE_CHUNK);
      await derive(
        () => treeActions(root, chunk),
        async () => {
          // a member left the tree (or the root went or moved): keep those still in it
          const fresh = await batchGet([root, ...chunk].map((m) => K.provider(m)));
          chunk = fresh.get(keyId(K.provider(root)))?.root === root ? chunk.filter((m) => fresh.get(keyId(K.provider(m)))?.root === root) : [];
          return chunk.length > 0;
        },
      );
    }
    did.trees = (did.trees ?? 0) + 1;
  }
  for (const [uuid, agg] of sharing) {
    await derive(
      () => sharingActions(uuid, agg),
      async () => false, // it no longer shares through it: nothing to list
    );
    did.sharing = (did.sharing ?? 0) + 1;
  }
}

/**
 * Run the migration for up to `deadline` (ms epoch): whatever phase the table is in,
 * the next batches of it. Returns where it is.
 */
export async function migrateLayout(opts: { deadline: number; pageSize?: number }): Promise<MigrationReport> {
  const did: Partial<LayoutProgress> = {};
  // a table without a record gets one first (the only writer of first records in AWS)
  let rec: LayoutRecord | undefined = await ensureLayout();
  if (rec.phase === 'preparing' && (await prepare(rec, did))) rec = (await readLayoutRecord())!;
  if (rec.phase === 'migrating') {
    const segments = Array.from({ length: SCAN_SEGMENTS }, (_, s) => s).filter((s) => rec!.cursors?.[String(s)] !== 'done');
    await Promise.all(segments.map((s) => scanSegment(s, rec!, opts.deadline, opts.pageSize ?? SCAN_PAGE, did)));
    rec = (await readLayoutRecord())!;
    const scanned = Array.from({ length: SCAN_SEGMENTS }, (_, s) => rec!.cursors?.[String(s)] === 'done').every(Boolean);
    if (rec.phase === 'migrating' && scanned && Date.now() < opts.deadline) {
      await buildDerived(did);
      await updateLayout('migrating', { 'trees.all': 'done' }, { 'progress.trees': did.trees ?? 0, 'progress.sharing': did.sharing ?? 0 });
      await movePhase('migrating', 'complete', { version: LAYOUT, completedAt: new Date().toISOString() });
      rec = (await readLayoutRecord())!;
    }
  }
  return { phase: rec.phase, did, progress: rec.progress, fraction: fractionOf(rec), done: rec.phase === 'complete' };
}
