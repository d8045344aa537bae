/**
 * The warm provider snapshot every process keeps (see docs/design.md, "Reading at
 * scale"). First use loads the forest image (or every provider through gsi1); after that
 * each refresh reads only the change log since the previous refresh (minus an overlap
 * window) with strongly consistent queries, adds the usage changes entries carry to the
 * providers it holds, and re-reads just the providers entries name.
 *
 * Consistency: `fresh()` returns a forest that includes every write that had
 * committed when `fresh()` was called (a refresh that *started* after the call is
 * awaited), so a client always sees its own writes. SNAPSHOT_MAX_STALENESS_MS > 0
 * trades that for fewer reads. Answers built from it are advisory: claims re-check
 * everything atomically in DynamoDB.
 */
import { Forest } from '../../core/placement/forest.js';
import { ImageFormatError } from '../../core/placement/forest-image.js';
import { withProviderDelta, type ProviderRecord } from '../../core/placement/model.js';
import {
  catchUpCosts,
  imageUsable,
  LONG_GAP_MS,
  measureImage,
  measureReread,
  planCatchUp,
  planJump,
  planLoad,
  planLongGap,
  planPatch,
  readLogAgain,
  UNMEASURED,
  type ImageWindow,
  type Measured,
  type RefreshSettings,
  type SnapshotView,
} from '../../core/placement/refresh-plan.js';
import { config } from '../../config.js';
import { perTable } from '../ddb/per-table.js';
import {
  asBase,
  BASE_MAX_AGE_MS,
  readDelta,
  readImage,
  readImageSome,
  readManifest,
  writeImage,
  type ImageBase,
  type ImageManifest,
  type LoadedImage,
} from './image.js';
import { clockSkewMs, entryTime, overlapMs, readLogSince, type LogEntry } from './changelog.js';
import { readProviders, scanAllProviders, type ProviderRead } from './providers.js';

export interface SnapshotStats {
  refreshes: number;
  coldLoads: number;
  /** cold loads, resyncs and catch-ups answered from a forest image */
  imageLoads: number;
  /** of those, catch-ups that took only the changed providers from the image (patchFromImage) */
  imagePatches: number;
  /** of those, patches that read only a delta image's own chunks, not its base's */
  deltaPatches: number;
  resyncs: number;
  logQueries: number;
  logEntries: number;
  providerReads: number;
  lastRefreshMs: number;
  /** where the last refresh spent its time, ms: reading manifests, the change log, images (and putting what they gave), the index, changed providers */
  lastRefreshParts?: RefreshParts;
  /** the last full load or image catch-up: where from, how long it took, how many providers */
  lastLoad?: {
    source: 'image' | 'index';
    ms: number;
    providers: number;
    bytes?: number;
    takenAt?: number;
    /** an image's: ms reading, finishing decompression, parsing, building the forest (a patch: its records, then putting them) */
    timings?: LoadedImage['timings'];
  };
}

export interface RefreshParts {
  manifest: number;
  log: number;
  image: number;
  index: number;
  reread: number;
}

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

/** an image's content, or undefined when it is not in a format this release reads */
async function unlessForeign<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (e) {
    if (e instanceof ImageFormatError) return undefined;
    throw e;
  }
}

/** an image is written as a delta while at most this share of the forest differs from its base */
const DELTA_MAX_SHARE = 0.25;

