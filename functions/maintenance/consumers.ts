/**
 * The incomplete-consumer online migration (seed 000; upstream's
 * objects/consumer.py create_incomplete_consumers): every allocation row without a
 * consumer record gets one, owned by the configured "incomplete consumer" project and
 * user (config.incompleteConsumerProjectId / UserId), generation 0, no type.
 *
 * Such rows only come from imported legacy data (store/placement/allocations.ts
 * importLegacyAllocations); they sit in a sparse index (gsi2 `LEGACYALLOC#<shard>`)
 * until migrated, so a batch reads only what is left to do: O(legacy rows), never a
 * table scan. Each consumer is migrated by ONE transaction (Put CONS if absent, its
 * rows lose the legacy mark, the project/user usage aggregates count it), so a batch
 * can stop anywhere and run again: idempotent and resumable by construction. Progress
 * (totals, batches, last run) is kept in the META item `consumer-migration`; when a
 * pass finds nothing left and no import began meanwhile, the legacy flag is lowered
 * and later runs cost one read.
 *
 * Runs from the scheduled maintenance function (functions/maintenance/tasks.ts) and
 * from `npm run migrate-consumers` (cli/migrate-consumers.ts).
 */
import { config } from '../config.js';
import type { ConsumerRecord } from '../core/placement/consumers.js';
import { endLegacyImport, getConsumer, legacyRowsOf, readLegacyFlag } from '../store/placement/consumers.js';
import {
  createConsumerFromLegacyRows,
  pendingLegacyConsumers as pendingConsumers,
  readMigrationProgress as readProgress,
  recordMigrationProgress as recordProgress,
  type MigrationProgress,
} from '../store/placement/migration.js';

export { readProgress, type MigrationProgress };

export interface MigrationReport {
  /** consumers migrated by this run */
  created: number;
  /** consumers found in this run's batches */
  seen: number;
  /** consumers left for a later batch (a concurrent write, or the deadline) */
  retry: number;
  /** consumers whose legacy rows sit next to a consumer record (cannot happen through the API; left alone) */
  conflicts: number;
  batches: number;
  /** nothing left to migrate */
  done: boolean;
  progress: MigrationProgress;
}

type Outcome = 'created' | 'retry' | 'conflict' | 'nothing';

/** Give one consumer its record, in one transaction. */
export async function migrateConsumer(consumer: string, providers: string[]): Promise<Outcome> {
  const [existing, rows] = await Promise.all([getConsumer(consumer), legacyRowsOf(consumer, providers)]);
  if (!rows.length) return 'nothing'; // already migrated (the index lags) or replaced by a claim
  if (existing) return 'conflict';
  const now = new Date().toISOString();
  const cfg = config();
  const record: ConsumerRecord = {
    uuid: consumer,
    project: cfg.incompleteConsumerProjectId,
    user: cfg.incompleteConsumerUserId,
    type: null,
    generation: 0,
    allocations: Object.fromEntries(rows.map((r) => [r.provider, r.resources])),
    createdAt: now,
    updatedAt: now,
  };
  return (await createConsumerFromLegacyRows(record, rows)) ? 'created' : 'retry';
}

/**
 * Run batches of `batchSize` consumers until nothing is left or `deadline` passes (at
 * least one batch).
 * Cheap when there is nothing to do (one read of the legacy flag), unless `force`.
 */
export async function migrateIncompleteConsumers(
  opts: { batchSize?: number; deadline?: number; force?: boolean; concurrency?: number; onBatch?: (r: MigrationReport) => void } = {},
): Promise<MigrationReport> {
  const batchSize = opts.batchSize ?? 100;
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  const report: MigrationReport = { created: 0, seen: 0, retry: 0, conflicts: 0, batches: 0, done: false, progress: { created: 0, batches: 0 } };
  const flag = await readLegacyFlag();
  if (!flag.pending && !opts.force) {
    report.done = true;
    report.progress = await readProgress();
    return report;
  }
  // at least one batch per run, more while time is left
  for (let first = true; first || Date.now() < deadline; first = false) {
    const pending = await pendingConsumers(batchSize);
    if (!pending.size) {
      report.done = true;
      break;
    }
    const outcomes: Outcome[] = [];
    const queue = [...pending];
    const workers = Array.from({ length: Math.min(opts.concurrency ?? 8, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) outcomes.push(await migrateConsumer(next[0], next[1]));
    });
    await Promise.all(workers);
    const created = outcomes.filter((o) => o === 'created').length;
    report.batches++;
    report.seen += pending.size;
    report.created += created;
    report.retry += outcomes.filter((o) => o === 'retry').length;
    report.conflicts += outcomes.filter((o) => o === 'conflict').length;
    await recordProgress(created, 1, false);
    opts.onBatch?.({ ...report, progress: await readProgress() });
    // no progress possible now (only conflicts, or index entries not yet gone): next run
    if (created === 0 && !outcomes.includes('retry')) break;
  }
  if (report.done && (await endLegacyImport(flag.epoch))) await recordProgress(0, 0, true);
  report.progress = await readProgress();
  return report;
}
