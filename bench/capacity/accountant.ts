/**
 * The accountant (`npm run accountant`, `npm run bench -- --scenario capacity`): K local
 * containers over one DynamoDB Local behind the metering proxy, a Nova-like workload at
 * given rates (./workload.ts), and per run: per request type the calls, DynamoDB calls,
 * read / write / index units, handler CPU ms and log bytes; the hottest partition keys by
 * family; the forest-served requests' polls. Then the projection model (./model.ts)
 * calibrated on one run, validated against runs at other container counts and write
 * rates (measured vs modelled), and projected to the three cloud sizes of docs/cost.md
 * with their monthly cost. Between requests (./between.ts): the snapshot reloads of each
 * run (their periods compressed), a deploy after each base run (every container replaced
 * at once), and their projection per partition and per month.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { familyId, keyFamily, type CallRecord } from '../../local/ddb-ledger.js';
import { table } from '../../local/ddb-report.js';
import { startDynamoDbLocal, freePort, type DdbLocal } from '../../local/ddb-local.js';
import { attributeCalls, sdkStack } from '../../local/ddb-sdk.js';
import { startStack, type RunningStack } from '../../local/start.js';
import { availableNodes, baremetalClient, r1, r2 } from '../kit.js';
import {
  byFamily,
  loadEvents,
  loadProfile,
  partitions,
  projectBetween,
  queryUnits,
  type BetweenSettings,
  type Families,
  type LoadEvent,
  type PartitionUse,
} from './between.js';
import { accessLogLine, calibrate, measure, splitLoad, type RunMeasurement } from './measure.js';
import {
  ceiling,
  PARTITION_READ_LIMIT,
  PARTITION_WRITE_LIMIT,
  pollLogUnits,
  pollUnits,
  project,
  sum,
  type Assumptions,
  type LogDesign,
  type Profile,
  type Projection,
} from './model.js';
import { PRICES, SECONDS_PER_MONTH } from './prices.js';
import { projectFeed } from './feed.js';
import { AUTOSCALING_TARGET, provisionedMonthly } from './billing.js';
import { GSIS } from '../../functions/store/ddb/table.js';
import {
  CANDIDATES_QUERY,
  Driver,
  LIBVIRT_HOST_TRAITS,
  labelRates,
  runWorkload,
  type Host,
  type RequestRecord,
  type WorkloadRates,
} from './workload.js';

export interface AccountantOptions {
  hosts: number;
  /** container counts to measure at the base rates */
  containers: number[];
  claimsPerS: number;
  candidatesPerS: number;
  /** Nova's refresh period, time-compressed (s) */
  refreshPeriodS: number;
  /** measured seconds per run (after the warm phase) */
  durationS: number;
  /** instance lifetime; also the warm phase before measuring (so deletes run at the claim rate) */
  lifetimeS: number;
  baremetalPerS: number;
  /** validation: container counts x claim rates (the first pair calibrates the model) */
  validate?: { containers: number[]; claimsPerS: number[] };
  maintenanceIntervalS: number;
  /**
   * the periods between requests, time-compressed as Nova's refresh is: a warm forest's
   * reload (SNAPSHOT_RESYNC_S, 900 s in Lambda) and the image writer's cadence
   * (FOREST_IMAGE_INTERVAL_S, 600 s)
   */
  resyncS: number;
  imageIntervalS: number;
  /** after each run, a deploy: every container replaced at once, each answering one request (its cold load measured) */
  deploy: boolean;
  seed: number;
  /** project from a profile saved by an earlier run (its --json file) instead of measuring */
  profileFrom?: string;
}

export const DEFAULTS: AccountantOptions = {
  hosts: 100,
  containers: [1, 2, 4, 8],
  claimsPerS: 2,
  candidatesPerS: 4,
  refreshPeriodS: 30,
  durationS: 60,
  lifetimeS: 10,
  baremetalPerS: 0.1,
  validate: { containers: [2, 8], claimsPerS: [1, 4] },
  maintenanceIntervalS: 20,
  resyncS: 30,
  imageIntervalS: 20,
  deploy: true,
  seed: 7,
};

export interface Reporter {
  say(line: string): void;
  emit(record: Record<string, unknown>): void;
}

export interface RunResult {
  containers: number;
  claimsPerS: number;
  m: RunMeasurement;
  profile: Profile;
  /** requests the run made, and those that failed (5xx) */
  requests: number;
  failures: string[];
  dispatched: number[];
  /** the reload period the run used (s, compressed) */
  resyncS: number;
  /** the snapshot loads in the measured window (reloads, catch-ups) */
  loads: LoadEvent[];
  /** the deploy after the run, when measured */
  deploy?: DeployMeasure;
}

/** A deploy: every container replaced at once, one request each (its cold load). */
export interface DeployMeasure {
  containers: number;
  /** the image's age when the new containers loaded it (s), and the change-log bytes written since it was taken (less the overlap) */
  imageAgeS: number;
  logBytesSinceImage: number;
  /** each new container's load */
  loads: LoadEvent[];
  /** every partition the burst read (the loads and the requests), busiest first */
  partitions: PartitionUse[];
  /** first answers of the new containers (ms): each one's first request, whoever sent it */
  firstAnswerMs: number[];
}

/**
 * The change log's window the containers run with while measured: 1 s to learn a commit
 * (a write learnt later is announced again) and 0.1 s of clock skew. Lambda's own window
 * (functions/config.ts: 100 + 20 ms) is what the projection uses; measured with it here, a
 * busy 2-core machine whose DynamoDB Local answers in hundreds of ms would announce most
 * writes twice and count the second transaction as if AWS made it.
 */
const MEASURED_WINDOW = { CHANGE_LOG_LATE_MS: '1000', CLOCK_SKEW_MS: '100' };

/** the change log's key family and constants, from the code (whatever they are when this runs): as measured here, and as in Lambda */
export async function logDesign(): Promise<{ family: string; design: LogDesign; lambda: LogDesign }> {
  for (const [k, v] of Object.entries(MEASURED_WINDOW)) process.env[k] ??= v;
  const { loadConfig, resetConfig } = await import('../../functions/config.js');
  resetConfig();
  const { K } = await import('../../functions/store/placement/keys.js');
  const { overlapMs } = await import('../../functions/store/placement/changelog.js');
  const { config } = await import('../../functions/config.js');
  const lambda = loadConfig({ ...process.env, AWS_LAMBDA_FUNCTION_NAME: 'accountant', CHANGE_LOG_LATE_MS: '', CLOCK_SKEW_MS: '' });
  // one partition per shard, no time buckets: a window meets each shard once
  const design = (overlapS: number): LogDesign => ({ overlapS, bucketS: Number.POSITIVE_INFINITY, shards: config().changeLogShards });
  return {
    family: keyFamily(K.changeLog(0)),
    design: design(overlapMs() / 1000),
    lambda: design((lambda.changeLogLateMs + lambda.clockSkewMs) / 1000),
  };
}

/** the key families a snapshot load reads, from the code */
export async function loadFamilies(): Promise<Families> {
  const { K } = await import('../../functions/store/placement/keys.js');
  return { log: keyFamily(K.changeLog(0)), chunks: keyFamily(K.imageChunk('1-a', 0).pk), index: 'gsi1:' };
}

function hostsFor(n: number, aggregates: string[]): Host[] {
  return Array.from({ length: n }, (_, i) => ({
    uuid: randomUUID(),
    name: `compute-${i}`,
    // half of the hosts in one aggregate each (Nova then also asks for sharing providers)
    aggregates: i % 2 === 0 ? [aggregates[(i / 2) % aggregates.length]!] : [],
  }));
}

