/**
 * The route a provider snapshot's refresh takes (docs/consistency.md, "Reading at scale" and
 * "Cold start: the forest image"): pure decisions over what the snapshot knows of
 * itself, the stored image's manifest, the change log since its last refresh and what
 * this process measured a catch-up to cost. The store asks and executes
 * (store/placement/snapshot.ts refresh(), its steps in snapshot-load.ts).
 *
 * A refresh asks, in this order:
 *   1. planLoad: load the whole forest (a cold start, or the periodic resync: from the
 *      image when one is usable, else through the index), or keep the one it has; and for
 *      a warm forest's resync, planReload: load a newer image beside the forest (requests
 *      go on meanwhile), wait for one, or read the index when no image will come;
 *   2. planLongGap: after a long gap, read the image's manifest before the log, and then
 *      planJump: go to a newer image at once, without reading the whole log since;
 *   3. planCatchUp, once the log is read: re-read the providers it names (the usual
 *      route), or catch up through an image when re-reading them would cost more.
 * Which image a step may use: imageUsable (a whole load), planPatch (a patch), and
 * readLogAgain (an image taken just after the log was read).
 */

/** What a plan needs of its snapshot, as of the moment it asks. */
export interface SnapshotView {
  /** a cold load has succeeded (set at the end of the refresh that did it) */
  loaded: boolean;
  /** the start of the last refresh: every write committed before it is in the forest (ms) */
  lastStart: number;
  /** when the forest last came from a full read of the index (ms) */
  lastFullLoad: number;
  /** no periodic resync before this instant (ms): a bulk load this process absorbed */
  resyncDeferredUntil: number;
  /** providers in the forest */
  providers: number;
  /** starts from stored images (readers); the image writer's own snapshot never does */
  useImage: boolean;
  /** no reload is started before this instant (ms): one is loading beside the forest, or no newer image was there yet */
  reloadPendingUntil?: number;
}

/** What the manifest says of the current image (store/placement/image.ts ImageManifest). */
export interface ManifestView {
  /** every write committed before this instant (ms) is in the image */
  takenAt: number;
  /** when its writer last read every provider through the index */
  indexLoadAt: number;
  /** providers in the whole image */
  providers: number;
  /** a delta's base: the full image it changes */
  base?: { id: string };
}

export interface RefreshSettings {
  /** the periodic resync through the index, ms (0: never) */
  resyncMs: number;
  /** a refresh this long after the previous one reads the manifest first */
  longGapMs: number;
  /** the change log's overlap window (store/placement/changelog.ts overlapMs) */
  overlapMs: number;
  /** the clocks' skew allowance (changelog.ts clockSkewMs) */
  skewMs: number;
}

/** What this process measured, ms: re-reading one changed provider; loading a whole image, per provider (undefined: none loaded yet). */
export interface Measured {
  rereadMs: number;
  imageMs: number | undefined;
}

/** An image a whole load may use: taken after `takenAfter`, from a forest that read the index after `indexLoadedAfter`. */
export interface ImageWindow {
  takenAfter: number;
  indexLoadedAfter: number;
}

/** An image is usable while the change log since it still exists (entries live a day). */
export const IMAGE_MAX_AGE_MS = 20 * 3600 * 1000;
/** a refresh this long after the previous one first looks at the image's manifest */
export const LONG_GAP_MS = 20_000;
/** a resync that found no newer image looks at the manifest again this much later (the writer runs every minute) */
export const RELOAD_RETRY_MS = 30_000;

/**
 * A catch-up re-reads the changed providers (BatchGetItem, consistent) or loads a newer
 * image, whichever costs less — so it is never slower than a cold load, which loads that
 * image too. Re-reading costs `rereadMsPerProvider` until this process has measured it
 * (refreshes that re-read ≥ `rereadSample` providers): DynamoDB Local's ~0.4 ms; in AWS
 * the measurement takes over. Loading an image costs what this process's last image load
 * cost per provider, or `imageMsPerProvider` until it has loaded one (coldstart bench:
 * ~3 µs at a million providers, ~8 µs at 20,000), plus `imageFixedMs`. An estimate that
 * errs goes to the image: its cost is a cold load's.
 */
export const COSTS = { rereadMsPerProvider: 0.4, rereadSample: 100, imageMsPerProvider: 0.004, imageFixedMs: 50 } as const;

/** what this process knows before it has measured anything */
export const UNMEASURED: Measured = { rereadMs: COSTS.rereadMsPerProvider, imageMs: undefined };

/** what a catch-up would cost, ms: re-reading one changed provider, and loading an image of `providers` */
export function catchUpCosts(m: Measured, providers: number): { rereadMsPerProvider: number; imageMs: number } {
  // (a whole image's cost: a delta costs less, and an estimate that errs goes to the image)
  return { rereadMsPerProvider: m.rereadMs, imageMs: COSTS.imageFixedMs + (m.imageMs ?? COSTS.imageMsPerProvider) * providers };
}

