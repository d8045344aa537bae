/**
 * One refresh of a provider snapshot's forest (snapshot.ts runs them one at a time): the
 * route is core/placement/refresh-plan.ts's (planLoad, planLongGap and planJump,
 * planCatchUp), the steps are snapshot-load.ts's — a cold load or resync from an image
 * or the index, after a long gap a jump to a newer image, the change log since, and a
 * catch-up through an image when re-reading what changed would cost more.
 */
import {
  planCatchUp,
  planJump,
  planLongGap,
  readLogAgain,
  type LoadRoute,
  type RefreshSettings,
  type SnapshotView,
} from '../../core/placement/refresh-plan.js';
import { config } from '../../config.js';
import { readManifest, type ImageManifest } from './image.js';
import type { ForestLoader } from './snapshot-load.js';
import { asSnapshotWork, refreshTimer, snapshotWork } from './snapshot-stats.js';

/** Bring forest `f` up to date by `load`'s route (`view`: what the plan needs of the snapshot, as of now). */
export async function refreshForest(
  f: ForestLoader,
  view: () => SnapshotView,
  started: number,
  settings: RefreshSettings,
  load: LoadRoute,
): Promise<void> {
  const t0 = performance.now();
  const { parts, timed } = refreshTimer();
  let since = f.lastStart - settings.overlapMs;
  // 1. a cold start or a resync: from an image when there is a usable one
  const fullLoad = load.route !== 'keep';
  const fromImage = load.route === 'image' ? await timed('image', f.loadImage(load.usable)) : undefined;
  if (fromImage !== undefined) {
    since = fromImage - settings.overlapMs;
    if (f.loaded) f.stats.resyncs++;
    else f.stats.coldLoads++;
  } else if (fullLoad) {
    // cold load, or the periodic full resync: a safety net should a write ever commit
    // later than the overlap window allows (the change log then never shows it). The
    // index may lag: the change log is replayed from `replayFrom` (loadIndex), and until
    // that replay has succeeded the load does not count: a refresh that fails here
    // loads again.
    const replayFrom = started - Math.max(settings.overlapMs, config().snapshotIndexLagMs);
    await f.loadIndex(replayFrom, timed);
    since = f.loaded ? Math.min(since, replayFrom) : replayFrom;
  }
  let caught: number | undefined;
  // 2. after a long gap (a bulk load takes minutes): the manifest first, maybe the image at once
  if (planLongGap(view(), started, fromImage !== undefined, settings).route === 'manifest') {
    const m = await timed('manifest', readManifest());
    const jump = planJump(view(), m, f.measured, settings);
    if (jump.route === 'image') {
      caught = await timed(
        'image',
        catchingUp(() => f.loadImage(jump.usable, m)),
      );
      if (caught !== undefined) since = caught - settings.overlapMs;
    }
  }
  let logReadAt = Date.now();
  let log = await timed('log', f.changesSince(since));
  // 3. a long gap or a bulk load: catch up through a newer image when re-reading what
  // changed would cost more. The warm heap keeps its forest: building a second one next
  // to it made a million-provider catch-up slower than a new process's load
  const loaded = !fullLoad ? undefined : fromImage !== undefined ? 'image' : 'index';
  const route = planCatchUp(view(), { rereads: log.reread.size, loaded, jumped: caught !== undefined }, f.measured, settings);
  if (route.route !== 'log') {
    let m: ImageManifest | undefined;
    if (route.route === 'patch') {
      m = await timed('manifest', readManifest());
      if (readLogAgain(m, logReadAt, Date.now(), settings)) {
        logReadAt = Date.now();
        log = await timed('log', f.changesSince(since));
      }
      caught = await timed(
        'image',
        catchingUp(() => f.patchFromImage(m, log.changed, logReadAt)),
      );
    }
    // (the manifest read for the patch, if any: not read again)
    caught ??= await timed(
      'image',
      catchingUp(() => f.loadImage(route.usable, m)),
    );
    if (caught !== undefined) {
      since = caught - settings.overlapMs;
      // the image's own entries of its overlap window (applied) are not re-read
      log = await timed('log', f.changesSince(since));
    }
  }
  await f.applyLog(log, since, timed);
  if (fullLoad) {
    f.loaded = true;
    if (fromImage === undefined) f.lastFullLoad = started;
  }
  f.lastStart = started;
  f.stats.refreshes++;
  f.stats.lastRefreshMs = performance.now() - t0;
  f.stats.refreshMs += f.stats.lastRefreshMs;
  f.stats.lastRefreshParts = parts;
}

/** a catch-up through an image: work between requests (snapshotWork), unless it is part of a whole load already */
function catchingUp<T>(work: () => Promise<T>): Promise<T> {
  return snapshotWork.getStore() ? work() : asSnapshotWork('catch-up', work);
}