async function setupCloud(stack: RunningStack, hosts: Host[]): Promise<void> {
  // this process writes through the same meter (labelled setup, outside the measured window)
  const { resetConfig } = await import('../../functions/config.js');
  resetConfig();
  const { ddbRaw } = await import('../../functions/store/ddb/client.js');
  attributeCalls(sdkStack(ddbRaw()), () => ({ container: 'accountant', request: 'setup', label: 'setup', family: 'setup' }));
  const { bulkLoadProviders } = await import('../../functions/store/placement/bulk.js');
  const { imageAfterBulkLoad } = await import('../../functions/store/placement/bulk-image.js');
  const r = await bulkLoadProviders(
    hosts.map((h) => ({
      uuid: h.uuid,
      name: h.name,
      inventories: {
        VCPU: { total: 64, allocation_ratio: 16 },
        MEMORY_MB: { total: 524288, reserved: 4096, allocation_ratio: 1.5 },
        DISK_GB: { total: 4000, reserved: 100 },
      },
      traits: LIBVIRT_HOST_TRAITS,
      aggregates: h.aggregates,
    })),
    { concurrency: 8 },
  );
  await imageAfterBulkLoad(r);
  void stack;
}

/** One measured run: a fresh table, K containers, the cloud, a warm-up, the workload. */
export async function runOnce(ddb: DdbLocal, o: AccountantOptions, k: number, claimsPerS: number, say: (s: string) => void): Promise<RunResult> {
  const { family: logFamily } = await logDesign();
  const stack = await startStack({
    fresh: false,
    ddbEndpoint: ddb.endpoint,
    tableName: `acct_${randomUUID().replace(/-/g, '').slice(0, 12)}`,
    placementPort: await freePort(),
    baremetalPort: await freePort(),
    host: '127.0.0.1',
    maintenanceInterval: o.maintenanceIntervalS,
    dataDir: '',
    dashboardPort: null,
    ddbMeter: true,
    containers: k,
    childProcesses: true,
    containerConcurrency: 1,
    quietContainers: true,
    // as in AWS: JSON logs at the default level, CloudWatch metric lines on
    containerEnv: {
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'INFO',
      POWERTOOLS_METRICS_DISABLED: 'false',
      BAREMETAL_FAKE_DELAY_MS: '0',
      SNAPSHOT_RESYNC_S: String(o.resyncS),
      FOREST_IMAGE_INTERVAL_S: String(o.imageIntervalS),
    },
  });
  try {
    const meter = stack.meter!;
    const aggregates = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const hosts = hostsFor(o.hosts, aggregates);
    const t0 = performance.now();
    await setupCloud(stack, hosts);
    const rc = 'ACCT_METAL';
    const nodes = o.baremetalPerS > 0 ? await availableNodes(baremetalClient(stack.baremetalUrl), rc, 4) : [];
    say(`  K=${k} claims/s=${claimsPerS}: ${o.hosts} hosts loaded, ${nodes.length} bare-metal nodes in ${r1((performance.now() - t0) / 1000)} s`);
    // warm-up: each container loads its snapshot once (cold), then a few warm rounds
    const warm = new Driver(stack.placementUrl, stack.baremetalUrl);
    const q = `/allocation_candidates?${CANDIDATES_QUERY}`;
    for (let i = 0; i < k; i++) await warm.send('placement', 'cold', 'GET', q, { version: '1.36' });
    for (let i = 0; i < 2 * k; i++) await warm.send('placement', 'warmup', 'GET', q, { version: '1.36' });
    const rates: WorkloadRates = {
      hosts: o.hosts,
      providersPerHost: 1,
      aggregatedShare: 0.5,
      refreshPeriodS: o.refreshPeriodS,
      claimsPerS,
      candidatesPerS: Math.max(claimsPerS, (o.candidatesPerS * claimsPerS) / o.claimsPerS),
      deletesPerS: claimsPerS,
      usagesPerClaim: 2,
      baremetalPerS: o.baremetalPerS,
    };
    const projects = Array.from({ length: 5 }, () => randomUUID().replace(/-/g, ''));
    const start = Date.now();
    // the deploy: at the end of the measured window, with the workload going on (its log to replay)
    const tail = o.deploy && stack.containers ? DEPLOY_TAIL_S : 0;
    const deploying = tail
      ? new Promise<DeployMeasure>((resolve, reject) =>
          setTimeout(() => measureDeploy(stack, warm, k, q, logFamily).then(resolve, reject), (o.lifetimeS + o.durationS) * 1000),
        )
      : undefined;
    const d = await runWorkload({
      placementUrl: stack.placementUrl,
      baremetalUrl: stack.baremetalUrl,
      hosts,
      rates,
      durationS: o.lifetimeS + o.durationS + tail,
      lifetimeS: o.lifetimeS,
      projects,
      baremetalClass: nodes.length ? rc : undefined,
      seed: o.seed,
    });
    const deploy = await deploying;
    if (deploy) deploy.firstAnswerMs = firstAnswers(deploy, [...warm.records, ...d.records]);
    const records = [...meter.records];
    const requests: RequestRecord[] = [...warm.records.filter((r) => r.label !== 'deploy'), ...d.records];
    const window = { from: start + o.lifetimeS * 1000, to: start + (o.lifetimeS + o.durationS) * 1000 };
    const m = measure({ containers: k, records, requests, window, providers: o.hosts, changeLogFamily: logFamily });
    // calibration extras: what the keys name, the cold loads, the access log lines
    const entities = new Set<string>([...hosts.map((h) => h.uuid), ...nodes]);
    for (const r of requests) for (const seg of r.path.split(/[/?=&,:]/)) if (/^[0-9a-f-]{32,36}$/.test(seg)) entities.add(seg);
    const coldReads = coldLoadUnits(records, requests, m);
    const accessLogBytes: Record<string, number> = {};
    const counts: Record<string, number> = {};
    for (const r of requests) {
      accessLogBytes[r.label] = (accessLogBytes[r.label] ?? 0) + accessLogLine(r).length;
      counts[r.label] = (counts[r.label] ?? 0) + 1;
    }
    for (const l of Object.keys(accessLogBytes)) accessLogBytes[l]! /= counts[l]!;
    const profile = calibrate(m, logFamily, { entities, projects: new Set(projects), load: splitLoad(coldReads, o.hosts), accessLogBytes });
    return {
      containers: k,
      claimsPerS,
      m,
      profile,
      requests: d.records.length,
      failures: [...warm.failures, ...d.failures],
      dispatched: [...(stack.containers?.dispatched ?? [])],
      resyncS: o.resyncS,
      loads: loadEvents(
        records.filter((r) => r.t >= window.from && r.t < window.to),
        await loadFamilies(),
      ),
      deploy,
    };
  } finally {
    await stack.stop();
  }
}

/** how long the workload goes on after the measured window: the deploy happens then */
const DEPLOY_TAIL_S = 15;

/**
 * A deploy at the end of the measured window, the workload going on: every container
 * replaced by a new process at once, then one request to each, all in flight together
 * (the cold burst; the workload's own requests reach the new containers too). Measured: each new container's
 * load, every partition the burst read, the image's age and the change-log bytes written
 * since it was taken (what each new container replays).
 */
