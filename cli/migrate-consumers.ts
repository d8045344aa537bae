/**
 * `npm run migrate-consumers [-- --batch-size N] [--force]`
 * Runs the incomplete-consumer online migration (functions/maintenance/consumers.ts)
 * to completion against the table the environment names (TABLE_NAME, DDB_ENDPOINT for
 * DynamoDB Local, AWS_REGION / credentials for AWS), printing progress per batch. Safe
 * to interrupt and run again: every consumer is migrated by one transaction and the
 * work left is what the legacy index still holds. --force runs a pass even when the
 * legacy flag says no import is pending.
 */
import { fileURLToPath } from 'node:url';
import { migrateIncompleteConsumers } from '../functions/maintenance/consumers.js';
import { commandLine, plainErrors } from '../scripts/args.js';

/** Also `berth migrate-consumers` (cli/berth.ts); returns the exit code. */
export async function migrateConsumersCommand(argv: string[]): Promise<number> {
  const { values } = commandLine(argv, { 'batch-size': { type: 'string' }, force: { type: 'boolean' } }, plainErrors());
  const batchSize = Number(values['batch-size'] ?? 100);
  const force = values.force === true;
  const t0 = Date.now();
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(
    `[migrate-consumers] table ${process.env.TABLE_NAME ?? 'berth'}${process.env.DDB_ENDPOINT ? ` at ${process.env.DDB_ENDPOINT}` : ''}, batches of ${batchSize}`,
  );
  const r = await migrateIncompleteConsumers({
    batchSize,
    force,
    onBatch: (b) =>
      out(
        `[migrate-consumers] batch ${b.batches}: ${b.created} created this run (${b.seen} seen, ${b.retry} to retry, ${b.conflicts} conflicts); ${b.progress.created} created in all runs`,
      ),
  });
  out(
    `[migrate-consumers] ${r.done ? 'done' : 'stopped before the end (run again)'}: ${r.created} consumer records created in ${r.batches} batch(es), ${((Date.now() - t0) / 1000).toFixed(1)} s; ${r.progress.created} in all runs${r.progress.completedAt ? `, completed ${r.progress.completedAt}` : ''}`,
  );
  if (r.conflicts) out(`[migrate-consumers] ${r.conflicts} consumer(s) have legacy rows next to a consumer record: left alone, inspect them`);
  return r.done ? 0 : 2;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  migrateConsumersCommand(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e) => {
      process.stderr.write(`[migrate-consumers] failed: ${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
}
