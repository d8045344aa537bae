/**
 * The table's layout record (`META` / `layout`, docs/design.md "Layout versions and
 * upgrades"): which item layout the table holds, and where its migration is. Every
 * request of both APIs asks layoutVerdict() first (cached per process: one read a minute
 * once the table is complete, every two seconds while it is not), so a release never
 * serves a table it does not understand.
 *
 * A table without a record is recorded on first contact: an empty one (or one written
 * by layout 2 before records existed) is layout 2; one holding layout-1 items (a
 * provider item with its state inline, a custom class or trait in its single partition)
 * is layout 1, waiting for its migration.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LAYOUT, type LayoutPhase, type LayoutState, unrecordedState, type Verdict, verdict } from '../../core/layout.js';
import { ddb, type Item, tableName } from '../ddb/client.js';
import { Expr } from '../ddb/expr.js';
import { perTable } from '../ddb/per-table.js';
import { K, PROVIDER_SHARDS } from '../placement/keys.js';
import { log } from '../../observability/log.js';

/** the record's sort key under `META` */
export const LAYOUT_META = 'layout';
export const layoutKey = () => K.meta(LAYOUT_META);

/** layout 1's single partitions of custom classes and traits (layout 2 spreads them over 8) */
export const V1_CATALOG_PKS = { rc: 'RCS', trait: 'TRAITS' } as const;

export interface LayoutProgress {
  /** items the migration's scan has looked at */
  scanned: number;
  /** providers given their state item */
  providers: number;
  /** usage items moved to their layout-2 keys */
  usage: number;
  /** allocation rows that lost their consumer index entry */
  rows: number;
  /** custom classes and traits moved to their partitions */
  catalog: number;
  /** trees whose tree item was written */
  trees: number;
}

export interface LayoutRecord extends LayoutState {
  /** when the phase last changed */
  since?: string;
  /** who opened the migration (`deploy`, `cli`, `local`) */
  by?: string;
  /** the items the table held when the migration began (DescribeTable's estimate), for a progress figure */
  estimate?: number;
  progress?: LayoutProgress;
  /** the migration's scan: per segment, where it is (`done` once finished) */
  cursors?: Record<string, Record<string, unknown> | 'done'>;
  /** the tree pass (after the scan): per gsi1 shard done */
  trees?: Record<string, 'done'>;
  startedAt?: string;
  /** nothing is converted before this instant (ms): the previous release's last requests end first */
  settleUntil?: number;
  completedAt?: string;
  batches?: number;
}

function fromItem(it: Item): LayoutRecord {
  return {
    version: Number(it.version),
    phase: String(it.phase) as LayoutPhase,
    ...(it.target !== undefined ? { target: Number(it.target) } : {}),
    ...(it.since ? { since: String(it.since) } : {}),
    ...(it.by ? { by: String(it.by) } : {}),
    ...(it.estimate !== undefined ? { estimate: Number(it.estimate) } : {}),
    ...(it.progress ? { progress: it.progress as LayoutProgress } : {}),
    ...(it.cursors ? { cursors: it.cursors } : {}),
    ...(it.trees ? { trees: it.trees } : {}),
    ...(it.startedAt ? { startedAt: String(it.startedAt) } : {}),
    ...(it.settleUntil !== undefined ? { settleUntil: Number(it.settleUntil) } : {}),
    ...(it.completedAt ? { completedAt: String(it.completedAt) } : {}),
    ...(it.batches !== undefined ? { batches: Number(it.batches) } : {}),
  };
}

/** The record as stored (strongly consistent), or undefined when the table has none. */
export async function readLayoutRecord(): Promise<LayoutRecord | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: layoutKey(), ConsistentRead: true }));
  return r.Item ? fromItem(r.Item) : undefined;
}

/**
 * Does the table hold layout-1 items? A provider definition with its state inline (one
 * item of each gsi1 shard is enough: every provider of a layout-1 table is one), or a
 * custom class or trait in layout 1's single partitions. A few small reads, once per
 * table's life.
 */
export async function holdsLayout1Items(): Promise<boolean> {
  const firstOf = async (input: { IndexName?: string; pk: string; pkName: string }) => {
    const r = await ddb().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: input.IndexName,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': input.pkName },
        ExpressionAttributeValues: { ':p': input.pk },
        Limit: 1,
      }),
    );
    return r.Items?.[0];
  };
  const defs = await Promise.all(
    Array.from({ length: PROVIDER_SHARDS }, (_, s) => firstOf({ IndexName: 'gsi1', pkName: 'gsi1pk', pk: K.providerIndexPk(s) })),
  );
  if (defs.some((d) => d !== undefined && d.sk === 'RP' && d.gen !== undefined)) return true;
  const catalogs = await Promise.all(Object.values(V1_CATALOG_PKS).map((pk) => firstOf({ pkName: 'pk', pk })));
  return catalogs.some((c) => c !== undefined);
}

