/**
 * The provider snapshot's refresh routes (functions/core/placement/refresh-plan.ts):
 * each route and the boundary where the choice turns. The store's execution of them is
 * tested against DynamoDB Local (test/integration/placement/snapshot.test.ts and
 * forest-image.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  catchUpCosts,
  COSTS,
  IMAGE_MAX_AGE_MS,
  imageIsCheaper,
  imageUsable,
  measureImage,
  measureReread,
  planCatchUp,
  planJump,
  planLoad,
  planLongGap,
  planPatch,
  planReload,
  readLogAgain,
  UNMEASURED,
  type ManifestView,
  type Measured,
  type RefreshSettings,
  type SnapshotView,
} from '../../../functions/core/placement/refresh-plan.js';

const T = 1_700_000_000_000;
const settings: RefreshSettings = { resyncMs: 900_000, longGapMs: 20_000, overlapMs: 3_000, skewMs: 1_000 };
/** a warm snapshot of 10,000 providers, last refreshed at T, whose forest read the index at T − 60 s */
const warm = (over: Partial<SnapshotView> = {}): SnapshotView => ({
  loaded: true,
  lastStart: T,
  lastFullLoad: T - 60_000,
  resyncDeferredUntil: 0,
  providers: 10_000,
  useImage: true,
  ...over,
});
const cold = (over: Partial<SnapshotView> = {}): SnapshotView => ({ ...warm(), loaded: false, lastStart: 0, lastFullLoad: 0, providers: 0, ...over });
const manifest = (over: Partial<ManifestView> = {}): ManifestView => ({ takenAt: T + 10_000, indexLoadAt: T, providers: 10_000, ...over });

describe('the catch-up cost model', () => {
  it('starts from the defaults and weighs re-reading against a whole image', () => {
    expect(catchUpCosts(UNMEASURED, 100_000)).toEqual({ rereadMsPerProvider: 0.4, imageMs: 50 + 0.004 * 100_000 });
    // 100,000 providers: an image costs 450 ms, re-reading 1,125 providers 450 ms
    expect(imageIsCheaper(UNMEASURED, 1125, 100_000)).toBe(false);
    expect(imageIsCheaper(UNMEASURED, 1126, 100_000)).toBe(true);
  });

  it('uses what this process measured once it has', () => {
    const m: Measured = { rereadMs: 2, imageMs: 0.01 };
    expect(catchUpCosts(m, 1000)).toEqual({ rereadMsPerProvider: 2, imageMs: 60 });
    expect(imageIsCheaper(m, 30, 1000)).toBe(false);
    expect(imageIsCheaper(m, 31, 1000)).toBe(true);
  });

  it('moves the re-read cost only on a sample large enough, halfway', () => {
    expect(measureReread({ rereadMs: 0.4, imageMs: undefined }, 990, COSTS.rereadSample - 1)).toBe(0.4);
    expect(measureReread({ rereadMs: 0.4, imageMs: undefined }, 200, COSTS.rereadSample)).toBeCloseTo(0.5 * 0.4 + 0.5 * 2);
    expect(measureImage(300, 100_000)).toBe(0.003);
    expect(measureImage(30, 0)).toBe(30);
  });
});

describe('1. planLoad: the whole forest, or keep it', () => {
  it('a cold start loads the image, or reads the index when the snapshot never uses images', () => {
    expect(planLoad(cold(), T, settings)).toEqual({ route: 'image', reason: 'cold start', usable: { takenAfter: 0, indexLoadedAfter: 0 } });
    expect(planLoad(cold({ useImage: false }), T, settings)).toEqual({ route: 'index', reason: 'cold start' });
    // even with the resync switched off
    expect(planLoad(cold(), T, { resyncMs: 0 }).route).toBe('image');
  });

  it('resyncs once the last index read is more than the period old', () => {
    const s = warm();
    expect(planLoad(s, s.lastFullLoad + settings.resyncMs, settings)).toEqual({ route: 'keep', reason: 'resync not due' });
    // a resync takes only an image whose writer read the index after this forest did
    expect(planLoad(s, s.lastFullLoad + settings.resyncMs + 1, settings)).toEqual({
      route: 'image',
      reason: 'resync',
      usable: { takenAfter: 0, indexLoadedAfter: s.lastFullLoad },
    });
    expect(planLoad(warm({ useImage: false }), s.lastFullLoad + settings.resyncMs + 1, settings)).toEqual({ route: 'index', reason: 'resync' });
  });

  it('never resyncs with the period at 0, nor while an absorbed bulk load defers it', () => {
    const late = T + 10 * settings.resyncMs;
    expect(planLoad(warm(), late, { resyncMs: 0 })).toEqual({ route: 'keep', reason: 'resync off' });
    expect(planLoad(warm({ resyncDeferredUntil: late + 1 }), late, settings)).toEqual({ route: 'keep', reason: 'resync deferred' });
    expect(planLoad(warm({ resyncDeferredUntil: late }), late, settings).route).toBe('image');
  });
});

