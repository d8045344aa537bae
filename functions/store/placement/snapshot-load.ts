/**
 * A provider snapshot's forest and the steps that bring it up to date (docs/consistency.md,
 * "Reading at scale"): load a whole image, or every provider through gsi1; take the
 * providers the change log names from a newer image (or from a delta of this forest's
 * own base); read the change log since an instant and apply it — re-read the providers
 * it names, add the usage changes it carries to the others. Which steps a refresh takes
 * is core/placement/refresh-plan.ts's choice; snapshot.ts asks it and runs them, one
 * refresh at a time.
 */
import { Forest } from '../../core/placement/forest.js';
import { ImageFormatError } from '../../core/placement/forest-image.js';
import { withProviderDelta, type ProviderRecord } from '../../core/placement/model.js';
import {
  imageUsable,
  measureImage,
  measureReread,
  planPatch,
  UNMEASURED,
  type ImageWindow,
  type Measured,
} from '../../core/placement/refresh-plan.js';
import { asBase, readDelta, readImage, readImageSome, readManifest, type ImageBase, type ImageManifest, type LoadedImage } from './image.js';
import { clockSkewMs, entryTime, readLogSince, type LogEntry } from './changelog.js';
import { readProviders, scanAllProviders } from './providers.js';
import type { ProviderRead } from './provider-items.js';
import { noStats, type SnapshotStats, type Timed } from './snapshot-stats.js';

/** the change log since an instant: its entries, those not applied yet, the providers they name or change, and of those the ones to read again */
export interface LogRead {
  entries: LogEntry[];
  unseen: LogEntry[];
  /** providers the unseen entries name or change */
  changed: Set<string>;
  /** of those, the ones to read again: named, or changed but not held here */
  reread: Set<string>;
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

/**
 * The forest of one snapshot, what it knows of it, and the steps that change it.
 * ProviderSnapshot (snapshot.ts) owns one: its refresh sets `loaded` and `lastStart`, its
 * image writer reads the base (`base`, `dirty`) and sets it after a full image.
 */
export class ForestLoader {
  forest = new Forest();
  /** a cold load has succeeded (set by the refresh, once its replay succeeded) */
  loaded = false;
  /** the start of the last refresh: every write committed before it is in the forest */
  lastStart = 0;
  /** when the forest last came from a full read of the index (its own, or the image writer's) */
  lastFullLoad = 0;
  /** no periodic resync before this instant (ms): see ProviderSnapshot.absorb() */
  resyncDeferredUntil = 0;
  /** change-log entries applied, by sk, with their instant */
  readonly seen = new Map<string, number>();
  /**
   * providers this forest holds as read from the table in the overlap window, and the
   * `last` entry their state item held (changelog.ts stateGuard): a logged usage change of
   * one is added only when its entry is later — the read held the earlier ones
   */
  readonly lasts = new Map<string, string>();
  /** what re-reading a provider and loading an image cost here (refresh-plan.ts COSTS) */
  readonly measured: Measured = { ...UNMEASURED };
  /**
   * The full image this forest is a known change of (docs/consistency.md, "Delta images"):
   * every provider not in `dirty` is exactly as `base` holds it (or absent from both).
   * Kept by every change to the forest; undefined when the forest came from the index.
   */
  base: ImageBase | undefined;
  dirty = new Set<string>();
  /** while a full image of this forest is being written: the providers changed since it was encoded */
  changedSinceEncode: Set<string> | undefined;
  /** moves whenever `base` is set or dropped (an image write that began before does not set it) */
  baseEpoch = 0;
  stats: SnapshotStats = noStats();

  /** a forest loaded beside another (a reload) counts in that one's stats and cost measures */
  constructor(shared?: { stats: SnapshotStats; measured: Measured }) {
    if (shared) {
      this.stats = shared.stats;
      this.measured = shared.measured;
    }
  }

  /** Forget everything, as a new process would start (what it measured stays). */
  reset(): void {
    this.forest = new Forest();
    this.stats = noStats();
    this.loaded = false;
    this.lastStart = 0;
    this.lastFullLoad = 0;
    this.resyncDeferredUntil = 0;
    this.seen.clear();
    this.lasts.clear();
    this.setBase(undefined);
  }

  /** this forest equals `base` except for the providers of `changed` */
  setBase(base: ImageBase | undefined, changed: Iterable<string> = []): void {
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
  put(record: ProviderRecord): void {
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
      if (p) {
        this.put(p.record);
        if (p.last !== undefined) this.lasts.set(p.record.uuid, p.last);
        else this.lasts.delete(p.record.uuid);
      } else {
        this.delete(u);
        this.lasts.delete(u);
      }
    }
  }

  /**
   * Every provider through gsi1 (a cold load, or the periodic resync). gsi1 may lag the
   * table (by up to SNAPSHOT_INDEX_LAG_MS) and the state items are read eventually
   * consistent: the scan shows every write committed before `replayFrom`, and anything
   * newer it may show old or not at all. The caller then replays the change log from
   * `replayFrom` — usage changes added to state read before them (its `last` says
   * which), everything else re-read with consistent reads of the base table — so the
   * forest holds every write committed before its refresh started, whatever the index
   * showed.
   */
  async loadIndex(replayFrom: number, timed: Timed): Promise<void> {
    const l0 = performance.now();
    const all = await timed('index', scanAllProviders());
    const scanned = new Set<string>();
    for (const p of all) {
      this.put(p.record);
      // (a state read before the replay window holds none of the entries replayed)
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
    this.seen.clear();
  }

  /**
   * Replace the forest with the image `manifest` (or the current one) when `usable`
   * admits it. Returns the instant the image is complete as of (every write committed
   * before it is in); the caller replays the log from there.
   */
  async loadImage(usable: ImageWindow, manifest?: ImageManifest): Promise<number | undefined> {
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
   * named since this forest's last refresh (`changed`, read at `logReadAt`) are taken
   * from the image as it holds them, or deleted when it does not; the others are the
   * same in the image as here (refresh-plan.ts planPatch says which image will do).
   * Returns the instant the forest is complete as of, like loadImage().
   */
  async patchFromImage(m: ImageManifest | undefined, changed: ReadonlySet<string>, logReadAt: number): Promise<number | undefined> {
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

  /** the change log since `since` (LogRead) */
  async changesSince(since: number): Promise<LogRead> {
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

  /**
   * Apply the change log read from `since`: re-read the providers it names, add the
   * usage changes its entries carry to the others, and mark its entries applied — only
   * now: a refresh that fails half-way must not mark entries it never applied.
   */
  async applyLog({ entries, unseen, reread }: LogRead, since: number, timed: Timed): Promise<void> {
    this.stats.logEntries += entries.length;
    if (reread.size) {
      const g0 = performance.now();
      const fresh = await timed('reread', readProviders(reread));
      this.measured.rereadMs = measureReread(this.measured, performance.now() - g0, reread.size);
      this.stats.providerReads += reread.size;
      this.applyRead(reread, fresh);
    }
    this.applyDeltas(unseen, reread);
    for (const e of unseen) this.seen.set(e.sk, e.ts);
    for (const [sk, ts] of this.seen) if (ts < since) this.seen.delete(sk);
    // a read older than the window holds no entry a later refresh can read
    for (const [u, l] of this.lasts) if (entryTime(l) < since) this.lasts.delete(u);
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
}