/** re-reading `changed` providers would take longer than loading an image of `providers` */
export function imageIsCheaper(m: Measured, changed: number, providers: number): boolean {
  const c = catchUpCosts(m, providers);
  return changed * c.rereadMsPerProvider > c.imageMs;
}

/** the re-read cost after re-reading `count` providers in `ms`: a sample large enough moves it halfway */
export function measureReread(m: Measured, ms: number, count: number): number {
  return count >= COSTS.rereadSample ? 0.5 * m.rereadMs + (0.5 * ms) / count : m.rereadMs;
}

/** an image load's cost per provider */
export function measureImage(ms: number, providers: number): number {
  return ms / Math.max(1, providers);
}

export type Full = 'cold start' | 'resync';

export type LoadRoute =
  /** keep the forest: the log brings it up to date */
  | { route: 'keep'; reason: 'resync off' | 'resync not due' | 'resync deferred' | 'reload pending' }
  /** load the image in `usable`, or read the index when there is none */
  | { route: 'image'; reason: Full; usable: ImageWindow }
  | { route: 'index'; reason: Full };

/**
 * 1. Load the whole forest? A cold start does; so does the periodic resync (a safety net
 * should a write ever commit later than the overlap window allows), unless a bulk load
 * this process absorbed defers it. A resync takes an image only when its writer read the
 * index after this forest last did (it catches what the log may have missed, as a scan
 * would).
 */
export function planLoad(s: SnapshotView, started: number, p: Pick<RefreshSettings, 'resyncMs'>): LoadRoute {
  let reason: Full = 'cold start';
  if (s.loaded) {
    if (p.resyncMs <= 0) return { route: 'keep', reason: 'resync off' };
    if (started - s.lastFullLoad <= p.resyncMs) return { route: 'keep', reason: 'resync not due' };
    if (started < s.resyncDeferredUntil) return { route: 'keep', reason: 'resync deferred' };
    if (started < (s.reloadPendingUntil ?? 0)) return { route: 'keep', reason: 'reload pending' };
    reason = 'resync';
  }
  if (!s.useImage) return { route: 'index', reason };
  return { route: 'image', reason, usable: { takenAfter: 0, indexLoadedAfter: s.loaded ? s.lastFullLoad : 0 } };
}

export type ReloadRoute =
  /** load image `usable` into a forest of its own while this one serves; swap when it is ready */
  | { route: 'beside'; usable: ImageWindow }
  /** no newer image yet: keep the forest and look again after RELOAD_RETRY_MS */
  | { route: 'wait'; reason: 'the image writer has not read the index since this forest' }
  /** read the whole index now (the old safety net) */
  | { route: 'index'; reason: 'no image' | 'the image writer has not read the index for two periods' };

/**
 * 1'. A warm forest's resync (planLoad said 'image'), with the manifest read: never read the
 * whole index while the image writer keeps its images fresh. An image whose writer read
 * the index after this forest did is loaded beside the forest, which keeps answering
 * (its log kept current) until the new one has replayed the log and takes its place. An
 * image not that new means the writer's next index read is still to come (it reads the
 * index once a period, as this forest reloads once a period, and writes an image
 * right after): wait for it. Only without an image — or with a writer that has not read
 * the index for two periods — is the index read, inline, as before images existed.
 */
export function planReload(m: ManifestView | undefined, s: SnapshotView, now: number, p: Pick<RefreshSettings, 'resyncMs'>): ReloadRoute {
  const usable: ImageWindow = { takenAfter: 0, indexLoadedAfter: s.lastFullLoad };
  if (!m || now - m.takenAt > IMAGE_MAX_AGE_MS) return { route: 'index', reason: 'no image' };
  const indexLoadAt = m.indexLoadAt;
  if (imageUsable(m, usable, now)) return { route: 'beside', usable };
  if (now - indexLoadAt > 2 * p.resyncMs) return { route: 'index', reason: 'the image writer has not read the index for two periods' };
  return { route: 'wait', reason: 'the image writer has not read the index since this forest' };
}

/** an image a whole load may use (the change log since it still exists) */
export function imageUsable<M extends ManifestView>(m: M | undefined, w: ImageWindow, now: number): m is M {
  return m !== undefined && m.takenAt > w.takenAfter && m.indexLoadAt > w.indexLoadedAfter && now - m.takenAt <= IMAGE_MAX_AGE_MS;
}

/** a catch-up's whole image: taken after the replay of this forest's last refresh began */
function catchUpWindow(s: SnapshotView, p: RefreshSettings): ImageWindow {
  return { takenAfter: s.lastStart - p.overlapMs, indexLoadedAfter: 0 };
}

export type GapRoute =
  | { route: 'manifest'; reason: 'long gap' }
  | { route: 'log'; reason: 'cold start' | 'loaded an image' | 'no images' | 'short gap' };

/**
 * 2. After a long gap (a bulk load takes minutes), read the manifest before the log:
 * the image may make reading the whole log since unnecessary (planJump). `fromImage`:
 * this refresh loaded the whole forest from an image (step 1).
 */
