/**
 * The accountant's projection model (pure; docs/cost.md explains it, test/unit/capacity/
 * model.test.ts checks it). It takes what a measured run found per request type — read
 * and write units by key family, DynamoDB round trips, handler CPU and log bytes — and
 * projects it to a cloud of another size and rate. Nothing in it knows Berth's design
 * beyond what is measured or passed in:
 *
 *  - A request type's units are its measured units per request (a "fixed" part), except
 *    for forest-served requests (those measured to read the change-log family): their
 *    units depend on how long ago the container last polled the log. For them
 *      units(gap) = fixed + log(gap) + catch-up(gap)
 *    where, with W warm containers of the request's Lambda sharing R polling requests/s,
 *    gap = W / R (each container polls at every request it gets), and
 *      log(gap)      = queries(gap) x units of one query page of bytes(gap) / queries(gap)
 *      bytes(gap)    = change-log bytes written per second x (gap + overlap)
 *      queries(gap)  = shards x (1 + (gap + 2 overlap) / bucket)   (the buckets a window of
 *                      that length meets, reading `overlap` past now)
 *      catch-up(gap) = per family: units per changed provider x distinct(changes/s x gap, providers)
 *    Overlap, bucket and shards are the code's own constants, passed in by the caller
 *    (functions/store/placement/changelog.ts, config().changeLogShards); bytes per write,
 *    units per changed provider and the fixed parts are measured.
 *  - Warm containers per Lambda are an explicit assumption: Little's law (requests/s x
 *    seconds per request) times a warm-pool factor, or a fixed count (10 / 50 / 200 in the
 *    report).
 *  - The hottest partition of a key family: its units/s divided by how many keys carry
 *    them at once — the scenario's providers for keys naming a provider or consumer,
 *    the busiest project's share for keys naming a project, the measured fan-out otherwise.
 */
import { distinct, pollLogUnits, type LogDesign } from './log-poll.js';
import { onDemandReadMonthly, onDemandWriteMonthly, PRICES, SECONDS_PER_MONTH } from './prices.js';

/** DynamoDB's per-partition-key limits (units per second) */
export const PARTITION_READ_LIMIT = 3000;
export const PARTITION_WRITE_LIMIT = 1000;

/** what one request of a type costs, as measured */
export interface LabelProfile {
  label: string;
  /** the Lambda (resource family) serving it */
  lambda: string;
  /** forest-served: it reads the change log */
  polls: boolean;
  /** read units per request by key family: for polling types, without the change log and the catch-up */
  read: Record<string, number>;
  /** write units per request by key family (table and index families) */
  write: Record<string, number>;
  /** sequential DynamoDB round trips per request (calls that waited for the previous ones) */
  waves: number;
  cpuMs: number;
  /** the handler's log bytes per request */
  logBytes: number;
  /** API Gateway's access log line per request (the stack's format) */
  accessLogBytes: number;
  /** change-log bytes it writes per request */
  logBytesWritten: number;
  /** distinct providers it changes per request */
  providerChanges: number;
}

export type Spread = 'entity' | 'project' | 'shared';

export interface Profile {
  labels: Record<string, LabelProfile>;
  /** the change-log key family (its reads are modelled, not taken as measured) */
  changeLogFamily: string;
  /** read units per changed provider a forest-served request re-reads, by key family */
  catchUp: Record<string, number>;
  /** measured fan-out of each family (keys sharing its units at once) */
  fanOut: { read: Record<string, number>; write: Record<string, number> };
  spread: Record<string, Spread>;
  /**
   * one snapshot load (a cold container, a resync), by family: read units that grow with the
   * providers (per provider) and units that do not (per load)
   */
  load: { perProvider: Record<string, number>; fixed: Record<string, number> };
  /** units of one maintenance run, by family */
  maintenance: { read: Record<string, number>; write: Record<string, number> };
}

export interface PollConditions {
  gapS: number;
  logBytesPerS: number;
  changesPerS: number;
  providers: number;
}

