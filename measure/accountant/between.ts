/**
 * What a cloud pays between requests (issue 33): the snapshot loads of new containers (a
 * deploy's cold burst, the turnover of containers), the periodic reloads of warm ones and
 * the image writer. Measured from the meter's ledger — the local containers name a
 * snapshot's whole load apart from the request that started it (`snapshot:cold`,
 * `snapshot:resync`, `snapshot:catch-up`; local/container.ts) — and projected to a
 * cloud's size, per partition. Pure: the accountant (./accountant.ts) runs and prints it,
 * test/unit/capacity/between.test.ts checks it.
 */
import { familyId, keyId, keyLoads, type CallRecord } from '../ledger.js';
import { READ_BLOCK, READ_FACTOR, type ReadMode } from '../../functions/store/ddb/units.js';
import { PARTITION_READ_LIMIT } from './model.js';
import { onDemandReadMonthly, onDemandWriteMonthly } from './prices.js';

export type Work = 'cold' | 'resync' | 'catch-up';

/** one snapshot load (or catch-up through an image) of one container, as the meter saw it */
export interface LoadEvent {
  container: string;
  /** the load's own request id (`<request>/<work>`) */
  request: string;
  work: Work;
  t: number;
  end: number;
  /** how it got the forest: an image's chunks, the index (gsi1), or neither (a catch-up that re-read providers) */
  route: 'image' | 'index' | 'none';
  read: number;
  /** read units and bytes by key family */
  byFamily: Record<string, { units: number; bytes: number }>;
  /** read units and bytes by partition key */
  byKey: Record<string, { units: number; bytes: number }>;
  /** eventually consistent read units by family (a load's bulk reads: chunks, the index, state items), apart from its consistent re-reads */
  eventual: Record<string, number>;
  /** the change-log part: its queries, bytes and units, and when its first query began (ms) */
  log: { queries: number; bytes: number; units: number; at?: number };
  /** the image it loaded: when that was taken (ms; from the chunks' keys, `IMG#<takenAt>-<id>#<n>`) */
  imageTakenAt?: number;
}

export interface Families {
  log: string;
  chunks: string;
  /** the index a load without an image reads (its family prefix, e.g. `gsi1:`) */
  index: string;
}