async function measureDeploy(stack: RunningStack, driver: Driver, k: number, q: string, logFamily: string): Promise<DeployMeasure> {
  const meter = stack.meter!;
  const { overlapMs } = await import('../../functions/store/placement/changelog.js');
  // (the workload's requests reach the new containers as soon as they are in place: measured from the restart on)
  const from = Date.now();
  const seen = meter.records.length;
  await stack.containers!.restart();
  await Promise.all(Array.from({ length: k }, () => driver.send('placement', 'deploy', 'GET', q, { version: '1.36' })));
  // every new container has loaded once each has answered one request (the workload's requests reach them too)
  const fam = await loadFamilies();
  const cold = () => loadEvents(meter.records.slice(seen), fam).filter((e) => e.work === 'cold');
  for (let i = 0; i < 50 && new Set(cold().map((e) => e.container)).size < k; i++) await new Promise((r) => setTimeout(r, 200));
  const loads = cold();
  const end = Math.max(...loads.map((e) => e.end));
  const burst = meter.records.slice(seen).filter((r) => r.t >= from && r.t <= end);
  // what each load's replay had to read: the entries since its image's takenAt less the overlap, stored before its query
  const written = meter.records.flatMap((r) =>
    r.outcome === 'ok'
      ? r.keys.filter((x) => x.write && familyId(x) === logFamily).map((x) => ({ at: Number(x.sk?.slice(0, 13)), end: r.end, bytes: x.bytes }))
      : [],
  );
  const expected = loads.map((e) =>
    written.filter((w) => w.at >= (e.imageTakenAt ?? 0) - overlapMs() && w.end <= (e.log.at ?? e.end)).reduce((n, w) => n + w.bytes, 0),
  );
  const ages = loads.map((e) => ((e.log.at ?? e.t) - (e.imageTakenAt ?? e.t)) / 1000);
  return {
    containers: k,
    imageAgeS: ages.reduce((a, b) => a + b, 0) / Math.max(1, ages.length),
    logBytesSinceImage: expected.reduce((a, b) => a + b, 0) / Math.max(1, expected.length),
    loads,
    partitions: partitions(burst),
    firstAnswerMs: [],
  };
}

/** each new container's first answer (ms): the first request it served, the workload's or the deploy's */
function firstAnswers(d: DeployMeasure, requests: RequestRecord[]): number[] {
  const fresh = new Set(d.loads.map((e) => e.container));
  const first = new Map<string, RequestRecord>();
  for (const r of requests) if (fresh.has(r.container) && (!first.has(r.container) || r.t0 < first.get(r.container)!.t0)) first.set(r.container, r);
  return [...first.values()].map((r) => r.t1 - r.t0);
}

/** read units and bytes by family of one container's first (cold) request, less a warm request's units */
function coldLoadUnits(records: CallRecord[], requests: RequestRecord[], m: RunMeasurement): Record<string, { units: number; bytes: number }> {
  const cold = new Set(requests.filter((r) => r.label === 'cold').map((r) => r.id));
  const out: Record<string, { units: number; bytes: number }> = {};
  for (const rec of records) {
    // (the load itself is named `<request>/cold`: local/container.ts)
    if (!rec.who || !cold.has(rec.who.request.split('/')[0]!)) continue;
    for (const k of rec.keys) {
      if (!k.read) continue;
      const f = (out[familyId(k)] ??= { units: 0, bytes: 0 });
      f.units += k.read;
      f.bytes += k.bytes;
    }
  }
  const warm = m.labels['scheduler:candidates']?.readByFamily ?? {};
  const n = Math.max(1, cold.size);
  for (const [f, v] of Object.entries(out)) {
    v.units = Math.max(0, v.units / n - (warm[f] ?? 0));
    v.bytes /= n;
  }
  return out;
}

// ------------------------------------------------------------------ reports

export function reportRun(rep: Reporter, run: RunResult, top = 12): void {
  const { m } = run;
  rep.say(
    `K=${run.containers} containers, ${run.claimsPerS} claims/s: ${Object.values(m.labels).reduce((n, l) => n + l.requests, 0)} requests in ${r1(m.seconds)} s (dispatched per container ${run.dispatched.join('/')}), ${run.failures.length} failures`,
  );
  const labels = Object.values(m.labels).sort((a, b) => a.label.localeCompare(b.label));
  rep.say(
    `\n${table(
      ['request type', 'lambda', 'req/s', 'ddb calls', 'read', 'write', 'index', 'round trips', 'cpu ms', 'log B', 'forest'],
      labels.map((l) => [
        l.label,
        l.lambda.replace(/^placement-|^baremetal-/, ''),
        r2(l.perS),
        r2(l.calls),
        r2(l.read),
        r2(l.write),
        r2(l.indexWrite),
        r2(l.waves),
        r1(l.cpuMs),
        Math.round(l.logBytes),
        l.polls ? 'polls' : '',
      ]),
    )}\n(units per request, AWS's rules; cpu: the container's CPU time while the handler ran)`,
  );
  for (const l of labels) {
    rep.emit({
      kind: 'request-type',
      containers: run.containers,
      claims_per_s: run.claimsPerS,
      label: l.label,
      lambda: l.lambda,
      per_s: r2(l.perS),
      requests: l.requests,
      statuses: l.statuses,
      ddb_calls: r2(l.calls),
      read_units: r2(l.read),
      write_units: r2(l.write),
      index_units: r2(l.indexWrite),
      round_trips: r2(l.waves),
      cpu_ms: r1(l.cpuMs),
      log_bytes: Math.round(l.logBytes),
      polls: l.polls,
      read_by_family: rounded(l.readByFamily),
      write_by_family: rounded(l.writeByFamily),
    });
  }
  for (const [label, b] of Object.entries(m.background))
    rep.say(`background ${label}: ${b.runs} run(s), ${b.calls} calls, ${r1(b.read)} read, ${r1(b.write)} write, ${r1(b.indexWrite)} index units`);
  // consistency: per-request sums + background = the meter's totals; per-key sums = per-call sums
  const perLabel =
    labels.reduce((n, l) => n + (l.read + l.write + l.indexWrite) * l.requests, 0) +
    Object.values(m.background).reduce((n, b) => n + b.read + b.write + b.indexWrite, 0);
  const keySum = m.keys.reduce((n, k) => n + k.read + k.write, 0);
  const total = m.totals.read + m.totals.write + m.totals.indexWrite;
  rep.say(
    `accounted: ${r1(perLabel)} units to request types + background, ${r1(keySum)} to keys, meter total ${r1(total)}; ${m.unaccounted} call(s) unaccounted`,
  );
  // hottest keys by family
  const fams = new Map<string, { read: number; write: number; hot: string; hotUnits: number; peakR: number; peakW: number; keys: number }>();
  for (const k of m.keys) {
    const f = fams.get(k.family) ?? { read: 0, write: 0, hot: '', hotUnits: -1, peakR: 0, peakW: 0, keys: 0 };
    f.read += k.read;
    f.write += k.write;
    f.keys++;
    if (k.read + k.write > f.hotUnits) {
      f.hot = k.key;
      f.hotUnits = k.read + k.write;
    }
    f.peakR = Math.max(f.peakR, k.peakReadPerS);
    f.peakW = Math.max(f.peakW, k.peakWritePerS);
    fams.set(k.family, f);
  }
  const hot = [...fams.entries()].sort((a, b) => b[1].hotUnits - a[1].hotUnits).slice(0, top);
  rep.say(
    `\nhottest partition keys by family (units/s over the window; busiest second of the hottest key)\n${table(
      ['family', 'keys', 'read/s', 'write/s', 'hottest key', 'its units/s', 'peak read/s', 'peak write/s', 'fan-out r/w'],
      hot.map(([f, v]) => [
        f,
        v.keys,
        r2(v.read / m.seconds),
        r2(v.write / m.seconds),
        v.hot.length > 44 ? `${v.hot.slice(0, 41)}...` : v.hot,
        r2(v.hotUnits / m.seconds),
        r1(v.peakR),
        r1(v.peakW),
        `${r1(m.fanOut.read.get(f) ?? 0)}/${r1(m.fanOut.write.get(f) ?? 0)}`,
      ]),
    )}`,
  );
  rep.emit({
    kind: 'hot-families',
    containers: run.containers,
    claims_per_s: run.claimsPerS,
    families: hot.map(([f, v]) => ({
      family: f,
      read_per_s: r2(v.read / m.seconds),
      write_per_s: r2(v.write / m.seconds),
      hottest: v.hot,
      hottest_per_s: r2(v.hotUnits / m.seconds),
    })),
  });
}

