/**
 * The accountant's projection model (measure/accountant/model.ts) and the pure parts of its
 * measurement (measure/accountant/measure.ts): the change-log poll arithmetic, the catch-up,
 * warm containers, the hottest key by spread, costs from the dated price table, the
 * ceiling search, and the fits that calibrate a profile.
 */
import { describe, expect, it } from 'vitest';
import {
  ceiling,
  PARTITION_READ_LIMIT,
  PARTITION_WRITE_LIMIT,
  pollUnits,
  project,
  type Assumptions,
  type Profile,
} from '../../../measure/accountant/model.js';
import { distinct, pollLogBytes, pollLogUnits, pollQueries, type LogDesign } from '../../../measure/accountant/log-poll.js';
import { waves } from '../../../measure/accountant/measure.js';
import { fitSlope, splitLoad, spreadOf } from '../../../measure/accountant/calibrate.js';
import { PRICES, SECONDS_PER_MONTH } from '../../../measure/accountant/prices.js';
import type { CallRecord, KeyLoad } from '../../../measure/ledger.js';

const design: LogDesign = { overlapS: 3, bucketS: 60, shards: 4 };

const assumptions: Assumptions = {
  warmFactor: 2,
  minWarm: 1,
  ddbRttMs: 10,
  memoryMb: () => 1024,
  platformLogBytes: 0,
  containerLifetimeS: Number.POSITIVE_INFINITY,
  resyncS: Number.POSITIVE_INFINITY,
  maintenancePerS: 0,
  hotProjectShare: 0.5,
};

/** a forest-served list, a claim that writes the log and one provider, nothing else */
function profile(over: Partial<Profile> = {}): Profile {
  return {
    labels: {
      list: {
        label: 'list',
        lambda: 'forest',
        polls: true,
        read: { 'FOREST#*': 0.5 },
        write: {},
        waves: 2,
        cpuMs: 30,
        logBytes: 0,
        accessLogBytes: 0,
        logBytesWritten: 0,
        providerChanges: 0,
      },
      claim: {
        label: 'claim',
        lambda: 'writer',
        polls: false,
        read: { 'RP#*': 1 },
        write: { 'RP#*': 4, 'LOG#*#*': 2, 'USAGE#*': 4 },
        waves: 2,
        cpuMs: 10,
        logBytes: 0,
        accessLogBytes: 0,
        logBytesWritten: 100,
        providerChanges: 1,
      },
    },
    changeLogFamily: 'LOG#*#*',
    catchUp: { 'RP#*': 1 },
    fanOut: { read: { 'LOG#*#*': 4, 'FOREST#*': 1 }, write: { 'LOG#*#*': 4 } },
    spread: { 'RP#*': 'entity', 'USAGE#*': 'project', 'LOG#*#*': 'shared', 'FOREST#*': 'shared' },
    load: { perProvider: {}, fixed: {} },
    maintenance: { read: {}, write: {} },
    ...over,
  };
}

describe('the change-log poll', () => {
  it('reads the buckets a window of gap + overlap (and overlap ahead) meets, on every shard', () => {
    expect(pollQueries(0, design)).toBeCloseTo(4 * (1 + 6 / 60), 10);
    expect(pollQueries(54, design)).toBeCloseTo(8, 10);
  });

  it('reads every entry written since its previous poll, less the overlap', () => {
    expect(pollLogBytes(2, 1000, design)).toBe(5000);
  });

  it('pays at least one unit per query, and 4 KB per unit beyond', () => {
    // nothing written: 4.4 queries of one unit each
    expect(pollLogUnits(0, 0, design)).toBeCloseTo(4.4, 10);
    // 20 KB/s for 7 s = 140 KB over 4.4 queries = 31.8 KB each = 8 units each
    expect(pollLogUnits(4, 20 * 1024, design)).toBeCloseTo(4 * (1 + 10 / 60) * 8, 6);
  });

  it('re-reads each provider changed since its previous poll once (distinct changes)', () => {
    expect(distinct(0, 100)).toBe(0);
    expect(distinct(1, 1e9)).toBeCloseTo(1, 6);
    expect(distinct(100, 100)).toBeCloseTo(100 * (1 - (1 - 1 / 100) ** 100), 6);
    expect(distinct(1e6, 100)).toBeCloseTo(100, 6);
    const p = pollUnits(profile(), 'list', { gapS: 2, logBytesPerS: 0, changesPerS: 5, providers: 1e9 }, design);
    expect(p.fixed).toBe(0.5);
    expect(p.catchUp).toBeCloseTo(10, 6);
    expect(p.total).toBeCloseTo(p.fixed + p.log + p.catchUp, 10);
  });
});

