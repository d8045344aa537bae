/**
 * The forest image writer (docs/consistency.md, "Cold start: the forest image"): keeps the
 * stored image recent so that a new Lambda container loads one document and replays a
 * short stretch of the change log, whatever the size of the cloud.
 *
 * It writes from its own snapshot, which loads and resyncs through the index (never
 * from an image), so every image carries a full read of the providers that is at most
 * one resync period (SNAPSHOT_RESYNC_S) old. A new image is due when there is none,
 * when this forest read the index again since the current image was made, when the
 * forest changed and the current image is older than FOREST_IMAGE_INTERVAL_S, or when
 * the current image is half a day old (the change log it needs expires after a day).
 * While few providers differ from the last full image this snapshot wrote (or loaded),
 * it writes a delta of that image (docs/consistency.md, "Delta images"): a million-provider
 * cloud's image costs seconds to encode and store, a delta of a few thousand
 * milliseconds.
 */
import { config } from '../config.js';
import { readManifest, type ImageManifest } from '../store/placement/image.js';
import { imageSourceSnapshot } from '../store/placement/snapshot.js';

const MAX_AGE_MS = 12 * 3600 * 1000;

export interface ImageReport {
  written: boolean;
  reason: string;
  providers?: number;
  bytes?: number;
  chunks?: number;
  takenAt?: number;
  ms?: number;
  /** a delta of an earlier full image (of baseBytes): bytes and chunks are the delta's */
  delta?: boolean;
  baseBytes?: number;
}

/** the forest state this process last made an image of */
let lastWritten: { forest: number; version: number } | undefined;

/**
 * Write an image when one is due. `intervalS` replaces FOREST_IMAGE_INTERVAL_S (a deploy
 * window writes whenever the forest changed: writeImagesFor).
 */
export async function refreshForestImage(opts: { force?: boolean; intervalS?: number } = {}): Promise<ImageReport> {
  const t0 = performance.now();
  const snap = imageSourceSnapshot();
  const forest = await snap.fresh(0);
  const current = await readManifest();
  const now = Date.now();
  const changed = lastWritten?.forest !== forest.id || lastWritten.version !== forest.version;
  const reason = opts.force
    ? 'asked for'
    : !current
      ? 'no image yet'
      : snap.indexLoadedAt > current.indexLoadAt
        ? 'the providers were read through the index again'
        : now - current.takenAt > MAX_AGE_MS
          ? 'the image is half a day old'
          : changed && now - current.takenAt >= (opts.intervalS ?? config().imageIntervalS) * 1000
            ? 'the forest changed'
            : undefined;
  if (!reason) return { written: false, reason: 'the image is recent' };
  const { manifest, written } = await snap.writeImage();
  if (written) lastWritten = { forest: forest.id, version: forest.version };
  return report(manifest, written, written ? reason : 'a newer image was written meanwhile', performance.now() - t0);
}

/**
 * A deploy window (docs/cost.md, "Deploying a large cloud"): an image whenever the forest
 * changed, every `everyS` seconds for `forS` seconds, so that the containers a deploy
 * starts replay seconds of the change log, not minutes. Each is a delta of the last full
 * image while few providers differ (a few kilobytes to a megabyte), so the window costs
 * little beyond its duration.
 */
export async function writeImagesFor(o: { forS: number; everyS: number; say?: (r: ImageReport) => void }): Promise<ImageReport[]> {
  const out: ImageReport[] = [];
  const end = Date.now() + o.forS * 1000;
  for (;;) {
    const t0 = Date.now();
    const r = await refreshForestImage({ intervalS: 0 });
    out.push(r);
    o.say?.(r);
    const next = t0 + o.everyS * 1000;
    if (next >= end) return out;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
  }
}

function report(m: ImageManifest, written: boolean, reason: string, ms: number): ImageReport {
  return {
    written,
    reason,
    providers: m.providers,
    bytes: m.bytes,
    chunks: m.chunks,
    takenAt: m.takenAt,
    ms: Math.round(ms),
    ...(m.base ? { delta: true, baseBytes: m.base.bytes } : {}),
  };
}
