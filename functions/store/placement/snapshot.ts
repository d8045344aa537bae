/**
 * The warm provider snapshot every process keeps (see docs/design.md, "Reading at
 * scale"). First use loads every provider through gsi1; after that each refresh reads
 * only the change log since the previous refresh (minus an overlap window) with
 * strongly consistent queries and re-reads just the providers it names.
 *
 * Consistency: `fresh()` returns a forest that includes every write that had
 * committed when `fresh()` was called (a refresh that *started* after the call is
 * awaited), so a client always sees its own writes. SNAPSHOT_MAX_STALENESS_MS > 0
 * trades that for fewer reads. Answers built from it are advisory: claims re-check
 * everything atomically in DynamoDB.
 */
import { Forest } from '../../core/placement/forest.js';
import { config } from '../../config.js';
import { OVERLAP_MS, readLogSince } from './changelog.js';
import { getProviders, scanAllProviders } from './providers.js';

export interface SnapshotStats {
  refreshes: number;
  coldLoads: number;
  resyncs: number;
  logQueries: number;
  logEntries: number;
  providerReads: number;
  lastRefreshMs: number;
}

export class ProviderSnapshot {
  readonly forest = new Forest();
  private loaded = false;
  private lastStart = 0;
  private lastFullLoad = 0;
  private readonly seen = new Map<string, number>();
  private ticket = 0;
  private inflight: Promise<void> | undefined;
  private inflightTicket = 0;
  readonly stats: SnapshotStats = { refreshes: 0, coldLoads: 0, resyncs: 0, logQueries: 0, logEntries: 0, providerReads: 0, lastRefreshMs: 0 };

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

  /** Forget everything (tests, or after a table reset). */
  reset(): void {
    for (const u of [...this.forest.providers.keys()]) this.forest.delete(u);
    this.loaded = false;
    this.lastStart = 0;
    this.lastFullLoad = 0;
    this.seen.clear();
  }

  private async refresh(): Promise<void> {
    const started = Date.now();
    const t0 = performance.now();
    const resyncMs = config().snapshotResyncS * 1000;
    let since = this.lastStart - OVERLAP_MS;
    const fullLoad = !this.loaded || (resyncMs > 0 && started - this.lastFullLoad > resyncMs);
    if (fullLoad) {
      // cold load, or the periodic full resync: a safety net should a write ever commit
      // later than the overlap window allows (the change log then never shows it)
      const all = await scanAllProviders();
      const scanned = new Set<string>();
      for (const p of all) {
        this.forest.put(p);
        scanned.add(p.uuid);
      }
      // the index may lag: anything it misses is checked with a consistent read
      const absent = [...this.forest.providers.keys()].filter((u) => !scanned.has(u));
      if (absent.length) {
        const still = await getProviders(absent);
        for (const u of absent) {
          const p = still.get(u);
          if (p) this.forest.put(p);
          else this.forest.delete(u);
        }
      }
      if (this.loaded) this.stats.resyncs++;
      else this.stats.coldLoads++;
      this.stats.providerReads += all.length + absent.length;
      // gsi1 may lag the table (by up to SNAPSHOT_INDEX_LAG_MS): the scan shows every
      // write committed before `started - lag`, and anything newer it may show old or
      // not at all. Replaying the change log from there with consistent reads of the
      // base table re-reads every provider written since, so the forest holds every
      // write committed before this refresh started, whatever the index showed.
      // (Until that replay has succeeded the load does not count: a refresh that fails
      // here loads again.)
      this.seen.clear();
      const replayFrom = started - Math.max(OVERLAP_MS, config().snapshotIndexLagMs);
      since = this.loaded ? Math.min(since, replayFrom) : replayFrom;
    }
    const { entries, reads } = await readLogSince(since);
    this.stats.logQueries += reads;
    const changed = new Set<string>();
    const unseen = entries.filter((e) => !this.seen.has(e.sk));
    for (const e of unseen) for (const u of e.rps) changed.add(u);
    this.stats.logEntries += entries.length;
    if (changed.size) {
      const fresh = await getProviders(changed);
      this.stats.providerReads += changed.size;
      for (const u of changed) {
        const p = fresh.get(u);
        if (p) this.forest.put(p);
        else this.forest.delete(u);
      }
    }
    // only now: a refresh that fails half-way must not mark entries it never applied
    for (const e of unseen) this.seen.set(e.sk, e.ts);
    for (const [sk, ts] of this.seen) if (ts < since) this.seen.delete(sk);
    if (fullLoad) {
      this.loaded = true;
      this.lastFullLoad = started;
    }
    this.lastStart = started;
    this.stats.refreshes++;
    this.stats.lastRefreshMs = performance.now() - t0;
  }
}

let shared: ProviderSnapshot | undefined;
/** The process-wide snapshot (one per Lambda container, one per local server). */
let sharedFor = '';

/** The process's snapshot of the table it talks to (a new table — a restarted local stack — starts a new one). */
export function snapshot(): ProviderSnapshot {
  const cfg = config();
  const key = `${cfg.ddbEndpoint ?? ''}|${cfg.region}|${cfg.tableName}`;
  if (!shared || key !== sharedFor) {
    shared = new ProviderSnapshot();
    sharedFor = key;
  }
  return shared;
}