export class ProviderSnapshot {
  forest = new Forest();
  private loaded = false;
  private lastStart = 0;
  private lastFullLoad = 0;
  /** no periodic resync before this instant (ms): see absorb() */
  private resyncDeferredUntil = 0;
  private readonly seen = new Map<string, number>();
  /**
   * providers this forest holds as read from the table in the overlap window, and the
   * `last` entry their state item held (changelog.ts stateGuard): a logged usage change of
   * one is added only when its entry is later — the read held the earlier ones
   */
  private readonly lasts = new Map<string, string>();
  private ticket = 0;
  private inflight: Promise<void> | undefined;
  private inflightTicket = 0;
  /** what re-reading a provider and loading an image cost here (refresh-plan.ts COSTS) */
  private readonly measured: Measured = { ...UNMEASURED };
  /**
   * The full image this forest is a known change of (docs/design.md, "Delta images"):
   * every provider not in `dirty` is exactly as `base` holds it (or absent from both).
   * Kept by every change to the forest; undefined when the forest came from the index.
   */
  private base: ImageBase | undefined;
  private dirty = new Set<string>();
  /** while a full image of this forest is being written: the providers changed since it was encoded */
  private changedSinceEncode: Set<string> | undefined;
  /** moves whenever `base` is set or dropped (an image write that began before does not set it) */
  private baseEpoch = 0;
  private writing: Promise<unknown> = Promise.resolve();
  stats: SnapshotStats = ProviderSnapshot.noStats();

  private static noStats(): SnapshotStats {
    return {
      refreshes: 0,
      coldLoads: 0,
      imageLoads: 0,
      imagePatches: 0,
      deltaPatches: 0,
      resyncs: 0,
      logQueries: 0,
      logEntries: 0,
      providerReads: 0,
      lastRefreshMs: 0,
    };
  }

  constructor(readonly options: SnapshotOptions = { useImage: true }) {}

  /** every write committed before this instant is in the forest (the start of the last refresh) */
  get asOf(): number {
    return this.lastStart;
  }

  /** change-log entries of the overlap window before asOf that this forest already holds (for an image) */
  appliedRecently(): string[] {
    const from = this.lastStart - overlapMs();
    return [...this.seen].filter(([, ts]) => ts >= from).map(([sk]) => sk);
  }

  /** providers held as read in the overlap window before asOf, and their `last` (for an image: ForestImage.lasts) */
  lastsRecently(): Record<string, string> {
    const from = this.lastStart - overlapMs();
    const out: Record<string, string> = {};
    for (const [u, l] of this.lasts) if (entryTime(l) >= from) out[u] = l;
    return out;
  }

  /** when the forest last came from a full read of the index (its own, or the image writer's) */
  get indexLoadedAt(): number {
    return this.lastFullLoad;
  }

  /** A forest containing every write committed before this call. */
  async fresh(maxStalenessMs = config().snapshotMaxStalenessMs): Promise<Forest> {
    if (this.loaded && maxStalenessMs > 0 && Date.now() - this.lastStart <= maxStalenessMs) return this.forest;
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
    this.forest = new Forest();
    this.stats = ProviderSnapshot.noStats();
    this.loaded = false;
    this.lastStart = 0;
    this.lastFullLoad = 0;
    this.resyncDeferredUntil = 0;
    this.seen.clear();
    this.lasts.clear();
    this.setBase(undefined);
  }

  /** this forest equals `base` except for the providers of `changed` */
  private setBase(base: ImageBase | undefined, changed: Iterable<string> = []): void {
    this.base = base;
    this.dirty = base ? new Set(changed) : new Set();
    this.baseEpoch++;
  }

  /** a provider of the forest may now differ from the base's */
  private touch(uuid: string): void {
    if (!this.base) return;
    this.dirty.add(uuid);
    this.changedSinceEncode?.add(uuid);
    // a reader that never writes images would otherwise collect every provider it re-reads
    if (this.dirty.size > 1000 && this.dirty.size > this.forest.size / 2 && !this.changedSinceEncode) this.setBase(undefined);
  }

  /** forest.put(), noting the provider when its record changed */
  private put(record: ProviderRecord): void {
    const v = this.forest.version;
    this.forest.put(record);
    if (this.forest.version !== v) this.touch(record.uuid);
  }

  private delete(uuid: string): void {
    if (!this.forest.get(uuid)) return;
    this.forest.delete(uuid);
    this.touch(uuid);
  }