describe("1'. planReload: a warm forest's resync", () => {
  const s = warm();
  const due = s.lastFullLoad + settings.resyncMs + 1;
  it('loads an image whose writer read the index after this forest did beside the forest', () => {
    expect(planReload(manifest({ indexLoadAt: s.lastFullLoad + 1 }), s, due, settings)).toEqual({
      route: 'beside',
      usable: { takenAfter: 0, indexLoadedAfter: s.lastFullLoad },
    });
  });

  it('waits for the writer rather than reading the index while its images are fresh', () => {
    // the image this forest came from: the writer's next index read is still to come
    expect(planReload(manifest({ indexLoadAt: s.lastFullLoad }), s, due, settings).route).toBe('wait');
    expect(planReload(manifest({ indexLoadAt: s.lastFullLoad }), s, s.lastFullLoad + 2 * settings.resyncMs, settings).route).toBe('wait');
  });

  it('reads the index only without an image, or when the writer has not read it for two periods', () => {
    expect(planReload(undefined, s, due, settings)).toEqual({ route: 'index', reason: 'no image' });
    expect(planReload(manifest({ takenAt: due - IMAGE_MAX_AGE_MS - 1, indexLoadAt: s.lastFullLoad + 1 }), s, due, settings).route).toBe('index');
    expect(planReload(manifest({ indexLoadAt: s.lastFullLoad }), s, s.lastFullLoad + 2 * settings.resyncMs + 1, settings)).toEqual({
      route: 'index',
      reason: 'the image writer has not read the index for two periods',
    });
  });

  it('starts no other reload while one is pending', () => {
    expect(planLoad(warm({ reloadPendingUntil: due + 1 }), due, settings)).toEqual({ route: 'keep', reason: 'reload pending' });
    expect(planLoad(warm({ reloadPendingUntil: Number.POSITIVE_INFINITY }), due + 10 * settings.resyncMs, settings).route).toBe('keep');
    expect(planLoad(warm({ reloadPendingUntil: due }), due, settings).route).toBe('image');
  });
});

describe('which image a whole load may use', () => {
  const w = { takenAfter: T, indexLoadedAfter: T - 1000 };
  it('one taken after the window, whose writer read the index after it, while the log since it exists', () => {
    expect(imageUsable(undefined, w, T)).toBe(false);
    expect(imageUsable(manifest({ takenAt: T }), w, T)).toBe(false);
    expect(imageUsable(manifest({ takenAt: T + 1 }), w, T)).toBe(true);
    expect(imageUsable(manifest({ indexLoadAt: T - 1000 }), w, T)).toBe(false);
    expect(imageUsable(manifest({ indexLoadAt: T - 999 }), w, T)).toBe(true);
    const m = manifest();
    expect(imageUsable(m, w, m.takenAt + IMAGE_MAX_AGE_MS)).toBe(true);
    expect(imageUsable(m, w, m.takenAt + IMAGE_MAX_AGE_MS + 1)).toBe(false);
  });
});

describe('2. planLongGap and planJump: after a long gap, maybe the image at once', () => {
  it('reads the manifest first only for a warm snapshot that uses images, after more than the gap', () => {
    expect(planLongGap(warm(), T + settings.longGapMs, false, settings)).toEqual({ route: 'log', reason: 'short gap' });
    expect(planLongGap(warm(), T + settings.longGapMs + 1, false, settings)).toEqual({ route: 'manifest', reason: 'long gap' });
    expect(planLongGap(cold(), T + 3_600_000, false, settings)).toEqual({ route: 'log', reason: 'cold start' });
    expect(planLongGap(warm(), T + 3_600_000, true, settings)).toEqual({ route: 'log', reason: 'loaded an image' });
    expect(planLongGap(warm({ useImage: false }), T + 3_600_000, false, settings)).toEqual({ route: 'log', reason: 'no images' });
  });

  it('goes to a newer image that differs from the forest by at least half its providers, when re-reading them costs more', () => {
    // 10,000 here, 20,000 there: 10,000 differ (half), re-reading 4,000 ms > image 130 ms
    const m = manifest({ providers: 20_000 });
    expect(planJump(warm(), m, UNMEASURED, settings)).toEqual({
      route: 'image',
      reason: 'most of the forest differs',
      usable: { takenAfter: T - settings.overlapMs, indexLoadedAfter: 0 },
    });
    expect(planJump(warm(), manifest({ providers: 19_999 }), UNMEASURED, settings)).toEqual({ route: 'log', reason: 'less than half differs' });
    // far fewer providers there (a mass delete) counts as well
    expect(planJump(warm({ providers: 20_000 }), manifest({ providers: 10_000 }), UNMEASURED, settings).route).toBe('image');
  });

  it('reads the log instead when there is no image, it is not newer, or re-reading costs less', () => {
    expect(planJump(warm(), undefined, UNMEASURED, settings)).toEqual({ route: 'log', reason: 'no image' });
    expect(planJump(warm(), manifest({ providers: 20_000, takenAt: T }), UNMEASURED, settings)).toEqual({ route: 'log', reason: 'image not newer' });
    expect(planJump(warm(), manifest({ providers: 20_000, takenAt: T + 1 }), UNMEASURED, settings).route).toBe('image');
    // images measured slow here: 10,000 re-reads at 0.4 ms (4,000 ms) against 50 + 20,000 × 0.2 ms (4,050 ms)
    expect(planJump(warm(), manifest({ providers: 20_000 }), { rereadMs: 0.4, imageMs: 0.2 }, settings)).toEqual({
      route: 'log',
      reason: 're-reading costs less',
    });
  });
});

