/**
 * `npm start` and a table written by an earlier release (docs/items.md, "Layout versions
 * and upgrades"). Locally no function of that release serves the table, so its layout
 * migration opens at once and runs in the background while the APIs serve it, as the
 * maintenance function runs it in AWS after a deploy. A table of a layout this release
 * cannot serve stops the start with the reason.
 */
export interface LayoutRun {
  /** resolves when the table holds this release's layout */
  done: Promise<void>;
  stop(): void;
}

export async function startLayoutMigration(opts: { background: boolean; say?: (line: string) => void }): Promise<LayoutRun | undefined> {
  const { ensureLayout, fractionOf, readLayoutRecord } = await import('../functions/store/layout/state.js');
  const { migrateLayout, openMigration } = await import('../functions/store/layout/migrate.js');
  const { LAYOUT, verdict } = await import('../functions/core/layout.js');
  const say = opts.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const rec = await ensureLayout();
  const v = verdict(rec);
  if (!v.serve && v.permanent) throw new Error(v.message);
  if (rec.phase === 'complete' && rec.version === LAYOUT) return undefined;
  if (!opts.background) return undefined;
  if (rec.phase === 'waiting') await openMigration('local');
  say(`[berth] table holds item layout ${rec.version}: migrating to layout ${LAYOUT} while serving (npx berth migrate --status)`);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastSaid = 0;
  const done = new Promise<void>((resolve) => {
    const step = async () => {
      if (stopped) return resolve();
      try {
        const r = await migrateLayout({ deadline: Date.now() + 2_000 });
        const now = await readLayoutRecord();
        if (r.done) {
          say(`[berth] table layout ${LAYOUT}: migration complete (${JSON.stringify(now?.progress ?? {})})`);
          return resolve();
        }
        if (now && Date.now() - lastSaid > 5_000) {
          lastSaid = Date.now();
          say(`[berth] table layout ${rec.version} -> ${LAYOUT}: ${now.phase} ${(fractionOf(now) * 100).toFixed(0)} %`);
        }
      } catch (e) {
        say(`[berth] layout migration batch failed (retried): ${(e as Error).message}`);
      }
      timer = setTimeout(() => void step(), 100);
      timer.unref();
    };
    void step();
  });
  return {
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
