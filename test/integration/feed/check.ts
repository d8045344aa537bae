/**
 * What the change feed's tests check after a run (docs/consistency.md, "The change feed"),
 * from the table itself and the events file, with nothing of the feed's own bookkeeping:
 *
 *  - the committed changes are the table's transaction markers (store/ddb/tx.ts: a marker
 *    exists exactly when its transaction committed) less fences, intent steps (`intent`)
 *    and late re-announcements (`again`): a change-log entry is its change's id, a TX# or
 *    BMTX# marker names it (`cid`);
 *  - every committed change has exactly one event, and every event a committed change;
 *  - per key, events come in commit order: a consumer's events chain (each names the one
 *    before it: `previous`) with ids growing, a provider's ids grow, a node's or an
 *    allocation's version grows;
 *  - every event conforms to its schema document (schemas/events/v1/);
 *  - the allocation history at the end says what every consumer holds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { localClient } from '../../../local/ddb-local.js';
import { eventProblems } from '../../../schemas/events/shapes.js';

const ROOT = join(__dirname, '..', '..', '..');

export interface FeedReport {
  table: string;
  committed: number;
  events: number;
  /** committed changes without an event */
  missing: string[];
  /** events without a committed change */
  extra: string[];
  /** change ids with more than one event */
  duplicates: string[];
  /** a TX#/BMTX# marker of a committed transaction that names no change (a write that recorded nothing) */
  unnamed: string[];
  invalid: string[];
  outOfOrder: string[];
  /** consumers whose allocations the history gets wrong at the end */
  historyWrong: string[];
}

export type Item = Record<string, any>;

export async function scanTable(endpoint: string, table: string): Promise<Item[]> {
  const c = localClient(endpoint);
  const out: Item[] = [];
  let start: Record<string, any> | undefined;
  try {
    do {
      const r = await c.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const it of r.Items ?? []) out.push(unmarshall(it));
      start = r.LastEvaluatedKey;
    } while (start);
  } finally {
    c.destroy();
  }
  return out;
}

/** the ids of the committed changes, from the markers (see the module comment) */
export function committedChanges(items: Item[]): { ids: string[]; unnamed: string[] } {
  const ids: string[] = [];
  const unnamed: string[] = [];
  for (const it of items) {
    const pk = String(it.pk);
    if (it.fence !== undefined) continue;
    if (pk.startsWith('LOG#')) {
      if (it.again === undefined) ids.push(String(it.sk));
    } else if (pk.startsWith('TX#') || pk.startsWith('BMTX#')) {
      if (it.intent !== undefined) continue;
      if (it.cid !== undefined) ids.push(String(it.cid));
      else unnamed.push(pk);
    }
  }
  return { ids, unnamed };
}

export interface EventLine {
  source: string;
  'detail-type': string;
  detail: Record<string, any>;
}

export function readEvents(file: string): EventLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventLine);
}

/** per-key order (see the module comment); the problems found */
export function orderProblems(events: EventLine[]): string[] {
  const out: string[] = [];
  const lastConsumer = new Map<string, string>();
  const lastProvider = new Map<string, string>();
  const lastVersion = new Map<string, number>();
  for (const e of events) {
    const d = e.detail;
    const consumers = [...((d.consumers as any[]) ?? []), ...((d.placement?.consumers as any[]) ?? [])];
    for (const c of consumers) {
      const before = lastConsumer.get(c.consumer_uuid);
      if (before !== undefined && d.id <= before) out.push(`consumer ${c.consumer_uuid}: ${d.id} after ${before}`);
      if (before !== undefined && c.previous !== null && c.previous !== before)
        out.push(`consumer ${c.consumer_uuid}: ${d.id} follows ${c.previous}, seen ${before}`);
      lastConsumer.set(c.consumer_uuid, d.id);
    }
    if (e.source === 'berth.placement' && e['detail-type'].startsWith('resource_provider')) {
      for (const p of d.subjects as string[]) {
        const before = lastProvider.get(p);
        if (before !== undefined && d.id <= before) out.push(`provider ${p}: ${d.id} after ${before}`);
        lastProvider.set(p, d.id);
      }
    }
    if (e.source !== 'berth.placement') {
      for (const s of d.subjects as string[]) {
        const v = d.after?.[s]?.ver;
        if (typeof v !== 'number') continue;
        const before = lastVersion.get(s);
        if (before !== undefined && v <= before) out.push(`${s}: version ${v} after ${before}`);
        lastVersion.set(s, v);
      }
    }
  }
  return out;
}

/**
 * Drain the stream into `eventsFile` (what the stopped server had not done yet: the
 * processor resumes at its checkpoint), then check the table against it.
 */
export async function checkFeed(endpoint: string, table: string, eventsFile: string, env: Record<string, string> = {}): Promise<FeedReport> {
  Object.assign(process.env, { DDB_ENDPOINT: endpoint, TABLE_NAME: table, AWS_REGION: 'local', ...env });
  const { resetConfig } = await import('../../../functions/config.js');
  resetConfig();
  const { startLocalFeed } = await import('../../../local/feed.js');
  const feed = await startLocalFeed({ endpoint, table, eventsFile, intervalMs: 50 });
  await feed.drain();
  await feed.stop();

  const items = await scanTable(endpoint, table);
  const { ids, unnamed } = committedChanges(items);
  const events = readEvents(eventsFile);
  const seen = new Map<string, number>();
  for (const e of events) seen.set(e.detail.id, (seen.get(e.detail.id) ?? 0) + 1);
  const committed = new Set(ids);
  const invalid: string[] = [];
  for (const e of events) for (const p of eventProblems(e, ROOT)) invalid.push(`${e.detail.id}: ${p}`);

  // the history at the end: what every consumer holds now
  const { readIntervals } = await import('../../../cli/history.js');
  const { allocationsAt } = await import('../../../functions/core/feed/history.js');
  const now = Date.now() + 1;
  const held = allocationsAt(await readIntervals({}, now + 1), now);
  const historyWrong: string[] = [];
  const consumers = items.filter((it) => String(it.pk).startsWith('CONS#') && it.sk === 'CONS');
  for (const c of consumers) {
    const h = held.get(String(c.uuid));
    if (canon(h?.allocations ?? null) !== canon(c.allocs) || h?.project !== c.project) historyWrong.push(String(c.uuid));
  }
  for (const u of held.keys()) if (!consumers.some((c) => c.uuid === u)) historyWrong.push(`${u} (gone, history still holds it)`);

  return {
    table,
    committed: committed.size,
    events: events.length,
    missing: [...committed].filter((id) => !seen.has(id)),
    extra: [...seen.keys()].filter((id) => !committed.has(id)),
    duplicates: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
    unnamed,
    invalid,
    outOfOrder: orderProblems(events),
    historyWrong,
  };
}

/** JSON with every object's keys sorted (DynamoDB keeps no key order) */
export function canon(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}

/** a report with every list empty: what every run must give */
export function clean(r: FeedReport) {
  return { ...r, committed: r.committed > 0, events: r.events === r.committed };
}