/** The loads in a ledger: calls labelled `snapshot:<work>`, grouped by their request. */
export function loadEvents(records: Iterable<CallRecord>, fam: Families): LoadEvent[] {
  const out = new Map<string, LoadEvent>();
  for (const r of records) {
    const label = r.who?.label ?? '';
    if (!label.startsWith('snapshot:')) continue;
    const id = `${r.who!.container} ${r.who!.request}`;
    let e = out.get(id);
    if (!e) {
      e = {
        container: r.who!.container,
        request: r.who!.request,
        work: label.slice('snapshot:'.length) as Work,
        t: r.t,
        end: r.end,
        route: 'none',
        read: 0,
        byFamily: {},
        byKey: {},
        eventual: {},
        log: { queries: 0, bytes: 0, units: 0 },
      };
      out.set(id, e);
    }
    e.t = Math.min(e.t, r.t);
    e.end = Math.max(e.end, r.end);
    e.read += r.read;
    let logged = false;
    for (const k of r.keys) {
      if (!k.read && !k.bytes) continue;
      const f = familyId(k);
      const cell = (e.byFamily[f] ??= { units: 0, bytes: 0 });
      cell.units += k.read;
      cell.bytes += k.bytes;
      const key = (e.byKey[keyId(k)] ??= { units: 0, bytes: 0 });
      key.units += k.read;
      key.bytes += k.bytes;
      if (r.mode === 'eventual') e.eventual[f] = (e.eventual[f] ?? 0) + k.read;
      if (f === fam.chunks) {
        e.route = 'image';
        const taken = Number(/^IMG#(\d+)-/.exec(k.pk)?.[1]);
        if (Number.isFinite(taken)) e.imageTakenAt = Math.max(e.imageTakenAt ?? 0, taken);
      } else if (f.startsWith(fam.index) && e.route !== 'image') e.route = 'index';
      if (f === fam.log) {
        e.log.bytes += k.bytes;
        e.log.units += k.read;
        logged = true;
      }
    }
    if (logged && r.op === 'Query') {
      e.log.queries++;
      e.log.at = Math.min(e.log.at ?? r.t, r.t);
    }
  }
  return [...out.values()].sort((a, b) => a.t - b.t);
}

/** read units of a Query returning `bytes` (pages of at most 1 MB, each rounded up to 4 KB; an empty one is a unit) */
export function queryUnits(bytes: number, mode: Exclude<ReadMode, 'transactional'> = 'strong'): number {
  const page = 1024 * 1024;
  const full = Math.floor(bytes / page);
  const rest = bytes - full * page;
  return (full * (page / READ_BLOCK) + Math.max(1, Math.ceil(rest / READ_BLOCK))) * READ_FACTOR[mode];
}

export interface PartitionUse {
  key: string;
  family: string;
  read: number;
  write: number;
  peakReadPerS: number;
  /** its busiest second's read units as a share of a partition's limit */
  peakShare: number;
}

/** Per partition key over some records (a burst): units, the busiest second, its share of the limit; busiest first. */
export function partitions(records: Iterable<CallRecord>): PartitionUse[] {
  return keyLoads(records)
    .map((k) => ({
      key: k.key,
      family: k.family,
      read: k.read,
      write: k.write,
      peakReadPerS: k.peakReadPerS,
      peakShare: k.peakReadPerS / PARTITION_READ_LIMIT,
    }))
    .sort((a, b) => b.read - a.read);
}

/** Per family: the busiest partition's units, and how many partitions it had. */
export function byFamily(uses: PartitionUse[]): Array<{ family: string; partitions: number; read: number; hottest: PartitionUse }> {
  const m = new Map<string, { family: string; partitions: number; read: number; hottest: PartitionUse }>();
  for (const u of uses) {
    const f = m.get(u.family) ?? { family: u.family, partitions: 0, read: 0, hottest: u };
    f.partitions++;
    f.read += u.read;
    if (u.read > f.hottest.read) f.hottest = u;
    m.set(u.family, f);
  }
  return [...m.values()].sort((a, b) => b.hottest.read - a.hottest.read);
}

/** What one cold load read, measured, reduced to what a projection scales. */
export interface LoadProfile {
  /** units per load that do not grow with the cloud or the image's age (the manifest, flags) */
  fixed: Record<string, number>;
  /** image bytes (compressed, as stored) per provider, and read units per 4 KB block of a chunk (0.5: eventually consistent) */
  imageBytesPerProvider: number;
  chunkUnitsPerBlock: number;
  /** a load through the index: its eventually consistent read units per provider, by family (the index, the state items) */
  indexPerProvider: Record<string, number>;
}

/** the load profile of measured loads: image loads give the fixed part and the chunks, index loads the index's */
export function loadProfile(events: LoadEvent[], fam: Families, providers: number): LoadProfile {
  const image = events.filter((e) => e.route === 'image' && e.work !== 'catch-up');
  const index = events.filter((e) => e.route === 'index');
  const fixed: Record<string, number> = {};
  let chunkBytes = 0;
  let chunkUnits = 0;
  let chunkBlocks = 0;
  for (const e of image) {
    for (const [f, v] of Object.entries(e.byFamily)) {
      if (f === fam.chunks) {
        chunkBytes += v.bytes;
        chunkUnits += v.units;
      } else if (f !== fam.log && v.bytes / providers <= 16) fixed[f] = (fixed[f] ?? 0) + v.units / image.length;
    }
    for (const [k, v] of Object.entries(e.byKey)) if (familyOfKey(k) === fam.chunks) chunkBlocks += Math.max(1, Math.ceil(v.bytes / READ_BLOCK));
  }
  // (the re-reads and the replay of an index load are counted with the log, not per provider)
  const indexPerProvider: Record<string, number> = {};
  for (const e of index)
    for (const [f, u] of Object.entries(e.eventual))
      if (f !== fam.log && f !== fam.chunks) indexPerProvider[f] = (indexPerProvider[f] ?? 0) + u / index.length / providers;
  return {
    fixed,
    imageBytesPerProvider: image.length ? chunkBytes / image.length / providers : 0,
    chunkUnitsPerBlock: chunkBlocks ? chunkUnits / chunkBlocks : 0,
    indexPerProvider,
  };
}

/** the family of a key as byKey names it (`<index>:<pk>` for an index's) */
function familyOfKey(id: string): string {
  const i = id.indexOf(':');
  return i > 0 && !id.slice(0, i).includes('#') ? familyId({ space: id.slice(0, i), pk: id.slice(i + 1) }) : familyId({ space: 'table', pk: id });
}

/** The deployment's settings and rates a projection of the costs between requests needs. */
export interface BetweenSettings {
  providers: number;
  /** warm containers holding a forest (all forest-served Lambdas together) */
  warm: number;
  /** containers starting at once in a deploy (default: every warm one) */
  burst?: number;
  /** seconds over which a burst's loads arrive (a deploy: about one) */
  burstS: number;
  /**
   * a gradual deploy's steps (`-c forestDeploy=linear`: CodeDeploy moves 10 % more of the
   * traffic to the new release every minute, so a tenth of the new containers start at
   * each step, a minute apart); default 1, every container at once
   */
  steps?: number;
  /** change-log bytes written per second, its partitions, and the window a replay reads back (s) */
  logBytesPerS: number;
  shards: number;
  overlapS: number;
  /** the image's age at a cold load: the longest (the writer's cadence) and on average */
  imageAgeMaxS: number;
  imageAgeMeanS: number;
  /** stored bytes per chunk item (image.ts IMAGE_CHUNK_BYTES, as base64) */
  chunkItemBytes: number;
  /** a warm container lives this long (s) before a new one replaces it */
  lifetimeS: number;
  /** a warm forest reloads this often (s) */
  resyncS: number;
  /** of the periodic reloads, the share that read the index */
  resyncIndexShare: number;
  /** the image writer reads the whole index this often (s), and runs this often (s): each run a delta of its full image, until a quarter of the providers differ from it */
  writerIndexS: number;
  writerRunS: number;
  /** distinct providers changed per second (claims, deletes, provider writes) */
  changesPerS: number;
}

/** how long until a quarter of `providers` differ from an image, at `changesPerS` uniform changes (s) */
export function quarterChangedS(providers: number, changesPerS: number): number {
  return changesPerS > 0 ? (-Math.log(0.75) * providers) / changesPerS : Number.POSITIVE_INFINITY;
}

export interface LoadCost {
  /** one cold load from the image at this age: units on the manifest, on each chunk partition, on each log partition, and in all */
  manifest: number;
  perChunk: number;
  chunks: number;
  perLogPartition: number;
  total: number;
}

/** one load from an image `ageS` old */
export function loadCost(p: LoadProfile, s: BetweenSettings, ageS: number): LoadCost {
  const stored = p.imageBytesPerProvider * s.providers;
  const chunks = Math.max(1, Math.ceil(stored / s.chunkItemBytes));
  const perChunk = Math.max(1, Math.ceil(stored / chunks / READ_BLOCK)) * p.chunkUnitsPerBlock;
  const perLogPartition = queryUnits((s.logBytesPerS * (ageS + s.overlapS)) / s.shards, 'strong');
  const manifest = Object.values(p.fixed).reduce((a, b) => a + b, 0);
  return { manifest, perChunk, chunks, perLogPartition, total: manifest + perChunk * chunks + perLogPartition * s.shards };
}

export interface BetweenProjection {
  /** a deploy: `burst` containers (per step of a gradual one) load within `burstS`: each family's busiest partition, units and share of its limit in that time */
  deploy: {
    /** containers loading together: all of them, or one step's share of a gradual deploy */
    containers: number;
    steps: number;
    ageS: number;
    manifest: { units: number; share: number };
    chunk: { units: number; share: number };
    log: { units: number; share: number; secondsOfCapacity: number };
  };
  /** read units per second (and per month, $) of the turnover, the periodic reloads and the writer's index reads */
  turnover: { perS: number; monthly: number };
  reloads: { perS: number; monthly: number; indexPerS: number };
  writer: { readPerS: number; writePerS: number; monthly: number };
  monthly: number;
}

export function projectBetween(p: LoadProfile, s: BetweenSettings): BetweenProjection {
  const steps = Math.max(1, Math.floor(s.steps ?? 1));
  // one step's containers start together (Lambda starts them as the step's traffic arrives)
  const k = Math.ceil((s.burst ?? s.warm) / steps);
  const worst = loadCost(p, s, s.imageAgeMaxS);
  const mean = loadCost(p, s, s.imageAgeMeanS);
  const indexPerLoad = Object.values(p.indexPerProvider).reduce((a, b) => a + b, 0) * s.providers;
  const share = (units: number) => units / s.burstS / PARTITION_READ_LIMIT;
  const turnoverPerS = (s.warm / s.lifetimeS) * mean.total;
  const reloadsPerS = s.warm / s.resyncS;
  const reloadIndexPerS = reloadsPerS * s.resyncIndexShare * indexPerLoad;
  const reloadPerS = reloadsPerS * (1 - s.resyncIndexShare) * mean.total + reloadIndexPerS;
  const writerRead = indexPerLoad / s.writerIndexS;
  // a full image (each chunk item once, in 1 KB write units) once a quarter of the forest
  // differs from the last (snapshot.ts DELTA_MAX_SHARE), at most every run and at least
  // every 12 h; a delta every run between, its providers growing from none to a quarter
  const image = (p.imageBytesPerProvider * s.providers) / 1024;
  const cycle = Math.min(12 * 3600, Math.max(s.writerRunS, quarterChangedS(s.providers, s.changesPerS)));
  const deltas = s.changesPerS > 0 ? Math.max(0, Math.floor(cycle / s.writerRunS) - 1) : 0;
  const writerWrite = (image + deltas * 0.125 * image) / cycle;
  const turnover = { perS: turnoverPerS, monthly: onDemandReadMonthly(turnoverPerS) };
  const reloads = { perS: reloadPerS, monthly: onDemandReadMonthly(reloadPerS), indexPerS: reloadIndexPerS };
  const writer = { readPerS: writerRead, writePerS: writerWrite, monthly: onDemandReadMonthly(writerRead) + onDemandWriteMonthly(writerWrite) };
  return {
    deploy: {
      containers: k,
      steps,
      ageS: s.imageAgeMaxS,
      manifest: { units: k * worst.manifest, share: share(k * worst.manifest) },
      chunk: { units: k * worst.perChunk, share: share(k * worst.perChunk) },
      log: {
        units: k * worst.perLogPartition,
        share: share(k * worst.perLogPartition),
        secondsOfCapacity: (k * worst.perLogPartition) / PARTITION_READ_LIMIT,
      },
    },
    turnover,
    reloads,
    writer,
    monthly: turnover.monthly + reloads.monthly + writer.monthly,
  };
}