export interface PollUnits {
  fixed: number;
  log: number;
  catchUp: number;
  total: number;
  /** catch-up units by family */
  catchUpByFamily: Record<string, number>;
}

/** What one forest-served request of `label` costs under these conditions. */
export function pollUnits(profile: Profile, label: string, c: PollConditions, d: LogDesign): PollUnits {
  const l = profile.labels[label];
  const fixed = l ? sum(l.read) : 0;
  const log = pollLogUnits(c.gapS, c.logBytesPerS, d);
  const changed = distinct(c.changesPerS * c.gapS, c.providers);
  const catchUpByFamily = Object.fromEntries(Object.entries(profile.catchUp).map(([f, u]) => [f, u * changed]));
  const catchUp = sum(catchUpByFamily);
  return { fixed, log, catchUp, total: fixed + log + catchUp, catchUpByFamily };
}

export function sum(r: Record<string, number>): number {
  return Object.values(r).reduce((a, b) => a + b, 0);
}

export interface Assumptions {
  /** warm containers per unit of concurrency (requests/s x seconds per request) */
  warmFactor: number;
  minWarm: number;
  /** every forest-served Lambda has this many warm containers (overrides the factor) */
  warm?: number;
  /** one DynamoDB round trip in AWS (ms) */
  ddbRttMs: number;
  /** memory of a Lambda (MB) */
  memoryMb: (lambda: string) => number;
  /** Lambda's own log lines per invocation (platform.start and platform.report, JSON) */
  platformLogBytes: number;
  /** how long a warm container lives before a new one replaces it (s) */
  containerLifetimeS: number;
  /** a warm snapshot reloads everything this often (s; config().snapshotResyncS) */
  resyncS: number;
  /** maintenance runs per second (the schedule: one a minute) */
  maintenancePerS: number;
  /** the busiest project's share of claims (its usage partitions) */
  hotProjectShare: number;
  /**
   * a deployment setting that spreads a family over more keys than the measured run had
   * (USAGE_SHARDS: a project's usage over that many partitions): its keys per project and
   * the read units of every request that reads it all, times `factor`
   */
  spreadFactor?: Record<string, number>;
  /** families a deployment setting spreads over this many partitions, whatever the measured run had (the change feed's FEED_SHARDS) */
  partitions?: Record<string, number>;
  /**
   * read units of one chunk of a snapshot image (store/placement/image.ts: one partition
   * per chunk): a family loaded per provider spreads over as many keys as its load has chunks
   */
  chunkReadUnits?: number;
}

export interface LambdaLoad {
  lambda: string;
  requestsPerS: number;
  secondsPerRequest: number;
  concurrency: number;
  warm: number;
  pollsPerS: number;
  gapS: number;
}

export interface FamilyLoad {
  family: string;
  spread: Spread;
  readPerS: number;
  writePerS: number;
  /** keys sharing the family's units at once */
  keysRead: number;
  keysWrite: number;
  hotReadPerS: number;
  hotWritePerS: number;
  /** the hottest key's share of its limit (the larger of read and write) */
  utilisation: number;
}

export interface Cost {
  dynamodbRead: number;
  dynamodbWrite: number;
  lambda: number;
  apiGateway: number;
  logs: number;
  total: number;
}

export interface Projection {
  rates: Record<string, number>;
  providers: number;
  lambdas: LambdaLoad[];
  perLabel: Array<{ label: string; rate: number; readPerRequest: number; writePerRequest: number; poll?: PollUnits }>;
  families: FamilyLoad[];
  hottest: FamilyLoad;
  readPerS: number;
  writePerS: number;
  cost: Cost;
}

function addTo(target: Record<string, number>, src: Record<string, number>, k: number): void {
  for (const [f, u] of Object.entries(src)) target[f] = (target[f] ?? 0) + u * k;
}

/**
 * Project a profile to request rates (per label) over `providers` providers.
 * `rates` comes from the workload's table (measure/accountant/workload.ts labelRates).
 */
