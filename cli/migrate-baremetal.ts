/**
 * `npx berth migrate-baremetal [--settle S]`: switch a deployment's bare metal to the
 * placement scheduler (BAREMETAL_SCHEDULER=placement) at once, instead of waiting for
 * the maintenance function's task `baremetal-placement` to do it a batch per minute.
 * Every node gets its resource provider and every active allocation its Placement
 * consumer (store/baremetal/placement-migration.ts). Resumable and idempotent: run it
 * again after an interruption; nodes already in agreement are only read.
 *
 * A pass completes the migration only if it began --settle seconds after the switch was
 * first recorded (default 120 against AWS — Lambda containers of the old configuration
 * finish their requests first — and 0 against DynamoDB Local); this command waits for
 * that and runs the completing pass itself.
 */
import { commandLine, plainErrors } from '../scripts/args.js';

export async function migrateBaremetalCommand(argv: string[]): Promise<number> {
  const settle = commandLine(
    argv,
    { settle: { type: 'string' } },
    { ...plainErrors(), missing: () => new Error('--settle needs a number of seconds') },
  ).values.settle;
  if (settle !== undefined) {
    const v = Number(settle);
    if (!Number.isFinite(v) || v < 0) throw new Error('--settle needs a number of seconds');
    process.env.BAREMETAL_MIGRATION_SETTLE_S = String(v);
  } else process.env.BAREMETAL_MIGRATION_SETTLE_S ??= process.env.DDB_ENDPOINT ? '0' : '120';
  process.env.BAREMETAL_SCHEDULER = 'placement';
  const { resetConfig } = await import('../functions/config.js');
  resetConfig();
  const { migrateNodesToPlacement, settleMs } = await import('../functions/bridge/migration.js');
  const { readSchedulerState } = await import('../functions/store/baremetal/scheduler-state.js');
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const t0 = Date.now();
  out(`[migrate-baremetal] table ${process.env.TABLE_NAME ?? 'berth'}${process.env.DDB_ENDPOINT ? ` at ${process.env.DDB_ENDPOINT}` : ''}`);
  let last = 0;
  for (let pass = 1; ; pass++) {
    const r = await migrateNodesToPlacement({
      deadline: Number.POSITIVE_INFINITY,
      onNode: (done, total) => {
        if (done === total || Date.now() - last > 1000) {
          last = Date.now();
          out(`[migrate-baremetal] pass ${pass}: ${done}/${total} nodes`);
        }
      },
    });
    if (r.conflicts.length) {
      out(
        `[migrate-baremetal] ${r.conflicts.length} node(s) hold a bare-metal allocation while another Placement consumer holds their provider (left as they are): ${r.conflicts.join(', ')}`,
      );
    }
    if (r.complete) {
      const s = await readSchedulerState();
      out(
        `[migrate-baremetal] done in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${r.synced} node(s) brought into agreement by this run, ${s.synced ?? 0} in all runs; allocations now take their candidates from the provider forest`,
      );
      return 0;
    }
    const s = await readSchedulerState();
    const wait = (s.switchedAt ?? 0) + settleMs() - Date.now();
    out(
      `[migrate-baremetal] pass ${pass}: ${r.synced} node(s) synced; ${wait > 0 ? `waiting ${Math.ceil(wait / 1000)} s for the switch to settle, then one more pass` : 'one more pass'}`,
    );
    if (wait > 0) await new Promise((res) => setTimeout(res, wait + 50));
  }
}
