/**
 * The allocation history's items (docs/items.md, "Items (Placement)"; docs/consistency.md, "The allocation history"),
 * written by the stream processor (functions/feed/) and read by `npx berth history`:
 *
 *   HIST#<consumer>   / <opening change id>              an interval (core/feed/history.ts)
 *   HISTP#<project>   / <opening change id>#<consumer>    the same interval, by project
 *   HISTR#<provider>  / <opening change id>#<consumer>    its resources on that provider
 *   HISTPROJECTS      / <project>                         every project the history has seen
 *   META              / history                           the watermark: changes applied up to `through`
 *
 * Attributes: consumer, project, user, ctype, gen, allocs (res on a provider's copy), from,
 * and once closed by, to and ttl (to + HISTORY_RETENTION_DAYS): a closed interval expires,
 * an open one lasts. Change ids start with the time (µs), so a time range is a sort-key range.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../core/feed/change.js';
import { historyWrites, type Interval, type IntervalWrite } from '../../core/feed/history.js';
import { config } from '../../config.js';
import { tableName, type Item } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { queryPartition } from '../ddb/query.js';
import { keyFits } from '../ddb/keys.js';
import { perTable } from '../ddb/per-table.js';
import { backoffMs, retryTransient, sleep } from '../ddb/retry.js';

export const HK = {
  interval: (consumer: string, id: string) => ({ pk: `HIST#${consumer}`, sk: id }),
  intervalPk: (consumer: string) => `HIST#${consumer}`,
  byProject: (project: string, id: string, consumer: string) => ({ pk: `HISTP#${project}`, sk: `${id}#${consumer}` }),
  byProjectPk: (project: string) => `HISTP#${project}`,
  byProvider: (provider: string, id: string, consumer: string) => ({ pk: `HISTR#${provider}`, sk: `${id}#${consumer}` }),
  byProviderPk: (provider: string) => `HISTR#${provider}`,
  project: (project: string) => ({ pk: 'HISTPROJECTS', sk: project }),
  projectsPk: 'HISTPROJECTS',
  watermark: { pk: 'META', sk: 'history' },
};

/** the sort-key bound of instant `ms`: ids begin with 16 digits of µs */
export const idAt = (ms: number) => String(Math.max(0, Math.floor(ms)) * 1000).padStart(16, '0');

const retentionS = () => Math.round(config().feed.historyRetentionDays * 86_400);

function attrs(i: Interval): Record<string, unknown> {
  return {
    consumer: i.consumer,
    id: i.id,
    from: i.from,
    project: i.project,
    user: i.user,
    ...(i.type !== null ? { ctype: i.type } : {}),
    gen: i.generation,
    ...(i.by !== undefined ? { by: i.by, to: i.to, ttl: Math.floor(i.to! / 1000) + retentionS() } : {}),
  };
}

/** the items of one interval write: the interval, its project's copy, each provider's copy */
function itemsOf(i: Interval): Record<string, unknown>[] {
  const a = attrs(i);
  return [
    { ...HK.interval(i.consumer, i.id), ...a, allocs: i.allocations },
    { ...HK.byProject(i.project, i.id, i.consumer), ...a, allocs: i.allocations },
    ...Object.entries(i.allocations).map(([rp, res]) => ({ ...HK.byProvider(rp, i.id, i.consumer), ...a, rp, res })),
  ];
}

/** tries of one history write: it is idempotent, so a write DynamoDB refused for a moment is simply sent again */
const WRITE_TRIES = 8;

async function put(item: Record<string, unknown>, ifAbsent: boolean): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ddb().send(
        new PutCommand({ TableName: tableName(), Item: item, ...(ifAbsent ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}) }),
      );
      return;
    } catch (e) {
      // an open whose interval is there already (closed by a later change, or this one applied before): nothing to do
      if ((e as Error).name === 'ConditionalCheckFailedException') {
        if (ifAbsent) return;
        throw e;
      }
      // throttled, a conflict, a 5xx or a lost answer after the SDK's own retries: again, then give the record back
      if (attempt + 1 >= WRITE_TRIES) throw e;
      await sleep(backoffMs(attempt, 20, 1000));
    }
  }
}