export function project(profile: Profile, rates: Record<string, number>, providers: number, a: Assumptions, d: LogDesign): Projection {
  const labels = Object.entries(rates).filter(([l, r]) => r > 0 && profile.labels[l]);
  const secondsOf = (l: LabelProfile) => (l.cpuMs + l.waves * a.ddbRttMs) / 1000;
  // Lambdas: requests, concurrency, warm containers, polls
  const byLambda = new Map<string, LambdaLoad>();
  for (const [label, rate] of labels) {
    const l = profile.labels[label]!;
    const x = byLambda.get(l.lambda) ?? { lambda: l.lambda, requestsPerS: 0, secondsPerRequest: 0, concurrency: 0, warm: 0, pollsPerS: 0, gapS: 0 };
    x.requestsPerS += rate;
    x.concurrency += rate * secondsOf(l);
    if (l.polls) x.pollsPerS += rate;
    byLambda.set(l.lambda, x);
  }
  for (const x of byLambda.values()) {
    x.secondsPerRequest = x.requestsPerS ? x.concurrency / x.requestsPerS : 0;
    x.warm = x.pollsPerS > 0 && a.warm !== undefined ? a.warm : Math.max(a.minWarm, Math.ceil(x.concurrency * a.warmFactor));
    x.gapS = x.pollsPerS > 0 ? x.warm / x.pollsPerS : 0;
  }
  const logBytesPerS = labels.reduce((n, [l, r]) => n + r * profile.labels[l]!.logBytesWritten, 0);
  const changesPerS = labels.reduce((n, [l, r]) => n + r * profile.labels[l]!.providerChanges, 0);
  const read: Record<string, number> = {};
  const write: Record<string, number> = {};
  const perLabel: Projection['perLabel'] = [];
  for (const [label, rate] of labels) {
    const l = profile.labels[label]!;
    addTo(write, l.write, rate);
    if (l.polls) {
      const gapS = byLambda.get(l.lambda)!.gapS;
      const p = pollUnits(profile, label, { gapS, logBytesPerS, changesPerS, providers }, d);
      addTo(read, l.read, rate);
      addTo(read, p.catchUpByFamily, rate);
      read[profile.changeLogFamily] = (read[profile.changeLogFamily] ?? 0) + p.log * rate;
      perLabel.push({ label, rate, readPerRequest: p.total, writePerRequest: sum(l.write), poll: p });
    } else {
      // a read of a whole spread family (every usage shard) reads every key it spreads over
      const reads = Object.fromEntries(Object.entries(l.read).map(([f, u]) => [f, u * (a.spreadFactor?.[f] ?? 1)]));
      addTo(read, reads, rate);
      perLabel.push({ label, rate, readPerRequest: sum(reads), writePerRequest: sum(l.write) });
    }
  }
  // container lifecycle: every warm container of a forest-served Lambda loads the snapshot
  // when it starts and again every resync period
  const loadsPerS = [...byLambda.values()].filter((x) => x.pollsPerS > 0).reduce((n, x) => n + x.warm / a.containerLifetimeS + x.warm / a.resyncS, 0);
  addTo(read, profile.load.perProvider, loadsPerS * providers);
  addTo(read, profile.load.fixed, loadsPerS);
  addTo(read, profile.maintenance.read, a.maintenancePerS);
  addTo(write, profile.maintenance.write, a.maintenancePerS);
  const families = [...new Set([...Object.keys(read), ...Object.keys(write)])].map((family): FamilyLoad => {
    const spread = profile.spread[family] ?? 'shared';
    const readPerS = read[family] ?? 0;
    const writePerS = write[family] ?? 0;
    const factor = a.spreadFactor?.[family] ?? 1;
    // a family every snapshot load reads in proportion to the cloud: one key per chunk of it
    const chunks =
      a.chunkReadUnits && profile.load.perProvider[family] ? Math.ceil((profile.load.perProvider[family]! * providers) / a.chunkReadUnits) : 1;
    const keys = (kind: 'read' | 'write') =>
      a.partitions?.[family] !== undefined
        ? a.partitions[family]!
        : family === profile.changeLogFamily
          ? d.shards
          : spread === 'entity'
            ? providers
            : spread === 'project'
              ? factor / Math.max(a.hotProjectShare, 1e-9)
              : Math.max(1, profile.fanOut[kind][family] ?? 1, kind === 'read' ? chunks : 1);
    const keysRead = keys('read');
    const keysWrite = keys('write');
    const hotReadPerS = readPerS / keysRead;
    const hotWritePerS = writePerS / keysWrite;
    return {
      family,
      spread,
      readPerS,
      writePerS,
      keysRead,
      keysWrite,
      hotReadPerS,
      hotWritePerS,
      utilisation: Math.max(hotReadPerS / PARTITION_READ_LIMIT, hotWritePerS / PARTITION_WRITE_LIMIT),
    };
  });
  families.sort((x, y) => y.utilisation - x.utilisation);
  const readPerS = sum(read);
  const writePerS = sum(write);
  // costs
  const month = SECONDS_PER_MONTH;
  const requestsPerS = labels.reduce((n, [, r]) => n + r, 0);
  const gbSecondsPerS =
    labels.reduce((n, [label, r]) => {
      const l = profile.labels[label]!;
      return n + r * secondsOf(l) * (a.memoryMb(l.lambda) / 1024);
    }, 0) +
    a.maintenancePerS * 1 * (a.memoryMb('maintenance') / 1024);
  const logIngestPerS = labels.reduce((n, [label, r]) => {
    const l = profile.labels[label]!;
    return n + r * (l.logBytes + l.accessLogBytes + a.platformLogBytes);
  }, 0);
  const apiRequests = requestsPerS * month;
  const apiCost =
    (Math.min(apiRequests, 300e6) * PRICES.apiGateway.perMillionHttpRequests +
      Math.max(0, apiRequests - 300e6) * PRICES.apiGateway.perMillionHttpRequestsAfter300M) /
    1e6;
  const cost: Cost = {
    dynamodbRead: onDemandReadMonthly(readPerS),
    dynamodbWrite: onDemandWriteMonthly(writePerS),
    lambda:
      ((requestsPerS + a.maintenancePerS) * month * PRICES.lambda.perMillionRequests) / 1e6 + gbSecondsPerS * month * PRICES.lambda.perGbSecondArm,
    apiGateway: apiCost,
    logs: ((logIngestPerS * month) / 1024 ** 3) * PRICES.cloudwatchLogs.perGbIngested,
    total: 0,
  };
  cost.total = cost.dynamodbRead + cost.dynamodbWrite + cost.lambda + cost.apiGateway + cost.logs;
  return {
    rates: Object.fromEntries(labels),
    providers,
    lambdas: [...byLambda.values()],
    perLabel,
    families,
    hottest: families[0]!,
    readPerS,
    writePerS,
    cost,
  };
}

/**
 * The multiple of the scheduler's rates (the labels `scaled` names: claims, candidates,
 * deletes, quota reads) at which the hottest key reaches its limit, hosts and their
 * refresh unchanged; Infinity when no key ever does within 1000x.
 */
export function ceiling(
  profile: Profile,
  rates: Record<string, number>,
  scaled: (label: string) => boolean,
  providers: number,
  a: Assumptions,
  d: LogDesign,
): { multiple: number; family: string } {
  const at = (m: number) => project(profile, Object.fromEntries(Object.entries(rates).map(([l, r]) => [l, scaled(l) ? r * m : r])), providers, a, d);
  if (at(1000).hottest.utilisation < 1) return { multiple: Number.POSITIVE_INFINITY, family: '' };
  let lo = 0;
  let hi = 1000;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (at(mid).hottest.utilisation < 1) lo = mid;
    else hi = mid;
  }
  return { multiple: hi, family: at(hi).hottest.family };
}