/** Write the record if the table has none; the record as it is afterwards. */
export async function recordLayout(state: LayoutRecord): Promise<LayoutRecord> {
  const e = new Expr();
  e.when(e.absent('pk'));
  try {
    await ddb().send(new PutCommand(e.putInput({ ...layoutKey(), ...state, since: state.since ?? new Date().toISOString() })));
    return state;
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
    return (await readLayoutRecord())!;
  }
}

/** The table's record, written first if it has none (see the module's comment). */
export async function ensureLayout(): Promise<LayoutRecord> {
  const have = await readLayoutRecord();
  if (have) return have;
  return recordLayout(unrecordedState(await holdsLayout1Items()));
}

/**
 * Move the record from phase `from` to `to` (with `set` too); false when it was not in
 * `from` (someone else moved it: read it again).
 */
export async function movePhase(from: LayoutPhase, to: LayoutPhase, set: Record<string, unknown> = {}): Promise<boolean> {
  const e = new Expr().set('phase', to).set('since', new Date().toISOString());
  for (const [k, v] of Object.entries(set)) e.set(k.split('.'), v);
  e.when(e.eq('phase', from));
  try {
    await ddb().send(new UpdateCommand(e.updateInput(layoutKey())));
    verdicts().clear();
    return true;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/** Set (and add to) attributes of the record while it is in phase `phase` (`a.b` is b of map a); false when it is not. */
export async function updateLayout(phase: LayoutPhase, set: Record<string, unknown>, add: Record<string, number> = {}): Promise<boolean> {
  const e = new Expr();
  for (const [k, v] of Object.entries(set)) e.set(k.split('.'), v);
  for (const [k, v] of Object.entries(add)) e.add(k.split('.'), v);
  e.when(e.eq('phase', phase));
  try {
    await ddb().send(new UpdateCommand(e.updateInput(layoutKey())));
    return true;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

// ------------------------------------------------------------------ the per-process verdict

/** how long a process trusts what it read: long once complete, short while anything moves */
const TRUST_COMPLETE_MS = 60_000;
const TRUST_MOVING_MS = 2_000;

interface Cached {
  at: number;
  record: LayoutRecord;
  verdict: Verdict;
}

const verdicts = perTable(() => {
  let cached: Cached | undefined;
  let inFlight: Promise<Cached> | undefined;
  return {
    clear() {
      cached = undefined;
    },
    async get(): Promise<Cached> {
      const now = Date.now();
      if (cached && now - cached.at < (cached.record.phase === 'complete' && cached.verdict.serve ? TRUST_COMPLETE_MS : TRUST_MOVING_MS))
        return cached;
      inFlight ??= ensureLayout()
        .then((record) => {
          const v = verdict(record);
          // said once per read of the record (at most every two seconds while refusing)
          if (!v.serve) log.warn('table layout: not served by this release', { layout: record, reason: v.message });
          else if (v.migrating && cached?.verdict.serve !== true) log.info('table layout: migrating', { layout: record });
          return (cached = { at: Date.now(), record, verdict: v });
        })
        .finally(() => (inFlight = undefined));
      return inFlight;
    },
  };
});

/** May this release serve the table now (and is it migrating)? Cached per process. */
export async function layoutVerdict(): Promise<Verdict> {
  return (await verdicts().get()).verdict;
}

/** The record as this process last read it (cached as layoutVerdict). */
export async function layoutRecord(): Promise<LayoutRecord> {
  return (await verdicts().get()).record;
}

/**
 * What an API answers instead of serving `path` (undefined: serve it). The documents that
 * need no table (`/`, `/v1`, `/openapi.json`) are always served.
 */
export async function layoutRefusal(path: string): Promise<{ message: string; headers: Record<string, string> } | undefined> {
  if (TABLELESS_PATHS.has(path)) return undefined;
  const v = await layoutVerdict();
  if (v.serve) return undefined;
  return { message: v.message, headers: v.retryAfterS ? { 'retry-after': String(v.retryAfterS) } : {} };
}
const TABLELESS_PATHS = new Set(['', '/', '/v1', '/v1/', '/openapi.json']);

/** Is the table migrating to this release's layout (readers of layout-1 items must look for them)? */
export async function layoutMigrating(): Promise<boolean> {
  const v = await layoutVerdict();
  return v.serve && v.migrating;
}

/** Forget what this process read (a test or the migration itself changed the record). */
export function forgetLayout(): void {
  verdicts().clear();
}

/** this release's layout, for messages and the dashboard */
export const RELEASE_LAYOUT = LAYOUT;
