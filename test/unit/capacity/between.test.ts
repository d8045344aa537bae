/** The accountant's costs between requests (measure/accountant/between.ts): loads from the ledger, per partition, projected. */
import { describe, expect, it } from 'vitest';
import {
  byFamily,
  loadCost,
  loadEvents,
  loadProfile,
  partitions,
  projectBetween,
  quarterChangedS,
  queryUnits,
  type BetweenSettings,
} from '../../../measure/accountant/between.js';
import type { CallRecord, KeyUse } from '../../../measure/ledger.js';

const FAM = { log: 'LOG#*', chunks: 'IMG#*#*', index: 'gsi1:' };

let seq = 0;
const rec = (
  end: number,
  who: { container: string; request: string; label: string },
  op: string,
  keys: Array<Partial<KeyUse> & { pk: string }>,
  mode?: CallRecord['mode'],
): CallRecord => {
  const full = keys.map((k) => ({ space: 'table', read: 0, write: 0, bytes: 0, items: 1, ...k }));
  return {
    seq: seq++,
    t: end - 5,
    end,
    op,
    table: 't',
    ...(mode ? { mode } : {}),
    who: { ...who, family: 'placement-allocation-candidates' },
    outcome: 'ok',
    read: full.reduce((n, k) => n + k.read, 0),
    write: full.reduce((n, k) => n + k.write, 0),
    indexWrite: 0,
    keys: full,
  };
};

const cold = (c: string, r: string) => ({ container: c, request: `${r}/cold`, label: 'snapshot:cold' });

