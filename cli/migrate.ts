/**
 * `npx berth migrate [--status]`: the table's layout migration (docs/items.md, "Layout
 * versions and upgrades") at once, instead of a batch per maintenance run. A table
 * waiting at the previous layout is opened first — run it only once no function of the
 * previous release serves the table any more (after the deploy; `cdk deploy` opens it
 * itself when it finishes). Resumable and idempotent: run it again after an interruption.
 * `--status` prints where the table is and changes nothing.
 */
import { commandLine, plainErrors } from '../scripts/args.js';
import { progressBar } from './progress.js';

export async function migrateCommand(argv: string[]): Promise<number> {
  const status = commandLine(argv, { status: { type: 'boolean' } }, plainErrors()).values.status === true;
  const { ensureLayout, readLayoutRecord } = await import('../functions/store/layout/state.js');
  const { migrateLayout, openMigration } = await import('../functions/store/layout/migrate.js');
  const { fractionOf } = await import('../functions/store/layout/state.js');
  const { LAYOUT, verdict } = await import('../functions/core/layout.js');
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const rec = await ensureLayout();
  const say = (r: typeof rec) =>
    `layout ${r.version}${r.phase === 'complete' ? '' : ` -> ${r.target ?? LAYOUT}`}, ${r.phase}${r.progress ? ` (${JSON.stringify(r.progress)})` : ''}`;
  out(`[berth migrate] table ${process.env.TABLE_NAME ?? 'berth'}: ${say(rec)}; this release writes layout ${LAYOUT}`);
  if (status) return 0;
  const v = verdict(rec);
  if (!v.serve && v.permanent) {
    out(`[berth migrate] ${v.message}`);
    return 1;
  }
  if (rec.phase === 'complete' && rec.version === LAYOUT) {
    out('[berth migrate] nothing to do');
    return 0;
  }
  if (rec.phase === 'waiting') {
    await openMigration('cli');
    out('[berth migrate] migration opened (no function of the previous release may serve this table any more)');
  }
  const bar = progressBar('[berth migrate]');
  for (;;) {
    const now = await readLayoutRecord();
    const wait = (now?.settleUntil ?? 0) - Date.now();
    if (now?.phase === 'preparing' && wait > 0) {
      out(`[berth migrate] waiting ${Math.ceil(wait / 1000)} s for the previous release's last requests (LAYOUT_SETTLE_S)`);
      await new Promise((r) => setTimeout(r, wait + 50));
    }
    const r = await migrateLayout({ deadline: Date.now() + 5_000 });
    const after = (await readLayoutRecord())!;
    bar.update(Math.round(fractionOf(after) * 1000), 1000);
    if (r.done) {
      bar.finish(JSON.stringify(after.progress ?? {}));
      out(`[berth migrate] table ${process.env.TABLE_NAME ?? 'berth'}: ${say(after)}`);
      return 0;
    }
  }
}
