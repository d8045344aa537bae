/**
 * What a projection assumes: the three cloud sizes of docs/cost.md (their rates), the
 * defaults the code deploys with (warm containers, round trips, the change log), a
 * scenario's settings, the between-request profile runs measured, and the change log's
 * floor per setting.
 */
import { loadProfile } from './between.js';
import { PARTITION_READ_LIMIT, PARTITION_WRITE_LIMIT, project, type Assumptions, type Profile, type Projection } from './model.js';
import { pollLogUnits, type LogDesign } from './log-poll.js';
import { projectFeed } from './feed.js';
import { labelRates } from './workload.js';
import type { RunResult } from './options.js';
import { loadFamilies } from './run.js';

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

/** the assumptions and log design of a scenario's settings (the profile was measured with the code's defaults) */
export async function withSettings(
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
  // the change feed's partitions (FEED_SHARDS), sized for the scenario's changes (measure/accountant/feed.ts)
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
