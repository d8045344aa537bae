/**
 * The warm provider snapshot every process keeps (see docs/consistency.md, "Reading at
 * scale"). First use loads the forest image (or every provider through gsi1); after that
 * each refresh reads only the change log since the previous refresh (minus an overlap
 * window) with strongly consistent queries, adds the usage changes entries carry to the
 * providers it holds, and re-reads just the providers entries name. Which route a
 * refresh takes is core/placement/refresh-plan.ts's choice, one refresh is
 * snapshot-refresh.ts, the steps that load and patch the forest are in snapshot-load.ts.
 * This module runs refreshes one at a time
 * (fresh()) and writes images of the forest (writeImage()). A warm forest's periodic
 * reload loads a newer image beside it while it keeps answering, and takes its place when
 * ready; it reads the whole index only when there is no image (planReload).
 *
 * Consistency: `fresh()` returns a forest that includes every write that had
 * committed when `fresh()` was called (a refresh that *started* after the call is
 * awaited), so a client always sees its own writes. SNAPSHOT_MAX_STALENESS_MS > 0
 * trades that for fewer reads. Answers built from it are advisory: claims re-check
 * everything atomically in DynamoDB.
 */
import type { Forest } from '../../core/placement/forest.js';
import type { ProviderRecord } from '../../core/placement/model.js';
import {
  catchUpCosts,
  LONG_GAP_MS,
  planLoad,
  planReload,
  RELOAD_RETRY_MS,
  type ImageWindow,
  type LoadRoute,
  type RefreshSettings,
  type SnapshotView,
} from '../../core/placement/refresh-plan.js';
import { config } from '../../config.js';
import { perTable } from '../ddb/per-table.js';
import { asBase, BASE_MAX_AGE_MS, readManifest, writeImage, type ImageManifest } from './image.js';
import { clockSkewMs, entryTime, overlapMs } from './changelog.js';
import { ForestLoader } from './snapshot-load.js';
import { refreshForest } from './snapshot-refresh.js';
import { asSnapshotWork, type SnapshotStats, type Timed } from './snapshot-stats.js';

export type { RefreshParts, SnapshotStats } from './snapshot-stats.js';

export interface SnapshotOptions {
  /**
   * Start from the stored forest image when loading (cold start, periodic resync, a
   * catch-up too large to re-read provider by provider). The image writer's own
   * snapshot loads through the index instead: images are made from it.
   */
  useImage: boolean;
  /** a refresh this long after the previous one first looks at the image's manifest (default 20 s) */
  longGapMs?: number;
}

/** an image is written as a delta while at most this share of the forest differs from its base */
const DELTA_MAX_SHARE = 0.25;

/** a step's time, not kept (a reload beside the forest) */
const untimed: Timed = (_part, work) => work;

export class ProviderSnapshot {
  /** the forest and what this snapshot knows of it (replaced by a reload's, when one is ready) */
  private f = new ForestLoader();
  /** a reload loading beside the forest: the forest it built once it is ready, and until when no other starts */
  private reloaded: ForestLoader | undefined;
  private reloadPendingUntil = 0;
  /** moves when a reload under way must not be taken (reset, absorb) */
  private reloadEpoch = 0;
  private ticket = 0;
  private inflight: Promise<void> | undefined;
  private inflightTicket = 0;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(readonly options: SnapshotOptions = { useImage: true }) {}

  /** the forest as of the last refresh (fresh() brings it up to date) */
  get forest(): Forest {
    return this.f.forest;
  }

  get stats(): SnapshotStats {
    return this.f.stats;
  }

  /** every write committed before this instant is in the forest (the start of the last refresh) */
  get asOf(): number {
    return this.f.lastStart;
  }

  /** change-log entries of the overlap window before asOf that this forest already holds (for an image) */
  appliedRecently(): string[] {
    const from = this.f.lastStart - overlapMs();
    return [...this.f.seen].filter(([, ts]) => ts >= from).map(([sk]) => sk);
  }

  /** providers held as read in the overlap window before asOf, and their `last` (for an image: ForestImage.lasts) */
  lastsRecently(): Record<string, string> {
    const from = this.f.lastStart - overlapMs();
    const out: Record<string, string> = {};
    for (const [u, l] of this.f.lasts) if (entryTime(l) >= from) out[u] = l;
    return out;
  }

  /** when the forest last came from a full read of the index (its own, or the image writer's) */
  get indexLoadedAt(): number {
    return this.f.lastFullLoad;
  }