/** The costs between requests a run measured: its reloads and catch-ups, and the deploy after it. */
export function reportBetween(rep: Reporter, run: RunResult, shards: number): void {
  const groups = new Map<string, LoadEvent[]>();
  for (const e of run.loads) groups.set(`${e.work} via ${e.route}`, [...(groups.get(`${e.work} via ${e.route}`) ?? []), e]);
  const mean = (l: LoadEvent[], f: (e: LoadEvent) => number) => (l.length ? l.reduce((n, e) => n + f(e), 0) / l.length : 0);
  const fams = (l: LoadEvent[]) => {
    const t: Record<string, number> = {};
    for (const e of l) for (const [f, v] of Object.entries(e.byFamily)) t[f] = (t[f] ?? 0) + v.units / l.length;
    return Object.entries(t)
      .filter(([, u]) => u >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([f, u]) => `${f} ${r1(u)}`)
      .join(', ');
  };
  if (groups.size) {
    rep.say(
      `\nsnapshot loads between requests in the window (K=${run.containers}; reloads every ${run.resyncS} s here)\n${table(
        ['load', 'count', 'per container/min', 'read units', 'log bytes', 'by family'],
        [...groups.entries()].map(([g, l]) => [
          g,
          l.length,
          r2(l.length / run.containers / (run.m.seconds / 60)),
          r1(mean(l, (e) => e.read)),
          Math.round(mean(l, (e) => e.log.bytes)),
          fams(l),
        ]),
      )}`,
    );
  }
  for (const [g, l] of groups)
    rep.emit({
      kind: 'between-loads',
      containers: run.containers,
      claims_per_s: run.claimsPerS,
      load: g,
      count: l.length,
      read_units: r2(mean(l, (e) => e.read)),
      log_bytes: Math.round(mean(l, (e) => e.log.bytes)),
    });
  const d = run.deploy;
  if (!d) return;
  const expected = queryUnits(d.logBytesSinceImage / shards) * shards;
  const ms = [...d.firstAnswerMs].sort((a, b) => a - b);
  rep.say(
    `\ndeploy: ${d.containers} containers replaced at once, one request each; the image ${r1(d.imageAgeS)} s old, ${Math.round(d.logBytesSinceImage).toLocaleString('en-US')} change-log bytes since it\n` +
      `  per new container: ${r1(mean(d.loads, (e) => e.read))} read units (${fams(d.loads)}); its replay ${r1(mean(d.loads, (e) => e.log.units))} units in ${r1(mean(d.loads, (e) => e.log.queries))} queries of ${Math.round(mean(d.loads, (e) => e.log.bytes))} bytes (modelled from the bytes written: ${r1(expected)} units)\n` +
      `  first answers ${Math.round(ms[0] ?? 0)}–${Math.round(ms[ms.length - 1] ?? 0)} ms (this machine, ${d.containers} processes loading at once)`,
  );
  rep.say(
    `${table(
      ['family', 'partitions', 'busiest partition', 'its read units', 'per container', 'busiest second', 'of limit'],
      byFamily(d.partitions)
        .slice(0, 8)
        .map((f) => [
          f.family,
          f.partitions,
          f.hottest.key.length > 40 ? `${f.hottest.key.slice(0, 37)}...` : f.hottest.key,
          r1(f.hottest.read),
          r2(f.hottest.read / d.containers),
          r1(f.hottest.peakReadPerS),
          `${r1(f.hottest.peakShare * 100)} %`,
        ]),
    )}`,
  );
  rep.emit({
    kind: 'deploy',
    containers: run.containers,
    claims_per_s: run.claimsPerS,
    image_age_s: r1(d.imageAgeS),
    log_bytes_since_image: Math.round(d.logBytesSinceImage),
    per_container_read_units: r2(mean(d.loads, (e) => e.read)),
    replay: {
      units: r2(mean(d.loads, (e) => e.log.units)),
      queries: r2(mean(d.loads, (e) => e.log.queries)),
      bytes: Math.round(mean(d.loads, (e) => e.log.bytes)),
      modelled_units: r2(expected),
    },
    first_answer_ms: ms.map(Math.round),
    partitions: byFamily(d.partitions).map((f) => ({
      family: f.family,
      partitions: f.partitions,
      hottest: f.hottest.key,
      read: r2(f.hottest.read),
      peak_per_s: r2(f.hottest.peakReadPerS),
    })),
  });
}

function rounded(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r2(v)]));
}

/** forest-served read units per request of a run (all polling types together, and per type) */
export function forestReads(m: RunMeasurement): { all: number; byLabel: Record<string, number> } {
  const polling = Object.values(m.labels).filter((l) => l.polls);
  const n = polling.reduce((a, l) => a + l.requests, 0);
  return {
    all: n ? polling.reduce((a, l) => a + l.read * l.requests, 0) / n : 0,
    byLabel: Object.fromEntries(polling.map((l) => [l.label, l.read])),
  };
}

/** The model's prediction for a run's forest-served requests, from a profile calibrated elsewhere. */
export function predictRun(
  profile: Profile,
  m: RunMeasurement,
  d: LogDesign,
): Record<string, { gapS: number; log: number; catchUp: number; total: number }> {
  const rates = Object.fromEntries(Object.values(m.labels).map((l) => [l.label, l.perS]));
  const polls = Object.values(m.labels)
    .filter((l) => profile.labels[l.label]?.polls)
    .reduce((n, l) => n + l.perS, 0);
  const gapS = m.containers / Math.max(polls, 1e-9);
  const logBytesPerS = Object.entries(rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.logBytesWritten ?? 0), 0);
  const changesPerS = Object.entries(rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.providerChanges ?? 0), 0);
  const out: Record<string, { gapS: number; log: number; catchUp: number; total: number }> = {};
  for (const l of Object.values(m.labels)) {
    if (!profile.labels[l.label]?.polls) continue;
    const p = pollUnits(profile, l.label, { gapS, logBytesPerS, changesPerS, providers: m.providers }, d);
    out[l.label] = { gapS, log: p.log, catchUp: p.catchUp, total: p.total };
  }
  return out;
}