  /** providers read from the table: each as read (with the `last` its state held), or gone when the read found none */
  private applyRead(uuids: Iterable<string>, read: ReadonlyMap<string, ProviderRead>): void {
    for (const u of uuids) {
      const p = read.get(u);
      if (p) this.putRead(p);
      else {
        this.delete(u);
        this.lasts.delete(u);
      }
    }
  }

  private putRead(p: ProviderRead): void {
    this.put(p.record);
    if (p.last !== undefined) this.lasts.set(p.record.uuid, p.last);
    else this.lasts.delete(p.record.uuid);
  }

  /**
   * The usage changes `entries` carry, added to the providers this forest holds — except
   * where the forest's copy already holds them: a provider read again in this refresh
   * (`reread`: its read came after every entry read here committed) or read with a `last`
   * at or after the entry.
   */
  private applyDeltas(entries: LogEntry[], reread: ReadonlySet<string>): void {
    for (const e of entries) {
      for (const [u, d] of e.deltas) {
        if (reread.has(u)) continue;
        const l = this.lasts.get(u);
        if (l !== undefined && l >= e.sk) continue;
        const p = this.forest.get(u);
        if (p) this.put(withProviderDelta(p, d));
      }
    }
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
    for (const r of records) this.put(r);
    for (const e of logEntries) this.seen.set(e.sk, e.ts);
    this.resyncDeferredUntil = Date.now() + 600_000;
  }

  /**
   * Replace the forest with the image `manifest` (or the current one) when `usable`
   * admits it. Returns the instant the image is complete as of (every write committed
   * before it is in); the caller replays the log from there.
   */
  private async loadImage(usable: ImageWindow, manifest?: ImageManifest): Promise<number | undefined> {
    const t0 = performance.now();
    const m = manifest ?? (await readManifest());
    if (!imageUsable(m, usable, Date.now())) return undefined;
    // the current forest stays until the new one is built: it answers meanwhile, stays
    // valid should the image fail, and keeps V8's old generation sized for a forest
    // (letting it go first made the heap shrink, then grow again by repeated full
    // collections while the new forest was built: a million-provider catch-up took 1 s
    // longer than a new process's load). Two forests are in the heap for a moment:
    // ~0.75 GB at a million providers.
    const img = await unlessForeign(readImage(m));
    if (!img) return undefined;
    this.forest = img.forest;
    this.setBase(m.base ?? asBase(m), img.deltaIds);
    this.measured.imageMs = measureImage(performance.now() - t0, m.providers);
    // the whole forest is now the image writer's, which read the index then
    this.lastFullLoad = Math.max(this.lastFullLoad, m.indexLoadAt);
    this.lasts.clear();
    return this.adopt(m, img, t0);
  }

  /**
   * Catch up through an image without building a new forest: the providers the change log
   * named since this forest's last refresh (`changed`, read from `logReadAt`) are taken
   * from the image as it holds them, or deleted when it does not; the others are the
   * same in the image as here (a write to one committed after this forest's last refresh
   * and before the log was read, so after the image was taken, would be in `changed`).
   * refresh-plan.ts planPatch says which image will do, and whether a delta is enough.
   * Returns the instant the forest is complete as of, like loadImage().
   */
  private async patchFromImage(m: ImageManifest | undefined, changed: ReadonlySet<string>, logReadAt: number): Promise<number | undefined> {
    const t0 = performance.now();
    const plan = planPatch(m, { lastStart: this.lastStart, logReadAt, now: Date.now(), baseId: this.base?.id }, { skewMs: clockSkewMs() });
    if (!m || plan.route === 'none') return undefined;
    if (plan.route === 'delta') return this.patchFromDelta(m, changed, t0);
    const img = await unlessForeign(readImageSome(m, changed, this.forest.intern));
    if (!img) return undefined;
    const p0 = performance.now();
    const held = new Set<string>();
    for (const r of img.records) held.add(r.uuid);
    for (const u of changed) if (!held.has(u)) this.forest.delete(u);
    // (a bulk load's providers are new here: indexed in bulk)
    this.forest.putMany(img.records);
    img.timings.put = performance.now() - p0;
    this.stats.imagePatches++;
    // the forest now holds what the image holds (the providers it did not take are the same
    // in both): a known change of its base. (Yet as this forest's own last index read left
    // them: a patch is no full load, and the periodic resync stays due.)
    this.setBase(m.base ?? asBase(m), img.deltaIds);
    this.measured.imageMs = measureImage(performance.now() - t0, m.providers);
    return this.adopt(m, img, t0);
  }