  /** A forest containing every write committed before this call. */
  async fresh(maxStalenessMs = config().snapshotMaxStalenessMs): Promise<Forest> {
    if (this.f.loaded && maxStalenessMs > 0 && Date.now() - this.f.lastStart <= maxStalenessMs) return this.forest;
    const arrival = ++this.ticket;
    for (;;) {
      if (this.inflight && this.inflightTicket > arrival) {
        await this.inflight;
        return this.forest;
      }
      if (this.inflight) {
        await this.inflight.catch(() => undefined);
        continue;
      }
      this.inflightTicket = ++this.ticket;
      const p = this.refresh().finally(() => {
        if (this.inflight === p) this.inflight = undefined;
      });
      this.inflight = p;
      await p;
      return this.forest;
    }
  }

  /** Forget everything, as a new process would start (tests, or after a table reset). */
  reset(): void {
    this.dropReload();
    this.f.reset();
  }

  private dropReload(): void {
    this.reloadEpoch++;
    this.reloaded = undefined;
    this.reloadPendingUntil = 0;
  }

  /**
   * Records this process wrote itself, with the change-log entries that name them (the
   * bulk loader): put them in the forest and count those entries as applied, so the next
   * refresh re-reads only what others changed. A load of a million providers outlasts
   * the periodic resync (SNAPSHOT_RESYNC_S): the refreshes that end it (the image it
   * writes) do not first re-read every provider through the index — that safety net
   * waits ten minutes more.
   */
  absorb(records: ProviderRecord[], logEntries: Array<{ sk: string; ts: number }>): void {
    this.dropReload();
    for (const r of records) this.f.put(r);
    for (const e of logEntries) this.f.seen.set(e.sk, e.ts);
    this.f.resyncDeferredUntil = Date.now() + 600_000;
  }

