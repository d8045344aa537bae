/**
 * What a provider snapshot counts (its refreshes, loads, reads) and where its last
 * refresh spent its time: the figures the coldstart bench and the tests read
 * (ProviderSnapshot.stats).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoadedImage } from './image.js';

/**
 * Why a snapshot's DynamoDB calls are made when they are not the request's own: loading
 * the whole forest at a cold start or a periodic resync, or catching up through an image.
 * Set around that work (snapshot.ts); the local containers name such calls apart from the
 * request that happened to start them (local/container.ts), so the accountant counts
 * them as costs between requests. Nothing in Lambda reads it.
 */
export type SnapshotWork = 'cold' | 'resync' | 'catch-up';
export const snapshotWork = new AsyncLocalStorage<SnapshotWork>();
let labelled = false;
/**
 * Name snapshot work from now on (the local containers, once, at start). Off by default:
 * on Node 20 the first AsyncLocalStorage.run() turns on promise hooks for the whole
 * process, a cost every request would pay for a label nobody reads.
 */
export function labelSnapshotWork(): void {
  labelled = true;
}
/** run `work` as snapshot work `what` (named only while labelSnapshotWork() is on) */
export function asSnapshotWork<T>(what: SnapshotWork, work: () => Promise<T>): Promise<T> {
  return labelled ? snapshotWork.run(what, work) : work();
}

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
  /** all refreshes together, ms (a caller of fresh() waits for one or two of them) */
  refreshMs: number;
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

/** awaits `work`, adding the time it took to one part of the refresh */
export type Timed = <T>(part: keyof RefreshParts, work: Promise<T>) => Promise<T>;

/** a refresh's parts, and the timer that fills them */
export function refreshTimer(): { parts: RefreshParts; timed: Timed } {
  const parts: RefreshParts = { manifest: 0, log: 0, image: 0, index: 0, reread: 0 };
  const timed: Timed = async (part, work) => {
    const p0 = performance.now();
    try {
      return await work;
    } finally {
      parts[part] += performance.now() - p0;
    }
  };
  return { parts, timed };
}

export const noStats = (): SnapshotStats => ({
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
  refreshMs: 0,
});