  /**
   * patchFromImage() through a delta of this forest's own base, without reading the base:
   * a provider of `changed` the delta holds (or deletes) is taken from it; one it does not
   * is as the base has it in the image, and so here too — unless this forest changed it
   * since the base (`dirty`: e.g. a write it replayed that the image's writer had not
   * seen yet), which is read again, consistently, like any provider the log names.
   */
  private async patchFromDelta(m: ImageManifest, changed: ReadonlySet<string>, t0: number): Promise<number | undefined> {
    const d = await unlessForeign(readDelta(m, this.forest.intern));
    if (!d) return undefined;
    const p0 = performance.now();
    const inDelta = new Set(d.deltaIds);
    const reread = [...changed].filter((u) => !inDelta.has(u) && this.dirty.has(u));
    const again = reread.length ? await readProviders(reread) : new Map<string, ProviderRead>();
    this.stats.providerReads += reread.length;
    for (const u of d.deleted) if (changed.has(u)) this.delete(u);
    this.forest.putMany(d.records.filter((r) => changed.has(r.uuid)));
    this.applyRead(reread, again);
    // what the delta changes differs from the base here too (those it did not take are as the image has them)
    for (const u of d.deltaIds) this.touch(u);
    for (const u of changed) this.touch(u);
    d.timings.put = performance.now() - p0;
    this.stats.imagePatches++;
    this.stats.deltaPatches++;
    return this.adopt(m, d, t0);
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
    const forest = this.forest;
    const base = this.base;
    if (base && Date.now() - base.writtenAt < BASE_MAX_AGE_MS && this.dirty.size <= forest.size * DELTA_MAX_SHARE) {
      // (encoded before writeImage's first await: the forest and `dirty` as of now)
      return writeImage(forest, this.asOf, this.lastFullLoad, this.appliedRecently(), { base, changed: this.dirty }, this.lastsRecently());
    }
    const epoch = this.baseEpoch;
    const since = new Set<string>();
    this.changedSinceEncode = since;
    try {
      const r = await writeImage(forest, this.asOf, this.lastFullLoad, this.appliedRecently(), undefined, this.lastsRecently());
      // the forest now differs from the image it wrote by what changed since it was encoded
      if (r.written && !r.manifest.base && this.baseEpoch === epoch && this.forest === forest) this.setBase(asBase(r.manifest), since);
      return r;
    } finally {
      this.changedSinceEncode = undefined;
    }
  }

  /**
   * the forest now holds image `m`'s state: replay from its takenAt, neither re-reading nor
   * adding again what it applied. A provider this forest kept (a patch takes only those
   * the log named since this forest's last refresh) holds every entry up to the image's
   * `last` for it too: either it is the image's, or no entry of it was new here since.
   */
  private adopt(m: ImageManifest, img: Pick<LoadedImage, 'applied' | 'lasts' | 'timings'>, t0: number): number {
    const timings = img.timings;
    this.seen.clear();
    // entries of the overlap window the image already holds: not re-read on replay
    for (const sk of img.applied) this.seen.set(sk, entryTime(sk));
    for (const [u, l] of Object.entries(img.lasts)) {
      const mine = this.lasts.get(u);
      if (mine === undefined || l > mine) this.lasts.set(u, l);
    }
    this.stats.imageLoads++;
    this.stats.lastLoad = { source: 'image', ms: performance.now() - t0, providers: m.providers, bytes: m.bytes, takenAt: m.takenAt, timings };
    return m.takenAt;
  }