  /**
   * Store an image of this forest (callers refresh it first): a delta of its base while
   * at most DELTA_MAX_SHARE of it differs from the base and the base is recent enough to
   * name, else a full image, which becomes the base. One write at a time.
   */
  writeImage(): Promise<{ manifest: ImageManifest; written: boolean }> {
    const run = this.writing.then(() => this.writeImageNow());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async writeImageNow(): Promise<{ manifest: ImageManifest; written: boolean }> {
    const f = this.f;
    const forest = f.forest;
    const base = f.base;
    if (base && Date.now() - base.writtenAt < BASE_MAX_AGE_MS && f.dirty.size <= forest.size * DELTA_MAX_SHARE) {
      // (encoded before writeImage's first await: the forest and `dirty` as of now)
      return writeImage(forest, this.asOf, f.lastFullLoad, this.appliedRecently(), { base, changed: f.dirty }, this.lastsRecently());
    }
    const epoch = f.baseEpoch;
    const since = new Set<string>();
    f.changedSinceEncode = since;
    try {
      const r = await writeImage(forest, this.asOf, f.lastFullLoad, this.appliedRecently(), undefined, this.lastsRecently());
      // the forest now differs from the image it wrote by what changed since it was encoded
      if (r.written && !r.manifest.base && f.baseEpoch === epoch && f.forest === forest) f.setBase(asBase(r.manifest), since);
      return r;
    } finally {
      f.changedSinceEncode = undefined;
    }
  }

  /** what a catch-up would cost, ms: re-reading one changed provider, and loading an image of `providers` */
  catchUpCosts(providers = this.forest.size): { rereadMsPerProvider: number; imageMs: number } {
    return catchUpCosts(this.f.measured, providers);
  }

  /** what the refresh plan needs of this snapshot, as of now */
  private view(): SnapshotView {
    const { loaded, lastStart, lastFullLoad, resyncDeferredUntil } = this.f;
    return {
      loaded,
      lastStart,
      lastFullLoad,
      resyncDeferredUntil,
      providers: this.forest.size,
      useImage: this.options.useImage,
      reloadPendingUntil: this.reloadPendingUntil,
    };
  }

  /**
   * A warm forest's resync, with images (planReload): read the manifest; load a newer
   * image beside the forest, or wait for one, or (no image) read the index inline.
   */
  private async planResync(settings: RefreshSettings): Promise<'index' | 'beside' | 'wait'> {
    const m = await readManifest();
    const r = planReload(m, this.view(), Date.now(), settings);
    if (r.route === 'beside' && m) this.reloadBeside(m, r.usable, settings);
    else if (r.route === 'wait') this.reloadPendingUntil = Date.now() + RELOAD_RETRY_MS;
    return r.route;
  }

  /**
   * Load image `m` into a forest of its own and replay the change log since it, while this
   * forest goes on answering (and following the log); the next refresh after it is ready
   * takes it (takeReload). The new forest is exactly what a cold start at the moment its
   * replay began would hold, so the argument of a cold start carries over. Two forests are
   * in the heap meanwhile (~0.75 GB at a million providers); decoding the image still
   * takes the event loop for its parse (~0.5 s at a million, ~50 ms at 100,000).
   */
  private reloadBeside(m: ImageManifest, usable: ImageWindow, settings: RefreshSettings): void {
    const epoch = this.reloadEpoch;
    const next = new ForestLoader({ stats: this.f.stats, measured: this.f.measured });
    this.reloadPendingUntil = Number.POSITIVE_INFINITY;
    const load = async () => {
      const at = await next.loadImage(usable, m);
      if (at === undefined) throw new Error('the image could not be read');
      const since = at - settings.overlapMs;
      const replayStart = Date.now();
      await next.applyLog(await next.changesSince(since), since, untimed);
      next.loaded = true;
      next.lastStart = replayStart;
      return next;
    };
    asSnapshotWork('resync', load).then(
      (ready) => {
        if (this.reloadEpoch === epoch) this.reloaded = ready;
      },
      () => {
        // (a chunk expired, a read failed: the forest stays, and a reload is tried again later)
        if (this.reloadEpoch === epoch) this.reloadPendingUntil = Date.now() + RELOAD_RETRY_MS;
      },
    );
  }

  /** a reload that is ready takes the forest's place (at the start of a refresh: none is running) */
  private takeReload(): void {
    const next = this.reloaded;
    if (!next) return;
    this.reloaded = undefined;
    this.reloadPendingUntil = 0;
    next.resyncDeferredUntil = Math.max(next.resyncDeferredUntil, this.f.resyncDeferredUntil);
    next.stats.resyncs++;
    this.f = next;
  }

  /**
   * Bring the forest up to date: the route is refresh-plan.ts's (planLoad, planLongGap
   * and planJump, planCatchUp), the steps are snapshot-load.ts's.
   */
  private async refresh(): Promise<void> {
    const started = Date.now();
    const settings: RefreshSettings = {
      resyncMs: config().snapshotResyncS * 1000,
      longGapMs: this.options.longGapMs ?? LONG_GAP_MS,
      overlapMs: overlapMs(),
      skewMs: clockSkewMs(),
    };
    this.takeReload();
    let load = planLoad(this.view(), started, settings);
    if (load.route === 'image' && load.reason === 'resync') {
      // a warm forest reloads beside itself, or waits for an image: requests go on (planReload)
      const r = await asSnapshotWork('resync', () => this.planResync(settings));
      load = r === 'index' ? { route: 'index', reason: 'resync' } : { route: 'keep', reason: 'reload pending' };
    }
    // a whole load's calls are work between requests, not the request's own (snapshotWork)
    if (load.route === 'keep') return this.refreshNow(started, settings, load);
    const whole = load;
    return asSnapshotWork(load.reason === 'cold start' ? 'cold' : 'resync', () => this.refreshNow(started, settings, whole));
  }

  private refreshNow(started: number, settings: RefreshSettings, load: LoadRoute): Promise<void> {
    return refreshForest(this.f, () => this.view(), started, settings, load);
  }
}

/** The process's snapshot of the table it talks to (one per Lambda container, one per local server; a new table starts a new one). */
export const snapshot = perTable(() => new ProviderSnapshot({ useImage: config().snapshotImage }));

/**
 * The snapshot images are made from (the maintenance function's): it loads and resyncs
 * through the index, never from an image, so each image carries a fresh full read.
 */
export const imageSourceSnapshot = perTable(() => new ProviderSnapshot({ useImage: false }));

/**
 * Start loading the snapshot while the Lambda initialises (SNAPSHOT_PREWARM, set by cdk/
 * on the functions that hold the forest): an on-demand init phase runs with full CPU
 * for up to 10 s, before any request waits. Waits at most `budgetMs` (init must end
 * well inside those 10 s or Lambda starts it again); a longer load carries on and the
 * first request awaits the rest. Errors are left to that request.
 */
export async function prewarm(budgetMs = 8000): Promise<void> {
  if (!config().snapshotPrewarm) return;
  const load = snapshot()
    .fresh()
    .then(() => undefined)
    .catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([load, new Promise<void>((r) => (timer = setTimeout(r, budgetMs)))]);
  clearTimeout(timer);
}