describe('the projection', () => {
  const rates = { list: 100, claim: 10 };

  it('sizes warm containers from concurrency and spaces each container’s polls by them', () => {
    const p = project(profile(), rates, 1000, assumptions, design);
    const forest = p.lambdas.find((l) => l.lambda === 'forest')!;
    // 100/s x (30 ms + 2 x 10 ms) = 5 concurrent, x 2
    expect(forest.concurrency).toBeCloseTo(5, 10);
    expect(forest.warm).toBe(10);
    expect(forest.gapS).toBeCloseTo(0.1, 10);
    const fixed = project(profile(), rates, 1000, { ...assumptions, warm: 200 }, design).lambdas.find((l) => l.lambda === 'forest')!;
    expect(fixed.gapS).toBeCloseTo(2, 10);
  });

  it('a forest-served request costs more with more warm containers and with more writes', () => {
    const at = (warm: number, claims: number) =>
      project(profile(), { list: 100, claim: claims }, 1e6, { ...assumptions, warm }, design).perLabel.find((l) => l.label === 'list')!
        .readPerRequest;
    expect(at(50, 10)).toBeGreaterThan(at(10, 10));
    expect(at(10, 100)).toBeGreaterThan(at(10, 10));
  });

  it('adds up units per family from the rates, and finds the hottest key by its spread', () => {
    const p = project(profile(), rates, 1000, assumptions, design);
    const fam = (f: string) => p.families.find((x) => x.family === f)!;
    expect(fam('RP#*').writePerS).toBeCloseTo(40, 10);
    // one key per provider
    expect(fam('RP#*').keysWrite).toBe(1000);
    // the busiest project takes its share
    expect(fam('USAGE#*').hotWritePerS).toBeCloseTo(40 * 0.5, 10);
    // shared: over the measured fan-out
    expect(fam('LOG#*#*').hotWritePerS).toBeCloseTo(20 / 4, 10);
    expect(fam('LOG#*#*').readPerS).toBeCloseTo(100 * p.perLabel.find((l) => l.label === 'list')!.poll!.log, 6);
    const worst = Math.max(...p.families.map((f) => Math.max(f.hotReadPerS / PARTITION_READ_LIMIT, f.hotWritePerS / PARTITION_WRITE_LIMIT)));
    expect(p.hottest.utilisation).toBeCloseTo(worst, 10);
  });

  it('prices units, requests, GB-seconds and log bytes from the dated table', () => {
    const p = project(profile(), { claim: 1 }, 1000, { ...assumptions, platformLogBytes: 1024 }, design);
    const month = SECONDS_PER_MONTH;
    expect(p.cost.dynamodbWrite).toBeCloseTo((10 * month * PRICES.dynamodb.perMillionWriteUnits) / 1e6, 6);
    expect(p.cost.dynamodbRead).toBeCloseTo((1 * month * PRICES.dynamodb.perMillionReadUnits) / 1e6, 6);
    expect(p.cost.apiGateway).toBeCloseTo((month * PRICES.apiGateway.perMillionHttpRequests) / 1e6, 6);
    expect(p.cost.lambda).toBeCloseTo((month * PRICES.lambda.perMillionRequests) / 1e6 + 0.03 * month * PRICES.lambda.perGbSecondArm, 6);
    expect(p.cost.logs).toBeCloseTo(((1024 * month) / 1024 ** 3) * PRICES.cloudwatchLogs.perGbIngested, 6);
    expect(p.cost.total).toBeCloseTo(p.cost.dynamodbRead + p.cost.dynamodbWrite + p.cost.lambda + p.cost.apiGateway + p.cost.logs, 6);
  });

  it('finds the rate at which the hottest key reaches its limit', () => {
    // only writes to one shared key: 10 units per claim on a single partition -> 100 claims/s
    const one = profile({
      labels: { claim: { ...profile().labels.claim!, read: {}, write: { SOLO: 10 }, logBytesWritten: 0, providerChanges: 0 } },
      spread: {},
      fanOut: { read: {}, write: {} },
    });
    const c = ceiling(one, { claim: 10 }, (l) => l === 'claim', 1000, assumptions, design);
    expect(c.family).toBe('SOLO');
    expect(10 * c.multiple).toBeCloseTo(100, 6);
  });
});

describe('calibration', () => {
  it('fits one slope across request types, each with its own intercept', () => {
    const samples = [...[0, 1, 2, 3].map((x) => ({ group: 'a', x, y: 2 + 1.5 * x })), ...[1, 5].map((x) => ({ group: 'b', x, y: 7 + 1.5 * x }))];
    const f = fitSlope(samples);
    expect(f.slope).toBeCloseTo(1.5, 10);
    expect(f.intercept.a).toBeCloseTo(2, 10);
    expect(f.intercept.b).toBeCloseTo(7, 10);
    expect(fitSlope([{ group: 'a', x: 1, y: 3 }]).slope).toBe(0);
  });

  it('counts sequential round trips, not calls in parallel', () => {
    const c = (t: number, end: number) => ({ t, end }) as CallRecord;
    expect(waves([c(0, 10), c(1, 9), c(2, 11), c(12, 20), c(21, 22)])).toBe(3);
  });

  it('scales a snapshot load’s families that grow with the providers, and keeps the others per load', () => {
    const l = splitLoad({ 'IMG#*': { units: 2, bytes: 100 * 40 }, FOREST: { units: 1, bytes: 300 } }, 100);
    expect(l.perProvider).toEqual({ 'IMG#*': 0.02 });
    expect(l.fixed).toEqual({ FOREST: 1 });
  });

  it('classifies a key family by what its keys name', () => {
    const k = (key: string, family: string): KeyLoad => ({
      key,
      space: 'table',
      pk: key,
      family,
      read: 1,
      write: 0,
      peakReadPerS: 1,
      peakWritePerS: 0,
    });
    const s = spreadOf([k('RP#u1', 'RP#*'), k('USAGE#p1', 'USAGE#*'), k('LOG#1#0', 'LOG#*#*'), k('RCS', 'RCS')], new Set(['u1']), new Set(['p1']));
    expect(s).toEqual({ 'RP#*': 'entity', 'USAGE#*': 'project', 'LOG#*#*': 'shared', RCS: 'shared' });
  });
});