  /** the change log since `since`: its entries, those not applied yet, and the providers they name */
  /**
   * the change log since `since`: its entries, those not applied yet, the providers they
   * name or change (`changed`), and of those the ones to read again (`reread`: named, or
   * changed but not held here)
   */
  private async changesSince(since: number) {
    const { entries, reads } = await readLogSince(since);
    this.stats.logQueries += reads;
    const unseen = entries.filter((e) => !this.seen.has(e.sk));
    const changed = new Set<string>();
    const reread = new Set<string>();
    for (const e of unseen) {
      for (const u of e.rps) {
        changed.add(u);
        reread.add(u);
      }
      for (const [u] of e.deltas) {
        changed.add(u);
        if (!this.forest.get(u)) reread.add(u);
      }
    }
    return { entries, unseen, changed, reread };
  }

  /** what a catch-up would cost, ms: re-reading one changed provider, and loading an image of `providers` */
  catchUpCosts(providers = this.forest.size): { rereadMsPerProvider: number; imageMs: number } {
    return catchUpCosts(this.measured, providers);
  }

  /** what the refresh plan needs of this snapshot, as of now */
  private view(): SnapshotView {
    const { loaded, lastStart, lastFullLoad, resyncDeferredUntil } = this;
    return { loaded, lastStart, lastFullLoad, resyncDeferredUntil, providers: this.forest.size, useImage: this.options.useImage };
  }