describe('3. planCatchUp: re-read what the log names, or catch up through an image', () => {
  const got = (rereads: number, over: Partial<{ loaded: 'image' | 'index' | undefined; jumped: boolean }> = {}) => ({
    rereads,
    loaded: undefined,
    jumped: false,
    ...over,
  });
  // 10,000 providers: an image costs 90 ms, re-reading 225 providers 90 ms
  it('re-reads while that costs no more than an image, patches from the image beyond', () => {
    expect(planCatchUp(warm(), got(225), UNMEASURED, settings)).toEqual({ route: 'log', reason: 're-reading costs less' });
    expect(planCatchUp(warm(), got(226), UNMEASURED, settings)).toEqual({
      route: 'patch',
      reason: 'an image costs less',
      usable: { takenAfter: T - settings.overlapMs, indexLoadedAfter: 0 },
    });
  });

  it('after a resync through the index (the log read from further back) loads the whole image, never patches', () => {
    expect(planCatchUp(warm(), got(226, { loaded: 'index' }), UNMEASURED, settings)).toEqual({
      route: 'image',
      reason: 'an image costs less',
      usable: { takenAfter: T - settings.overlapMs, indexLoadedAfter: 0 },
    });
  });

  it('never after a cold start, an image this refresh loaded, or for a snapshot without images', () => {
    expect(planCatchUp(cold(), got(1e6, { loaded: 'index' }), UNMEASURED, settings)).toEqual({ route: 'log', reason: 'cold start' });
    expect(planCatchUp(warm(), got(1e6, { loaded: 'image' }), UNMEASURED, settings)).toEqual({ route: 'log', reason: 'loaded an image' });
    expect(planCatchUp(warm(), got(1e6, { jumped: true }), UNMEASURED, settings)).toEqual({ route: 'log', reason: 'loaded an image' });
    expect(planCatchUp(warm({ useImage: false }), got(1e6), UNMEASURED, settings)).toEqual({ route: 'log', reason: 'no images' });
  });
});

describe('a patch: which image, and whether a delta is enough', () => {
  const logReadAt = T + 30_000;
  const at = { lastStart: T, logReadAt, now: logReadAt + 5, baseId: 'base-1' };
  it('takes a delta of the base this forest is a known change of, else the whole image', () => {
    expect(planPatch(manifest({ base: { id: 'base-1' } }), at, settings)).toEqual({ route: 'delta' });
    expect(planPatch(manifest({ base: { id: 'base-0' } }), at, settings)).toEqual({ route: 'image' });
    expect(planPatch(manifest(), at, settings)).toEqual({ route: 'image' });
    expect(planPatch(manifest({ base: { id: 'base-1' } }), { ...at, baseId: undefined }, settings)).toEqual({ route: 'image' });
  });

  it('only from an image taken after the last refresh and before the log was read (less the skew), while the log since it exists', () => {
    expect(planPatch(undefined, at, settings)).toEqual({ route: 'none', reason: 'no image' });
    expect(planPatch(manifest({ takenAt: T }), at, settings)).toEqual({ route: 'none', reason: 'not newer than the forest' });
    expect(planPatch(manifest({ takenAt: logReadAt - settings.skewMs }), at, settings)).toEqual({ route: 'image' });
    expect(planPatch(manifest({ takenAt: logReadAt - settings.skewMs + 1 }), at, settings)).toEqual({
      route: 'none',
      reason: 'taken after the log was read',
    });
    const m = manifest();
    expect(planPatch(m, { ...at, now: m.takenAt + IMAGE_MAX_AGE_MS }, settings)).toEqual({ route: 'image' });
    expect(planPatch(m, { ...at, now: m.takenAt + IMAGE_MAX_AGE_MS + 1 }, settings)).toEqual({ route: 'none', reason: 'too old' });
  });

  it('reads the log again when that makes an image taken just after it usable', () => {
    const now = logReadAt + 2_000;
    expect(readLogAgain(undefined, logReadAt, now, settings)).toBe(false);
    // usable as it is: no need
    expect(readLogAgain(manifest({ takenAt: logReadAt - settings.skewMs }), logReadAt, now, settings)).toBe(false);
    expect(readLogAgain(manifest({ takenAt: logReadAt - settings.skewMs + 1 }), logReadAt, now, settings)).toBe(true);
    // too recent even for a log read now
    expect(readLogAgain(manifest({ takenAt: now - settings.skewMs }), logReadAt, now, settings)).toBe(true);
    expect(readLogAgain(manifest({ takenAt: now - settings.skewMs + 1 }), logReadAt, now, settings)).toBe(false);
  });
});