export function reportValidation(rep: Reporter, calibration: RunResult, runs: RunResult[], d: LogDesign): void {
  const rows: Array<Array<string | number>> = [];
  for (const run of runs) {
    const pred = predictRun(calibration.profile, run.m, d);
    const polls = run.m.polls;
    const mean = (f: (p: (typeof polls)[number]) => number) => (polls.length ? polls.reduce((n, p) => n + f(p), 0) / polls.length : 0);
    const labels = Object.values(run.m.labels).filter((l) => pred[l.label]);
    const n = labels.reduce((a, l) => a + l.requests, 0);
    const measured = n ? labels.reduce((a, l) => a + l.read * l.requests, 0) / n : 0;
    const modelled = n ? labels.reduce((a, l) => a + pred[l.label]!.total * l.requests, 0) / n : 0;
    const any = Object.values(pred)[0];
    const logModel = any?.log ?? 0;
    const catchModel = any?.catchUp ?? 0;
    const catchMeasured =
      mean((p) => sum(p.otherRead)) - (n ? labels.reduce((a, l) => a + sum(calibration.profile.labels[l.label]?.read ?? {}) * l.requests, 0) / n : 0);
    rows.push([
      `K=${run.containers} ${run.claimsPerS}/s${run === calibration ? ' (calibration)' : ''}`,
      r2(mean((p) => p.gapS)),
      r2(any?.gapS ?? 0),
      r2(mean((p) => p.logQueries)),
      r2(mean((p) => p.logBytes)),
      r2(mean((p) => p.logUnits)),
      r2(logModel),
      r2(catchMeasured),
      r2(catchModel),
      r2(measured),
      r2(modelled),
      `${r1(((modelled - measured) / Math.max(measured, 1e-9)) * 100)} %`,
    ]);
    rep.emit({
      kind: 'validation',
      containers: run.containers,
      claims_per_s: run.claimsPerS,
      calibration: run === calibration,
      gap_s: { measured: r2(mean((p) => p.gapS)), modelled: r2(any?.gapS ?? 0) },
      log_units_per_poll: { measured: r2(mean((p) => p.logUnits)), modelled: r2(logModel) },
      catch_up_units: { measured: r2(catchMeasured), modelled: r2(catchModel) },
      forest_read_units: { measured: r2(measured), modelled: r2(modelled) },
    });
  }
  rep.say(
    `\nvalidation: forest-served read units per request, measured vs modelled (calibrated on K=${calibration.containers} at ${calibration.claimsPerS} claims/s)\n${table(
      ['run', 'gap s', 'model', 'log queries', 'log bytes', 'log units', 'model', 'catch-up', 'model', 'read/req', 'model', 'error'],
      rows,
    )}`,
  );
}

export interface ScenarioSpec {
  name: string;
  hosts: number;
  claimsPerS: number;
  candidatesPerS: number;
  /**
   * deployment settings for this size, as docs/cost.md sizes them (the measured run used the
   * defaults): USAGE_SHARDS, and CHANGE_LOG_SHARDS — 'sized': the fewest that keep every log
   * partition at or below 75 % of its limit, if any does
   */
  settings?: { usageShards?: number; changeLogShards?: number | 'sized' };
}

export const SCENARIOS: ScenarioSpec[] = [
  { name: '(a) 1,000 hosts, 5 claims/s + 10 candidates/s', hosts: 1000, claimsPerS: 5, candidatesPerS: 10 },
  { name: '(b) 100,000 providers, 100 claims/s + 200 candidates/s', hosts: 100_000, claimsPerS: 100, candidatesPerS: 200 },
  {
    name: '(c) 10 x (b): 1,000,000 providers, 1,000 claims/s + 2,000 candidates/s',
    hosts: 1_000_000,
    claimsPerS: 1000,
    candidatesPerS: 2000,
    settings: { usageShards: 4, changeLogShards: 'sized' },
  },
];

/** the fewest containers a projection's deploy starts at once (more when more are warm): each loads the image and replays the log since */
export const COLD_BURST = 50;

export const SCHEDULER_LABELS = new Set([
  'scheduler:candidates',
  'claim:get',
  'claim:put',
  'quota:usages-project',
  'quota:usages-user',
  'delete:get',
  'delete:put',
]);

export async function defaultAssumptions(): Promise<Assumptions> {
  const { FOREST_FAMILIES } = await import('../../cdk/lib/placement-api.js');
  const { config } = await import('../../functions/config.js');
  const forest = new Set(FOREST_FAMILIES.map((f: string) => `placement-${f}`));
  return {
    warmFactor: 3,
    minWarm: 2,
    ddbRttMs: 6,
    // cdk/lib/placement-api.ts and maintenance.ts: forest families and maintenance get forestMemoryMb (3008 by default), the others 1024
    memoryMb: (lambda) => (forest.has(lambda) || lambda === 'maintenance' ? 3008 : 1024),
    platformLogBytes: 500,
    containerLifetimeS: 2 * 3600,
    resyncS: config().snapshotResyncS,
    maintenancePerS: 1 / 60,
    hotProjectShare: 0.25,
  };
}

export function scenarioRates(s: ScenarioSpec): Record<string, number> {
  return labelRates({
    hosts: s.hosts,
    providersPerHost: 1,
    aggregatedShare: 0.5,
    refreshPeriodS: 300,
    claimsPerS: s.claimsPerS,
    candidatesPerS: s.candidatesPerS,
    deletesPerS: s.claimsPerS,
    usagesPerClaim: 2,
    baremetalPerS: 0,
  });
}

const money = (x: number) => `$${x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2)}`;

