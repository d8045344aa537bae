/**
 * The accountant's settings (`npm run accountant -- ...`, ./args.ts reads them), what a
 * measured run yields, and where its reports go.
 */
import type { LoadEvent, PartitionUse } from './between.js';
import type { RunMeasurement } from './measure.js';
import type { Profile } from './model.js';

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