export function planLongGap(s: SnapshotView, started: number, fromImage: boolean, p: Pick<RefreshSettings, 'longGapMs'>): GapRoute {
  if (!s.loaded) return { route: 'log', reason: 'cold start' };
  if (fromImage) return { route: 'log', reason: 'loaded an image' };
  if (!s.useImage) return { route: 'log', reason: 'no images' };
  if (started - s.lastStart > p.longGapMs) return { route: 'manifest', reason: 'long gap' };
  return { route: 'log', reason: 'short gap' };
}

export type JumpRoute =
  | { route: 'image'; reason: 'most of the forest differs'; usable: ImageWindow }
  | { route: 'log'; reason: 'no image' | 'image not newer' | 'less than half differs' | 're-reading costs less' };

/**
 * 2'. With the manifest read after a long gap: when the image is newer than this forest
 * and holds so many more or fewer providers that most of the forest would be rebuilt
 * anyway, go to it without reading the whole log since (one GetItem instead of
 * thousands of entries). A smaller difference reads the log, and takes from the image
 * only what it names (planCatchUp).
 */
export function planJump(s: SnapshotView, m: ManifestView | undefined, measured: Measured, p: RefreshSettings): JumpRoute {
  if (!m) return { route: 'log', reason: 'no image' };
  if (m.takenAt <= s.lastStart) return { route: 'log', reason: 'image not newer' };
  const differ = Math.abs(m.providers - s.providers);
  if (2 * differ < m.providers) return { route: 'log', reason: 'less than half differs' };
  if (!imageIsCheaper(measured, differ, m.providers)) return { route: 'log', reason: 're-reading costs less' };
  return { route: 'image', reason: 'most of the forest differs', usable: catchUpWindow(s, p) };
}

export type CatchUpRoute =
  | { route: 'log'; reason: 'cold start' | 'loaded an image' | 'no images' | 're-reading costs less' }
  /** read the manifest, take the changed providers from the image (planPatch); failing that, load all of the image in `usable` */
  | { route: 'patch'; reason: 'an image costs less'; usable: ImageWindow }
  /** load all of the image in `usable` (after a resync through the index the log was read from further back: no patch) */
  | { route: 'image'; reason: 'an image costs less'; usable: ImageWindow };

/**
 * 3. With the log read (`rereads`: the providers it would have re-read): a long gap or
 * a bulk load may make re-reading what changed cost more than a newer image; then take
 * the changed providers from that image (or load all of it) and replay only what came
 * after it. Taking a few providers costs less than building a forest (the estimate's
 * basis), and the warm heap keeps its forest. `loaded`: how this refresh loaded the
 * whole forest (step 1), if it did; `jumped`: it went to an image in step 2'.
 */
export function planCatchUp(
  s: SnapshotView,
  got: { rereads: number; loaded: 'image' | 'index' | undefined; jumped: boolean },
  measured: Measured,
  p: RefreshSettings,
): CatchUpRoute {
  if (!s.loaded) return { route: 'log', reason: 'cold start' };
  if (got.loaded === 'image' || got.jumped) return { route: 'log', reason: 'loaded an image' };
  if (!s.useImage) return { route: 'log', reason: 'no images' };
  if (!imageIsCheaper(measured, got.rereads, s.providers)) return { route: 'log', reason: 're-reading costs less' };
  return { route: got.loaded === 'index' ? 'image' : 'patch', reason: 'an image costs less', usable: catchUpWindow(s, p) };
}

/**
 * An image taken after the log was read (less the clocks' skew) cannot be patched from:
 * read the log again when that makes it usable, as it does for any image more than the
 * skew old.
 */
export function readLogAgain(m: ManifestView | undefined, logReadAt: number, now: number, p: Pick<RefreshSettings, 'skewMs'>): boolean {
  return m !== undefined && m.takenAt > logReadAt - p.skewMs && m.takenAt <= now - p.skewMs;
}

export type PatchRoute =
  /** a delta of the very base this forest is a known change of: its own chunks are enough */
  | { route: 'delta' }
  /** the whole image's records of the changed providers */
  | { route: 'image' }
  | { route: 'none'; reason: 'no image' | 'not newer than the forest' | 'taken after the log was read' | 'too old' };

/**
 * How a patch takes the changed providers from image `m`: only an image taken after the
 * forest's last refresh and before the log was read will do (a write to a provider it
 * does not take committed after the last refresh and before the log was read, so after
 * the image was taken, would be among the changed). `baseId`: the full image this forest
 * is a known change of.
 */
export function planPatch(
  m: ManifestView | undefined,
  at: { lastStart: number; logReadAt: number; now: number; baseId: string | undefined },
  p: Pick<RefreshSettings, 'skewMs'>,
): PatchRoute {
  if (!m) return { route: 'none', reason: 'no image' };
  if (m.takenAt <= at.lastStart) return { route: 'none', reason: 'not newer than the forest' };
  if (m.takenAt > at.logReadAt - p.skewMs) return { route: 'none', reason: 'taken after the log was read' };
  if (at.now - m.takenAt > IMAGE_MAX_AGE_MS) return { route: 'none', reason: 'too old' };
  return m.base && at.baseId === m.base.id ? { route: 'delta' } : { route: 'image' };
}