/** the assumptions and log design of a scenario's settings (the profile was measured with the code's defaults) */
async function withSettings(
  s: ScenarioSpec,
  profile: Profile,
  a0: Assumptions,
  d0: LogDesign,
): Promise<{ a: Assumptions; d: LogDesign; note: string }> {
  const { config } = await import('../../functions/config.js');
  const usage = s.settings?.usageShards;
  const usageFamily = Object.keys(profile.spread).find((f) => profile.spread[f] === 'project');
  const a = usage && usageFamily ? { ...a0, spreadFactor: { [usageFamily]: usage / config().usageShards } } : a0;
  let d = d0;
  const want = s.settings?.changeLogShards;
  if (typeof want === 'number') d = { ...d0, shards: want };
  else if (want === 'sized') {
    const rates = scenarioRates(s);
    const logUse = (shards: number) =>
      project(profile, rates, s.hosts, a, { ...d0, shards }).families.find((f) => f.family === profile.changeLogFamily)?.utilisation ?? 0;
    let shards = d0.shards;
    while (shards < 256 && logUse(shards) > 0.75) shards = shards < 8 ? shards + 1 : shards * 2;
    d = { ...d0, shards };
  }
  // the change feed's partitions (FEED_SHARDS), sized for the scenario's changes (bench/capacity/feed.ts)
  const rates = scenarioRates(s);
  const feedShards = projectFeed((rates['claim:put'] ?? 0) + (rates['delete:put'] ?? 0)).shards;
  const feedFamily = Object.keys({ ...profile.spread }).find((f) => f.startsWith('FEED#')) ?? 'FEED#*';
  const withFeed = { ...a, partitions: { ...a.partitions, [feedFamily]: feedShards } };
  const note = [
    usage ? `USAGE_SHARDS=${usage}` : '',
    d.shards !== d0.shards ? `CHANGE_LOG_SHARDS=${d.shards}` : '',
    feedShards > 1 ? `FEED_SHARDS=${feedShards}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return { a: withFeed, d, note };
}

/** What the projections of the costs between requests start from: one cold load, and the share of reloads that read the index. */
export interface BetweenProfile {
  load: ReturnType<typeof loadProfile>;
  resyncIndexShare: number;
}

/** the between-request profile of runs: their deploys' cold loads and their windows' reloads */
export async function betweenProfile(runs: RunResult[], providers: number): Promise<BetweenProfile | undefined> {
  const events = runs.flatMap((r) => [...r.loads, ...(r.deploy?.loads ?? [])]);
  if (!events.some((e) => e.route === 'image')) return undefined;
  const resyncs = runs.flatMap((r) => r.loads.filter((e) => e.work === 'resync'));
  return {
    load: loadProfile(events, await loadFamilies(), providers),
    resyncIndexShare: resyncs.length ? resyncs.filter((e) => e.route === 'index').length / resyncs.length : 0,
  };
}

/** the maintenance function's schedule in AWS (cdk/lib/maintenance.ts: every minute) */
const MAINTENANCE_PERIOD_S = 60;
/** the image chunks' key family */
const IMAGE_FAMILY = 'IMG#*#*';
/** the deploy procedure's image cadence (docs/cost.md: `npx berth image --every 2` through a deploy), and its image's age at worst (a delta written within a second) */
const DEPLOY_WINDOW_EVERY_S = 2;
const DEPLOY_WINDOW_AGE_S = DEPLOY_WINDOW_EVERY_S + 1;
/** a gradual deploy's steps (-c forestDeploy=linear: CodeDeploy's 10 % every minute) */
const LINEAR_DEPLOY_STEPS = 10;
/** the bounded-staleness setting the projection shows beside Placement's meaning (SNAPSHOT_MAX_STALENESS_MS) */
const STALENESS_S = 0.25;

/**
 * The busiest change-log partition's share of its limit (reads or writes), as deployed
 * (`d`), with the code's default of one partition, and with SNAPSHOT_MAX_STALENESS_MS =
 * STALENESS_S: a warm container polls then at most once per STALENESS_S, its requests in
 * between answered from its forest.
 */
export function logFloor(
  p: Projection,
  profile: Profile,
  d: LogDesign,
  logBytesPerS: number,
): Array<{ setting: string; share: number; polls: number }> {
  const forest = p.lambdas.filter((x) => x.pollsPerS > 0);
  const writes = Object.entries(p.rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.write[profile.changeLogFamily] ?? 0), 0);
  const at = (shards: number, stalenessS: number) => {
    const dd = { ...d, shards };
    let reads = 0;
    let polls = 0;
    for (const x of forest) {
      const n = stalenessS > 0 ? Math.min(x.pollsPerS, x.warm / stalenessS) : x.pollsPerS;
      polls += n;
      reads += n * pollLogUnits(x.warm / n, logBytesPerS, dd);
    }
    return { share: Math.max(reads / shards / PARTITION_READ_LIMIT, writes / shards / PARTITION_WRITE_LIMIT), polls };
  };
  const out = [{ setting: `as deployed (CHANGE_LOG_SHARDS=${d.shards})`, ...at(d.shards, 0) }];
  if (d.shards !== 1) out.push({ setting: 'the defaults (1)', ...at(1, 0) });
  out.push({ setting: `SNAPSHOT_MAX_STALENESS_MS=${STALENESS_S * 1000} (${d.shards} shards)`, ...at(d.shards, STALENESS_S) });
  return out;
}

export async function reportProjections(
  rep: Reporter,
  profile: Profile,
  a0: Assumptions,
  d0: LogDesign,
  between?: BetweenProfile,
): Promise<Projection[]> {
  const out: Projection[] = [];
  const { loadConfig } = await import('../../functions/config.js');
  const lambdaConfig = loadConfig({ ...process.env, AWS_LAMBDA_FUNCTION_NAME: 'accountant', FOREST_IMAGE_INTERVAL_S: '', SNAPSHOT_RESYNC_S: '' });
  const { IMAGE_CHUNK_BYTES } = await import('../../functions/store/placement/image.js');
  // an eventually consistent read of one chunk item (base64 text: 4/3 of the compressed bytes)
  const chunkReadUnits = Math.ceil(((IMAGE_CHUNK_BYTES * 4) / 3 + 100) / 4096) / 2;
  for (const s of SCENARIOS) {
    const rates = scenarioRates(s);
    const { a: a1, d, note } = await withSettings(s, profile, a0, d0);
    const a = { ...a1, chunkReadUnits };
    const p = project(profile, rates, s.hosts, a, d);
    out.push(p);
    const cap = ceiling(profile, rates, (l) => SCHEDULER_LABELS.has(l), s.hosts, a, d);
    const forest = p.perLabel.filter((x) => x.poll);
    const fr = forest.reduce((n, x) => n + x.rate, 0);
    const forestUnits = fr ? forest.reduce((n, x) => n + x.readPerRequest * x.rate, 0) / fr : 0;
    rep.say(`\n${s.name}${note ? `, deployed with ${note}` : ''}`);
    rep.say(
      `  requests ${r1(Object.values(rates).reduce((n, x) => n + x, 0))}/s; DynamoDB ${Math.round(p.readPerS).toLocaleString('en-US')} read + ${Math.round(p.writePerS).toLocaleString('en-US')} write units/s; warm containers ${p.lambdas
        .filter((x) => x.pollsPerS > 0)
        .map((x) => `${x.lambda.replace('placement-', '')} ${x.warm} (poll gap ${r2(x.gapS)} s)`)
        .join(', ')}`,
    );
    rep.say(
      `  forest-served read units per request: ${r2(forestUnits)}; claim (claim:put) ${r2(p.perLabel.find((x) => x.label === 'claim:put')?.writePerRequest ?? 0)} write units incl. index`,
    );
    rep.say(
      `\n${table(
        ['key family', 'spread', 'read/s', 'write/s', 'keys r/w', 'hottest read/s', 'hottest write/s', 'of limit'],
        p.families
          .slice(0, 8)
          .map((f) => [
            f.family,
            f.spread,
            Math.round(f.readPerS),
            Math.round(f.writePerS),
            `${r1(f.keysRead)}/${r1(f.keysWrite)}`,
            r1(f.hotReadPerS),
            r1(f.hotWritePerS),
            `${Math.round(f.utilisation * 100)} %`,
          ]),
      )}`,
    );
    const ceilingText = !Number.isFinite(cap.multiple)
      ? 'no key reaches its limit below 1000x these rates'
      : cap.multiple < 1e-6
        ? `${cap.family} is over its limit from the hosts' refresh alone, before any claim`
        : `the scheduler's rates x ${r2(cap.multiple)} = ${Math.round(s.claimsPerS * cap.multiple)} claims/s (${cap.family} at its limit)`;
    rep.say(`  first key to saturate: ${p.hottest.family} at ${Math.round(p.hottest.utilisation * 100)} % of its limit; ceiling: ${ceilingText}`);
    rep.say(
      `  monthly (${PRICES.region}, prices of ${PRICES.asOf}): DynamoDB ${money(p.cost.dynamodbRead + p.cost.dynamodbWrite)} (reads ${money(p.cost.dynamodbRead)}, writes ${money(p.cost.dynamodbWrite)}), Lambda ${money(p.cost.lambda)}, API Gateway ${money(p.cost.apiGateway)}, logs ${money(p.cost.logs)}: total ${money(p.cost.total)}`,
    );
    // the change feed: what runs after the commit (the feed items are in the write units above)
    const changesPerS = (rates['claim:put'] ?? 0) + (rates['delete:put'] ?? 0);
    const feed = projectFeed(changesPerS);
    rep.say(
      `  change feed: ${r1(changesPerS)} changes/s -> ${r1(feed.eventsPerS)} events/s (EventBridge ${money(feed.monthly.eventbridge)}), processor ${r2(feed.invocationsPerS)} invocations/s, ${r2(feed.gbSecondsPerS)} GB-s/s (Lambda ${money(feed.monthly.lambda)}), history ${r1(feed.historyWriteUnitsPerS)} write units/s (${money(feed.monthly.historyWrites)}); feed items ${r1(feed.feedItemWriteUnitsPerS)} write units/s over FEED_SHARDS=${feed.shards} (${Math.round(feed.partitionUtilisation * 100)} % of a partition): ${money(feed.monthly.total)}/month, total with the feed ${money(p.cost.total + feed.monthly.total)}`,
    );
    if (between) {
      const warm = p.lambdas.filter((x) => x.pollsPerS > 0).reduce((n, x) => n + x.warm, 0);
      const logBytesPerS = Object.entries(rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.logBytesWritten ?? 0), 0);
      const ageMax = lambdaConfig.imageIntervalS + MAINTENANCE_PERIOD_S;
      const settings: BetweenSettings = {
        providers: s.hosts,
        warm,
        burst: Math.max(warm, COLD_BURST),
        burstS: 1,
        logBytesPerS,
        shards: d.shards,
        overlapS: d.overlapS,
        imageAgeMaxS: ageMax,
        imageAgeMeanS: ageMax / 2,
        chunkItemBytes: (IMAGE_CHUNK_BYTES * 4) / 3,
        lifetimeS: a.containerLifetimeS,
        resyncS: lambdaConfig.snapshotResyncS,
        resyncIndexShare: between.resyncIndexShare,
        writerIndexS: lambdaConfig.snapshotResyncS,
        writerRunS: Math.max(MAINTENANCE_PERIOD_S, lambdaConfig.imageIntervalS),
        changesPerS: Object.entries(rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.providerChanges ?? 0), 0),
      };
      const b = projectBetween(between.load, settings);
      // the deploy procedure (docs/cost.md): `npx berth image --every 2` through the deploy, an image at most ~3 s old
      const windowed = projectBetween(between.load, { ...settings, imageAgeMaxS: DEPLOY_WINDOW_AGE_S, imageAgeMeanS: DEPLOY_WINDOW_AGE_S / 2 });
      // and a gradual deploy beside it (-c forestDeploy=linear: ten steps a minute apart)
      const linear = projectBetween(between.load, {
        ...settings,
        imageAgeMaxS: DEPLOY_WINDOW_AGE_S,
        imageAgeMeanS: DEPLOY_WINDOW_AGE_S / 2,
        steps: LINEAR_DEPLOY_STEPS,
      });
      const steady = (f: string) => p.families.find((x) => x.family === f)?.hotReadPerS ?? 0;
      const pct = (x: number) => `${Math.round(x * 100)} %`;
      const logSteady = steady(profile.changeLogFamily) / 3000;
      const chunkSteady = steady(IMAGE_FAMILY) / 3000;
      // the model's own load term (every forest container loads at start and each resync) is replaced by the measured one
      const modelLoads =
        p.lambdas.filter((x) => x.pollsPerS > 0).reduce((n, x) => n + x.warm / a.containerLifetimeS + x.warm / a.resyncS, 0) *
        (sum(profile.load.perProvider) * s.hosts + sum(profile.load.fixed));
      const dynamodb =
        p.cost.dynamodbRead + p.cost.dynamodbWrite - (modelLoads * SECONDS_PER_MONTH * PRICES.dynamodb.perMillionReadUnits) / 1e6 + b.monthly;
      // the same units/s in provisioned mode (-c tableCapacity=provisioned:…, auto scaled at AUTOSCALING_TARGET)
      const provisioned = provisionedMonthly(
        p.readPerS - modelLoads + b.turnover.perS + b.reloads.perS + b.writer.readPerS,
        p.writePerS + b.writer.writePerS,
        { indexes: GSIS.length },
      );
      // and with the change feed's items and history (issue 35), written beside each change
      const provisionedFeed = provisionedMonthly(
        p.readPerS - modelLoads + b.turnover.perS + b.reloads.perS + b.writer.readPerS,
        p.writePerS + b.writer.writePerS + feed.feedItemWriteUnitsPerS + feed.historyWriteUnitsPerS,
        { indexes: GSIS.length },
      );
      const burstLine = (x: typeof b, how: string) =>
        `a deploy of ${x.deploy.containers} forest containers loading within a second${x.deploy.steps > 1 ? ` at each of its ${x.deploy.steps} steps` : ''}, the image ${x.deploy.ageS} s old (${how}): ` +
        `each log partition ${Math.round(x.deploy.log.units).toLocaleString('en-US')} read units (${pct(x.deploy.log.share)} of its limit + ${pct(logSteady)} steady = ${pct(x.deploy.log.share + logSteady)}; ${r1(x.deploy.log.secondsOfCapacity)} s of its capacity), ` +
        `each image chunk ${Math.round(x.deploy.chunk.units)} (${pct(x.deploy.chunk.share + chunkSteady)}), the manifest ${Math.round(x.deploy.manifest.units)} (${pct(x.deploy.manifest.share)})`;
      const floor = logFloor(p, profile, d, logBytesPerS);
      rep.say(`  between requests: ${burstLine(b, `FOREST_IMAGE_INTERVAL_S ${lambdaConfig.imageIntervalS} + the writer's minute`)}`);
      rep.say(`  with the deploy procedure: ${burstLine(windowed, `npx berth image --every ${DEPLOY_WINDOW_EVERY_S} through the deploy`)}`);
      rep.say(
        `  with the deploy procedure and -c forestDeploy=linear: ${burstLine(linear, `npx berth image --every ${DEPLOY_WINDOW_EVERY_S} through the deploy`)}`,
      );
      rep.say(
        `  between requests, monthly: turnover (a container every ${a.containerLifetimeS / 3600} h) ${money(b.turnover.monthly)}, reloads every ${lambdaConfig.snapshotResyncS} s (${pct(between.resyncIndexShare)} through the index) ${money(b.reloads.monthly)}, the image writer ${money(b.writer.monthly)}: ${money(b.monthly)}; DynamoDB with them ${money(dynamodb)}`,
      );
      rep.say(
        `  DynamoDB in provisioned mode (-c tableCapacity=provisioned:…, auto scaled at ${pct(AUTOSCALING_TARGET)}): ${Math.round(provisioned.readCapacity).toLocaleString('en-US')} read + ${Math.round(provisioned.writeCapacity).toLocaleString('en-US')} write capacity units, ${money(provisioned.total)} (reads ${money(provisioned.read)}, writes ${money(provisioned.write)}) against ${money(dynamodb)} on demand; with the change feed's items and history ${money(provisionedFeed.total)}`,
      );
      rep.say(
        `  the change log's busiest partition: ${floor.map((x) => `${x.setting} ${pct(x.share)}`).join(', ')} (every forest-served poll reads every partition: ${Math.round(floor[0]!.polls)} polls/s x at least 1 unit = ${pct(floor[0]!.polls / 3000)} of each, whatever the shard count)`,
      );
      rep.emit({
        kind: 'between-projection',
        scenario: s.name,
        warm,
        deploy: {
          containers: b.deploy.containers,
          image_age_s: b.deploy.ageS,
          log_partition: {
            units: Math.round(b.deploy.log.units),
            share: r2(b.deploy.log.share),
            steady_share: r2(logSteady),
            seconds_of_capacity: r1(b.deploy.log.secondsOfCapacity),
          },
          chunk_partition: { units: Math.round(b.deploy.chunk.units), share: r2(b.deploy.chunk.share) },
          manifest: { units: Math.round(b.deploy.manifest.units), share: r2(b.deploy.manifest.share) },
          chunk_steady_share: r2(chunkSteady),
          with_procedure: {
            image_age_s: windowed.deploy.ageS,
            log_partition: {
              units: Math.round(windowed.deploy.log.units),
              share: r2(windowed.deploy.log.share),
              seconds_of_capacity: r1(windowed.deploy.log.secondsOfCapacity),
            },
          },
          with_procedure_linear: {
            steps: linear.deploy.steps,
            containers_per_step: linear.deploy.containers,
            log_partition: { units: Math.round(linear.deploy.log.units), share: r2(linear.deploy.log.share) },
            chunk_partition: { units: Math.round(linear.deploy.chunk.units), share: r2(linear.deploy.chunk.share) },
          },
        },
        log_partition_share: Object.fromEntries(floor.map((x) => [x.setting, r2(x.share)])),
        monthly_usd: {
          turnover: Math.round(b.turnover.monthly),
          reloads: Math.round(b.reloads.monthly),
          writer: Math.round(b.writer.monthly),
          total: Math.round(b.monthly),
        },
        dynamodb_with_between_usd: Math.round(dynamodb),
        dynamodb_provisioned_usd: Math.round(provisioned.total),
        dynamodb_provisioned_with_feed_usd: Math.round(provisionedFeed.total),
        provisioned_capacity: { read: Math.round(provisioned.readCapacity), write: Math.round(provisioned.writeCapacity) },
      });
    }
    // the container-count range
    const range = [10, 50, 200].map((w) => {
      const q = project(profile, rates, s.hosts, { ...a, warm: w }, d);
      const f = q.perLabel.filter((x) => x.poll);
      const n = f.reduce((k, x) => k + x.rate, 0);
      return { w, units: n ? f.reduce((k, x) => k + x.readPerRequest * x.rate, 0) / n : 0, hot: q.hottest, cost: q.cost.total };
    });
    rep.say(
      `  with W warm containers per forest-served Lambda: ${range.map((x) => `W=${x.w}: ${r2(x.units)} read units/forest request, ${x.hot.family} ${Math.round(x.hot.utilisation * 100)} %, ${money(x.cost)}/month`).join('; ')}`,
    );
    rep.emit({
      kind: 'projection',
      scenario: s.name,
      hosts: s.hosts,
      claims_per_s: s.claimsPerS,
      candidates_per_s: s.candidatesPerS,
      read_units_per_s: Math.round(p.readPerS),
      write_units_per_s: Math.round(p.writePerS),
      forest_read_units_per_request: r2(forestUnits),
      warm: Object.fromEntries(p.lambdas.filter((x) => x.pollsPerS > 0).map((x) => [x.lambda, x.warm])),
      hottest: {
        family: p.hottest.family,
        read_per_s: r1(p.hottest.hotReadPerS),
        write_per_s: r1(p.hottest.hotWritePerS),
        utilisation: r2(p.hottest.utilisation),
      },
      ceiling_claims_per_s: Number.isFinite(cap.multiple) ? Math.round(s.claimsPerS * cap.multiple) : null,
      monthly_usd: Object.fromEntries(Object.entries(p.cost).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      feed: {
        changes_per_s: r1(changesPerS),
        events_per_s: r1(feed.eventsPerS),
        invocations_per_s: r2(feed.invocationsPerS),
        gb_seconds_per_s: r2(feed.gbSecondsPerS),
        history_write_units_per_s: r1(feed.historyWriteUnitsPerS),
        feed_item_write_units_per_s: r1(feed.feedItemWriteUnitsPerS),
        feed_shards: feed.shards,
        partition_utilisation: r2(feed.partitionUtilisation),
        monthly_usd: Object.fromEntries(Object.entries(feed.monthly).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      },
      range: range.map((x) => ({
        warm: x.w,
        forest_read_units: r2(x.units),
        hottest: x.hot.family,
        utilisation: r2(x.hot.utilisation),
        monthly_usd: Math.round(x.cost),
      })),
    });
  }
  return out;
}

/** The whole accountant: base runs at each container count, validation runs, projections. */
export async function runAccountant(
  o: AccountantOptions,
  rep: Reporter,
): Promise<{ runs: RunResult[]; validation: RunResult[]; projections: Projection[] }> {
  const { design, lambda } = await logDesign();
  rep.say(
    `change log: ${design.shards} shard(s) (from the code); overlap ${design.overlapS} s while measured here, ${lambda.overlapS} s in Lambda (projections)`,
  );
  if (o.profileFrom) {
    const saved = readFileSync(o.profileFrom, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind?: string; profile?: Profile; containers?: number; claims_per_s?: number })
      .filter((r) => r.kind === 'profile')
      .pop();
    if (!saved?.profile) throw new Error(`${o.profileFrom}: no profile record (an accountant run writes one with --json)`);
    const a = await defaultAssumptions();
    const between = readFileSync(o.profileFrom, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind?: string; between?: BetweenProfile })
      .filter((r) => r.kind === 'between-profile')
      .pop()?.between;
    // (a profile saved before calibrate() fitted catch-up to provider-keyed families only)
    const p0 = saved.profile;
    p0.catchUp = Object.fromEntries(Object.entries(p0.catchUp).filter(([f]) => p0.spread[f] === 'entity'));
    rep.say(`\nprojections (saved profile of K=${saved.containers} at ${saved.claims_per_s} claims/s, ${o.profileFrom})`);
    return { runs: [], validation: [], projections: await reportProjections(rep, saved.profile, a, lambda, between) };
  }
  const ddb = await startDynamoDbLocal({ heapMb: 2048 });
  try {
    const runs: RunResult[] = [];
    for (const k of o.containers) {
      const run = await runOnce(ddb, o, k, o.claimsPerS, rep.say);
      reportRun(rep, run);
      reportBetween(rep, run, design.shards);
      runs.push(run);
    }
    if (runs.length > 1) {
      rep.say(
        `\nforest-served read units per request by container count: ${runs.map((r) => `K=${r.containers}: ${r2(forestReads(r.m).all)}`).join(', ')}`,
      );
      for (const r of runs) rep.emit({ kind: 'forest-reads', containers: r.containers, claims_per_s: r.claimsPerS, ...roundAll(forestReads(r.m)) });
    }
    const validation: RunResult[] = [];
    if (o.validate) {
      for (const k of o.validate.containers) {
        for (const c of o.validate.claimsPerS) {
          const same = runs.find((r) => r.containers === k && r.claimsPerS === c);
          // (the deploy is measured after the base runs only)
          const run = same ?? (await runOnce(ddb, { ...o, deploy: false }, k, c, rep.say));
          if (!same) reportRun(rep, run, 6);
          validation.push(run);
        }
      }
      reportValidation(rep, validation[0]!, validation, design);
    }
    const calibration = validation[0] ?? runs.find((r) => r.containers === 2) ?? runs[0]!;
    rep.emit({ kind: 'profile', containers: calibration.containers, claims_per_s: calibration.claimsPerS, profile: calibration.profile });
    const a = await defaultAssumptions();
    rep.say(
      `\nprojections (profile of K=${calibration.containers} at ${calibration.claimsPerS} claims/s; warm containers = ${a.warmFactor} x concurrency, at least ${a.minWarm}; DynamoDB round trip ${a.ddbRttMs} ms; busiest project ${a.hotProjectShare * 100} % of claims; Nova refresh every 300 s; deletes at the claim rate)`,
    );
    const between = await betweenProfile(runs, o.hosts);
    if (between) rep.emit({ kind: 'between-profile', between });
    const projections = await reportProjections(rep, calibration.profile, a, lambda, between);
    return { runs, validation, projections };
  } finally {
    await ddb.stop();
  }
}

function roundAll(x: { all: number; byLabel: Record<string, number> }) {
  return { forest_read_units: r2(x.all), by_label: rounded(x.byLabel) };
}
