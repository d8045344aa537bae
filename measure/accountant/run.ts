/**
 * One measured run of the accountant: a fresh table, K local containers over DynamoDB
 * Local behind the metering proxy, the cloud set up, a warm-up, the Nova-like workload
 * (./workload.ts), its measurement (./measure.ts); then, when asked, a deploy (every
 * container replaced at once, each answering one request: its cold load).
 */
import { randomUUID } from 'node:crypto';
import { familyId, keyFamily, type CallRecord } from '../ledger.js';
import { freePort, type DdbLocal } from '../../local/ddb-local.js';
import { attributeCalls } from '../../local/attribution.js';
import { startStack, type RunningStack } from '../../local/start.js';
import { availableNodes, baremetalClient, r1 } from '../../bench/kit.js';
import { loadEvents, partitions, type Families } from './between.js';
import { accessLogLine, measure, type RunMeasurement } from './measure.js';
import { calibrate, splitLoad } from './calibrate.js';
import type { LogDesign } from './log-poll.js';
import { CANDIDATES_QUERY, Driver, LIBVIRT_HOST_TRAITS, runWorkload, type Host, type RequestRecord, type WorkloadRates } from './workload.js';
import type { AccountantOptions, DeployMeasure, RunResult } from './options.js';

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
  attributeCalls(ddbRaw(), () => ({ container: 'accountant', request: 'setup', label: 'setup', family: 'setup' }));
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
