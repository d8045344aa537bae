/**
 * The table's layout record (`META` / `layout`, docs/items.md "Layout versions and
 * upgrades"): which item layout the table holds, and where its migration is. Every
 * request of both APIs asks layoutRefusal() first (cached per process: one read a minute
 * once the table is complete, every two seconds while it is not), so a release never
 * serves a table it does not understand.
 *
 * A table without a record is recorded by ensureLayout() — the maintenance function on
 * every run (and at a deploy's end), `npx berth`, `npm start`, a new local table: an
 * empty one (or one written by layout 2 before records existed) is layout 2; one holding
 * layout-1 items (a provider item with its state inline, a custom class or trait in its
 * single partition) is layout 1, waiting for its migration. Requests only read it.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LAYOUT_META, type LayoutPhase, type LayoutState, unrecordedState, type Verdict, verdict } from '../../core/layout.js';
import { type Item, tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { retryTransient } from '../ddb/retry.js';
import { Expr } from '../ddb/expr.js';
import { perTable } from '../ddb/per-table.js';
import { K, PROVIDER_SHARDS } from '../placement/keys.js';
import { log } from '../../observability/log.js';

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
  /** aggregate sharing-list entries written */
  sharing: number;
}

export interface LayoutRecord extends LayoutState {
  /** when the phase last changed */
  since?: string;
  /** who opened the migration (`deploy`, `cli`, `local`) */
  by?: string;
  /** the items the table held when the migration began (DescribeTable's estimate), for a progress figure */
  estimate?: number;
  /** the migration's scan segments (migrate.ts) */
  segments?: number;
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
    ...(it.segments !== undefined ? { segments: Number(it.segments) } : {}),
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
  const r = await retryTransient(() => ddb().send(new GetCommand({ TableName: tableName(), Key: layoutKey(), ConsistentRead: true })));
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
    const r = await retryTransient(() =>
      ddb().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: input.IndexName,
          KeyConditionExpression: '#p = :p',
          ExpressionAttributeNames: { '#p': input.pkName },
          ExpressionAttributeValues: { ':p': input.pk },
          Limit: 1,
        }),
      ),
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
    await retryTransient(() => ddb().send(new PutCommand(e.putInput({ ...layoutKey(), ...state, since: state.since ?? new Date().toISOString() }))));
    forgetLayout();
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
    // (sent again after a lost answer: then its condition fails, as for anyone else's move)
    await retryTransient(() => ddb().send(new UpdateCommand(e.updateInput(layoutKey()))));
    forgetLayout();
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
    // (sent again after a lost answer: a cursor is set again; a count may be added twice)
    await retryTransient(() => ddb().send(new UpdateCommand(e.updateInput(layoutKey()))));
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
  record: LayoutRecord | undefined;
  verdict: Verdict;
}

/** A per-table cache of the record as `fetch` reads it and what `judge` makes of it. */
function cache(fetch: () => Promise<LayoutRecord | undefined>, judge: (r: LayoutRecord | undefined) => Verdict) {
  return perTable(() => {
    let cached: Cached | undefined;
    let inFlight: Promise<Cached> | undefined;
    return {
      clear() {
        cached = undefined;
      },
      async get(): Promise<Cached> {
        const trust = cached?.record?.phase === 'complete' && cached.verdict.serve ? TRUST_COMPLETE_MS : TRUST_MOVING_MS;
        if (cached && Date.now() - cached.at < trust) return cached;
        inFlight ??= fetch()
          .then((record) => {
            const v = judge(record);
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
}

/**
 * Placement's view: the full verdict. A request only reads the record (the maintenance
 * function, `npx berth`, `npm start` and a new local table write it): until a table has
 * one, nobody can say which layout it holds, and Placement waits for it.
 */
const verdicts = cache(readLayoutRecord, (r) => (r ? verdict(r) : UNRECORDED));

const UNRECORDED: Verdict = {
  serve: false,
  permanent: false,
  retryAfterS: 10,
  message:
    "This Berth table's item layout is not recorded yet: the maintenance function records it within a minute (the deploy runs it when it finishes; `npx berth migrate --status` does it at once).",
};

/**
 * Bare metal's view when it touches only its own items (the database scheduler): those
 * are the same in layouts 1 and 2, so it serves a table of either, whatever its phase,
 * and refuses only a layout outside this release's range. It only reads the record (a
 * table without one is layout 1 or 2) and never reads a Placement item.
 */
const ownItemsVerdicts = cache(readLayoutRecord, (r) => {
  if (!r) return { serve: true, migrating: false };
  const v = verdict(r);
  return v.serve || v.permanent ? v : { serve: true, migrating: false };
});

/** May this release serve the table now (and is it migrating)? Cached per process. */
export async function layoutVerdict(): Promise<Verdict> {
  return (await verdicts().get()).verdict;
}

/**
 * What an API answers instead of serving `path` (undefined: serve it). The documents that
 * need no table (`/`, `/v1`, `/openapi.json`, bare metal's drivers) are always served. `ownItemsOnly`: the
 * caller touches no Placement item (bare metal with the database scheduler).
 */
export async function layoutRefusal(
  path: string,
  opts: { ownItemsOnly?: boolean } = {},
): Promise<{ message: string; headers: Record<string, string> } | undefined> {
  if (TABLELESS_PATHS.has(path) || path.startsWith('/v1/drivers')) return undefined;
  const v = (await (opts.ownItemsOnly ? ownItemsVerdicts() : verdicts()).get()).verdict;
  if (v.serve) return undefined;
  return { message: v.message, headers: v.retryAfterS ? { 'retry-after': String(v.retryAfterS) } : {} };
}
const TABLELESS_PATHS = new Set(['', '/', '/v1', '/v1/', '/openapi.json']);

/** how far a migration is, 0..1: its scan (items scanned over the table's estimate) is 90 %, the derived items 10 % */
export function fractionOf(rec: LayoutRecord): number {
  if (rec.phase === 'complete') return 1;
  if (rec.phase === 'waiting') return 0;
  const scanned = rec.progress?.scanned ?? 0;
  const est = Math.max(rec.estimate ?? 0, scanned, 1);
  const segments = rec.segments ?? 1;
  const done = Object.values(rec.cursors ?? {}).filter((c) => c === 'done').length;
  const scan = done >= segments ? 1 : Math.min(0.99, scanned / est);
  return Math.round(scan * 0.9 * 1000) / 1000;
}

/**
 * The table's layout as an answer header (`x-berth-layout`; the dashboard shows a
 * migration's progress from it): `2`, or `1>2 migrating 45%`, `1>2 waiting`, `unrecorded`.
 */
export async function layoutHeader(): Promise<string> {
  const r = (await verdicts().get()).record;
  if (!r) return 'unrecorded';
  if (r.phase === 'complete') return String(r.version);
  const to = r.target ?? '?';
  return r.phase === 'migrating' ? `${r.version}>${to} migrating ${Math.round(fractionOf(r) * 100)}%` : `${r.version}>${to} ${r.phase}`;
}

/** Is the table migrating to this release's layout (readers of layout-1 items must look for them)? */
export async function layoutMigrating(): Promise<boolean> {
  const v = await layoutVerdict();
  return v.serve && v.migrating;
}

/** Forget what this process read (a test or the migration itself changed the record). */
export function forgetLayout(): void {
  verdicts().clear();
  ownItemsVerdicts().clear();
}