async function write(w: IntervalWrite): Promise<void> {
  await Promise.all(itemsOf(w.interval).map((it) => put(it, w.ifAbsent)));
}

/** the latest interval of a consumer (its open one, if any) */
async function latestInterval(consumer: string): Promise<Interval | undefined> {
  if (!keyFits({ pk: HK.intervalPk(consumer) })) return undefined;
  const r = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :p',
      ExpressionAttributeValues: { ':p': HK.intervalPk(consumer) },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
    }),
  );
  return r.Items?.[0] ? intervalFromItem(r.Items[0]) : undefined;
}

/** projects this process has recorded in HISTPROJECTS already (per table: tests and the local runtime switch tables) */
const seenProjects = perTable(() => new Set<string>());

/**
 * Apply one change to the history (idempotent, in any order: core/feed/history.ts). A
 * consumer whose before-state predates the history gets whatever interval of it is open
 * closed at this change.
 */
export async function applyToHistory(c: Change): Promise<number> {
  const { writes, unknownPrev } = historyWrites(c);
  for (const u of unknownPrev) {
    const open = await latestInterval(u.consumer);
    if (open && open.by === undefined && open.id < c.id) writes.push({ interval: { ...open, by: c.id, to: c.at }, ifAbsent: false });
  }
  await Promise.all(writes.map(write));
  const seen = seenProjects();
  const projects = [...new Set(writes.map((w) => w.interval.project))].filter((p) => !seen.has(p));
  await Promise.all(projects.map((p) => put({ ...HK.project(p), first: c.at }, true)));
  for (const p of projects) seen.add(p);
  return writes.reduce((n, w) => n + 2 + Object.keys(w.interval.allocations).length, 0);
}

/** Every change up to `id` is in the history (moves forward only). */
export async function advanceWatermark(id: string): Promise<void> {
  try {
    // a conditional SET whose failed condition means "moved already": safe to send again
    await retryTransient(() =>
      ddb().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: HK.watermark,
          UpdateExpression: 'SET #t = :id, #at = :now',
          ConditionExpression: 'attribute_not_exists(#t) OR #t < :id',
          ExpressionAttributeNames: { '#t': 'through', '#at': 'at' },
          ExpressionAttributeValues: { ':id': id, ':now': Date.now() },
        }),
      ),
    );
  } catch (e) {
    if ((e as Error).name !== 'ConditionalCheckFailedException') throw e;
  }
}

export async function readWatermark(): Promise<string | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: HK.watermark, ConsistentRead: true }));
  return r.Item?.through as string | undefined;
}

export function intervalFromItem(it: Item): Interval {
  const allocs = (it.allocs as Interval['allocations'] | undefined) ?? (it.rp ? { [String(it.rp)]: it.res } : {});
  return {
    consumer: String(it.consumer),
    id: String(it.id),
    from: Number(it.from),
    ...(it.by !== undefined ? { by: String(it.by), to: Number(it.to) } : {}),
    project: String(it.project),
    user: String(it.user),
    type: (it.ctype as string | undefined) ?? null,
    generation: Number(it.gen),
    allocations: allocs,
  };
}

/** The intervals of one partition family that began before `until` (ms; the rest cannot overlap it). */
async function intervalsIn(pk: string, until: number): Promise<Interval[]> {
  if (!keyFits({ pk })) return [];
  const items = await queryPartition({ pk, skBetween: ['0', `${idAt(until)}~`], consistent: true });
  return items.map(intervalFromItem);
}

export const consumerIntervals = (consumer: string, until: number) => intervalsIn(HK.intervalPk(consumer), until);
export const projectIntervals = (project: string, until: number) => intervalsIn(HK.byProjectPk(project), until);
export const providerIntervals = (provider: string, until: number) => intervalsIn(HK.byProviderPk(provider), until);

/** every project the history has seen */
export async function historyProjects(): Promise<string[]> {
  return (await queryPartition({ pk: HK.projectsPk, consistent: true })).map((it) => String(it.sk));
}