describe('costs between requests', () => {
  it('groups a load by its request, tells its route, and counts its replay apart', () => {
    const rs = [
      rec(1000, cold('c0', 'r1'), 'GetItem', [{ pk: 'FOREST', read: 1, bytes: 300 }]),
      rec(
        1010,
        cold('c0', 'r1'),
        'BatchGetItem',
        [
          { pk: 'IMG#1-a#00000', read: 12.5, bytes: 100_000 },
          { pk: 'IMG#1-a#00001', read: 6, bytes: 48_000 },
        ],
        'eventual',
      ),
      rec(1020, cold('c0', 'r1'), 'Query', [{ pk: 'LOG#0', read: 3, bytes: 10_000 }]),
      // the request's own poll is not the load's
      rec(1030, { container: 'c0', request: 'r1', label: 'scheduler:candidates' }, 'Query', [{ pk: 'LOG#0', read: 1, bytes: 200 }]),
      // a resync through the index
      rec(2000, { container: 'c1', request: 'r9/resync', label: 'snapshot:resync' }, 'Query', [
        { space: 'gsi1', pk: 'RPS#0', read: 40, bytes: 160_000 },
      ]),
      rec(2010, { container: 'c1', request: 'r9/resync', label: 'snapshot:resync' }, 'Query', [{ pk: 'LOG#0', read: 1, bytes: 100 }]),
    ];
    const ev = loadEvents(rs, FAM);
    expect(ev).toHaveLength(2);
    expect(ev[0]).toMatchObject({
      container: 'c0',
      work: 'cold',
      route: 'image',
      read: 22.5,
      log: { queries: 1, bytes: 10_000, units: 3 },
      t: 995,
      end: 1020,
    });
    expect(ev[0]!.byFamily['IMG#*#*']).toEqual({ units: 18.5, bytes: 148_000 });
    expect(ev[0]!.byKey['IMG#1-a#00001']).toEqual({ units: 6, bytes: 48_000 });
    expect(ev[0]!.eventual).toEqual({ 'IMG#*#*': 18.5 });
    expect(ev[1]).toMatchObject({ work: 'resync', route: 'index', read: 41 });
    expect(ev[1]!.byFamily['gsi1:RPS#*']).toEqual({ units: 40, bytes: 160_000 });
  });

  it('prices a query as AWS does: 4 KB blocks per page of at most 1 MB, an empty page one unit', () => {
    expect(queryUnits(0)).toBe(1);
    expect(queryUnits(4096)).toBe(1);
    expect(queryUnits(4097)).toBe(2);
    expect(queryUnits(4097, 'eventual')).toBe(1);
    expect(queryUnits(1024 * 1024)).toBe(256 + 1);
    expect(queryUnits(1024 * 1024 + 1)).toBe(257);
  });

  it('finds the busiest partition of each family and its busiest second', () => {
    const w = { container: 'c0', request: 'x/cold', label: 'snapshot:cold' };
    const rs = [
      rec(1000, w, 'Query', [{ pk: 'LOG#0', read: 100 }]),
      rec(1500, w, 'Query', [{ pk: 'LOG#0', read: 50 }]),
      rec(2500, w, 'Query', [{ pk: 'LOG#0', read: 30 }]),
      rec(1000, w, 'Query', [{ pk: 'LOG#1', read: 10 }]),
    ];
    const p = partitions(rs);
    expect(p[0]).toMatchObject({ key: 'LOG#0', read: 180, peakReadPerS: 150, peakShare: 0.05 });
    const f = byFamily(p);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ family: 'LOG#*', partitions: 2, read: 190 });
    expect(f[0]!.hottest.key).toBe('LOG#0');
  });

  it('reduces loads to what scales: the fixed part, image bytes per provider, an index read per provider', () => {
    const rs = [
      rec(1000, cold('c0', 'a'), 'GetItem', [{ pk: 'FOREST', read: 1, bytes: 300 }]),
      rec(1010, cold('c0', 'a'), 'BatchGetItem', [{ pk: 'IMG#1-a#00000', read: 5, bytes: 40_000 }]),
      rec(1020, cold('c0', 'a'), 'Query', [{ pk: 'LOG#0', read: 2, bytes: 5000 }]),
      rec(1000, cold('c1', 'b'), 'GetItem', [{ pk: 'FOREST', read: 1, bytes: 300 }]),
      rec(1010, cold('c1', 'b'), 'BatchGetItem', [{ pk: 'IMG#1-a#00000', read: 5, bytes: 40_000 }]),
      rec(
        2000,
        { container: 'c1', request: 'z/resync', label: 'snapshot:resync' },
        'Query',
        [{ space: 'gsi1', pk: 'RPS#0', read: 60, bytes: 200_000 }],
        'eventual',
      ),
      // a consistent re-read of a provider its replay named: not a per-provider cost of the load
      rec(2010, { container: 'c1', request: 'z/resync', label: 'snapshot:resync' }, 'Query', [{ pk: 'RP#x', read: 1, bytes: 2000 }]),
    ];
    const p = loadProfile(loadEvents(rs, FAM), FAM, 100);
    expect(p.fixed).toEqual({ FOREST: 1 });
    expect(p.imageBytesPerProvider).toBe(400);
    // 5 units for a 40 KB item: 10 blocks of 4 KB, eventually consistent
    expect(p.chunkUnitsPerBlock).toBe(0.5);
    expect(p.indexPerProvider).toEqual({ 'gsi1:RPS#*': 0.6 });
  });

  const settings: BetweenSettings = {
    providers: 100_000,
    warm: 70,
    burstS: 1,
    logBytesPerS: 20_000,
    shards: 1,
    overlapS: 0.12,
    imageAgeMaxS: 660,
    imageAgeMeanS: 330,
    chunkItemBytes: 133_334,
    lifetimeS: 7200,
    resyncS: 900,
    resyncIndexShare: 0.5,
    writerIndexS: 900,
    writerRunS: 60,
    changesPerS: 200,
  };
  const profile = {
    fixed: { FOREST: 1 },
    imageBytesPerProvider: 32,
    chunkUnitsPerBlock: 0.5,
    indexPerProvider: { 'gsi1:RPS#*': 0.5, 'RP#*': 0.05 },
  };

  it('prices one cold load: the manifest, one read of every chunk, the replay on every log partition', () => {
    const c = loadCost(profile, settings, 330);
    // 3.2 MB in 24 chunks of at most 133 KB
    expect(c.chunks).toBe(24);
    // each chunk 133,333 bytes: 33 blocks of 4 KB, eventually consistent
    expect(c.perChunk).toBe(16.5);
    // 20 KB/s x 330.12 s on one partition, strongly consistent
    expect(c.perLogPartition).toBe(queryUnits(20_000 * 330.12));
    expect(c.total).toBeCloseTo(1 + c.perChunk * 24 + c.perLogPartition);
    // more partitions: each one reads its share
    expect(loadCost(profile, { ...settings, shards: 4 }, 330).perLogPartition).toBe(queryUnits((20_000 * 330.12) / 4));
  });

  it('projects a deploy burst per partition, and the reloads, turnover and writer per month', () => {
    const b = projectBetween(profile, settings);
    const worst = loadCost(profile, settings, 660);
    expect(b.deploy.containers).toBe(70);
    expect(b.deploy.log.units).toBe(70 * worst.perLogPartition);
    expect(b.deploy.log.share).toBeCloseTo((70 * worst.perLogPartition) / 3000);
    expect(b.deploy.chunk.units).toBeCloseTo(70 * worst.perChunk);
    expect(b.deploy.manifest.units).toBe(70);
    // half the reloads read the index: 0.55 units per provider each
    expect(b.reloads.indexPerS).toBeCloseTo((70 / 900) * 0.5 * 0.55 * 100_000);
    const none = projectBetween(profile, { ...settings, resyncIndexShare: 0 });
    expect(none.reloads.indexPerS).toBe(0);
    expect(none.reloads.monthly).toBeLessThan(b.reloads.monthly);
    // the writer reads the index once a period; it writes a full image once a quarter of the
    // providers changed (144 s at 200 changes/s over 100,000), a delta at each run between
    expect(b.writer.readPerS).toBeCloseTo((0.55 * 100_000) / 900);
    expect(quarterChangedS(100_000, 200)).toBeCloseTo(143.8, 1);
    expect(b.writer.writePerS).toBeCloseTo(((3_200_000 / 1024) * (1 + 0.125)) / quarterChangedS(100_000, 200));
    // no changes: a full image every 12 h, nothing between
    expect(projectBetween(profile, { ...settings, changesPerS: 0 }).writer.writePerS).toBeCloseTo(3_200_000 / 1024 / 43_200);
    expect(b.monthly).toBeCloseTo(b.turnover.monthly + b.reloads.monthly + b.writer.monthly);
    // a younger image: a smaller burst on the log
    expect(projectBetween(profile, { ...settings, imageAgeMaxS: 10 }).deploy.log.units).toBeLessThan(b.deploy.log.units / 30);
  });

  it('a gradual deploy (-c forestDeploy=linear, ten steps): each step a tenth of the containers, each partition a tenth of the burst', () => {
    const all = projectBetween(profile, settings);
    const linear = projectBetween(profile, { ...settings, steps: 10 });
    expect(all.deploy.steps).toBe(1);
    expect(linear.deploy.steps).toBe(10);
    // 70 containers in ten steps: at most 7 load together
    expect(linear.deploy.containers).toBe(7);
    expect(linear.deploy.log.units).toBe(all.deploy.log.units / 10);
    expect(linear.deploy.log.share).toBeCloseTo(all.deploy.log.share / 10);
    expect(linear.deploy.chunk.units).toBeCloseTo(all.deploy.chunk.units / 10);
    // a step is whole containers: 71 in ten steps is 8 at once, never 7.1
    expect(projectBetween(profile, { ...settings, burst: 71, steps: 10 }).deploy.containers).toBe(8);
    // what runs between deploys does not depend on how a deploy is shifted
    expect(linear.monthly).toBe(all.monthly);
  });
});