  /**
   * Bring the forest up to date: the route is refresh-plan.ts's (planLoad, planLongGap
   * and planJump, planCatchUp), the steps are this snapshot's.
   */
  private async refresh(): Promise<void> {
    const started = Date.now();
    const t0 = performance.now();
    const settings: RefreshSettings = {
      resyncMs: config().snapshotResyncS * 1000,
      longGapMs: this.options.longGapMs ?? LONG_GAP_MS,
      overlapMs: overlapMs(),
      skewMs: clockSkewMs(),
    };
    const parts: RefreshParts = { manifest: 0, log: 0, image: 0, index: 0, reread: 0 };
    const timed = async <T>(part: keyof RefreshParts, work: Promise<T>): Promise<T> => {
      const p0 = performance.now();
      try {
        return await work;
      } finally {
        parts[part] += performance.now() - p0;
      }
    };
    let since = this.lastStart - settings.overlapMs;
    // 1. a cold start or a resync: from an image when there is a usable one
    const load = planLoad(this.view(), started, settings);
    const fullLoad = load.route !== 'keep';
    const fromImage = load.route === 'image' ? await timed('image', this.loadImage(load.usable)) : undefined;
    if (fromImage !== undefined) {
      since = fromImage - settings.overlapMs;
      if (this.loaded) this.stats.resyncs++;
      else this.stats.coldLoads++;
    } else if (fullLoad) {
      // cold load, or the periodic full resync: a safety net should a write ever commit
      // later than the overlap window allows (the change log then never shows it)
      const l0 = performance.now();
      const replayFrom = started - Math.max(settings.overlapMs, config().snapshotIndexLagMs);
      const all = await timed('index', scanAllProviders());
      const scanned = new Set<string>();
      for (const p of all) {
        this.put(p.record);
        // (a state read before the replay window holds none of the entries replayed below)
        if (p.last !== undefined && entryTime(p.last) >= replayFrom) this.lasts.set(p.record.uuid, p.last);
        else this.lasts.delete(p.record.uuid);
        scanned.add(p.record.uuid);
      }
      // the index may lag: anything it misses is checked with a consistent read
      const absent = [...this.forest.providers.keys()].filter((u) => !scanned.has(u));
      if (absent.length) {
        this.applyRead(absent, await timed('index', readProviders(absent)));
      }
      if (this.loaded) this.stats.resyncs++;
      else this.stats.coldLoads++;
      this.stats.providerReads += all.length + absent.length;
      this.stats.lastLoad = { source: 'index', ms: performance.now() - l0, providers: this.forest.size };
      // gsi1 may lag the table (by up to SNAPSHOT_INDEX_LAG_MS), and the state items were
      // read eventually consistent: the scan shows every write committed before
      // `started - lag`, and anything newer it may show old or not at all. Replaying the
      // change log from there — usage changes added to state read before them (its
      // `last` says which), everything else re-read with consistent reads of the base
      // table — makes the forest hold every write committed before this refresh started,
      // whatever the index showed. (Until that replay has succeeded the load does not
      // count: a refresh that fails here loads again.)
      this.seen.clear();
      since = this.loaded ? Math.min(since, replayFrom) : replayFrom;
    }
    let caught: number | undefined;
    // 2. after a long gap (a bulk load takes minutes): the manifest first, maybe the image at once
    if (planLongGap(this.view(), started, fromImage !== undefined, settings).route === 'manifest') {
      const m = await timed('manifest', readManifest());
      const jump = planJump(this.view(), m, this.measured, settings);
      if (jump.route === 'image') {
        caught = await timed('image', this.loadImage(jump.usable, m));
        if (caught !== undefined) since = caught - settings.overlapMs;
      }
    }
    let logReadAt = Date.now();
    let log = await timed('log', this.changesSince(since));
    // 3. a long gap or a bulk load: catch up through a newer image when re-reading what
    // changed would cost more. The warm heap keeps its forest: building a second one next
    // to it made a million-provider catch-up slower than a new process's load
    const loaded = !fullLoad ? undefined : fromImage !== undefined ? 'image' : 'index';
    const route = planCatchUp(this.view(), { rereads: log.reread.size, loaded, jumped: caught !== undefined }, this.measured, settings);
    if (route.route !== 'log') {
      let m: ImageManifest | undefined;
      if (route.route === 'patch') {
        m = await timed('manifest', readManifest());
        if (readLogAgain(m, logReadAt, Date.now(), settings)) {
          logReadAt = Date.now();
          log = await timed('log', this.changesSince(since));
        }
        caught = await timed('image', this.patchFromImage(m, log.changed, logReadAt));
      }
      // (the manifest read for the patch, if any: not read again)
      caught ??= await timed('image', this.loadImage(route.usable, m));
      if (caught !== undefined) {
        since = caught - settings.overlapMs;
        // the image's own entries of its overlap window (applied) are not re-read
        log = await timed('log', this.changesSince(since));
      }
    }
    const { entries, unseen, reread } = log;
    this.stats.logEntries += entries.length;
    if (reread.size) {
      const g0 = performance.now();
      const fresh = await timed('reread', readProviders(reread));
      this.measured.rereadMs = measureReread(this.measured, performance.now() - g0, reread.size);
      this.stats.providerReads += reread.size;
      this.applyRead(reread, fresh);
    }
    this.applyDeltas(unseen, reread);
    // only now: a refresh that fails half-way must not mark entries it never applied
    for (const e of unseen) this.seen.set(e.sk, e.ts);
    for (const [sk, ts] of this.seen) if (ts < since) this.seen.delete(sk);
    // a read older than the window holds no entry a later refresh can read
    for (const [u, l] of this.lasts) if (entryTime(l) < since) this.lasts.delete(u);
    if (fullLoad) {
      this.loaded = true;
      if (fromImage === undefined) this.lastFullLoad = started;
    }
    this.lastStart = started;
    this.stats.refreshes++;
    this.stats.lastRefreshMs = performance.now() - t0;
    this.stats.lastRefreshParts = parts;
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
