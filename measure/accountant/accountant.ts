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
 *
 * This module runs the whole; its parts: ./options.ts (settings, results), ./run.ts (one
 * measured run), ./measure.ts and ./calibrate.ts (from a run to a profile), ./run-report.ts
 * (a run's tables), ./validation.ts (measured vs modelled), ./scenarios.ts (what a
 * projection assumes), ./projections.ts (the cloud sizes and their bill), ./model.ts with
 * ./log-poll.ts (the model), ./between.ts, ./feed.ts, ./billing.ts, ./prices.ts.
 */
import { readFileSync } from 'node:fs';
import { startDynamoDbLocal } from '../../local/ddb-local.js';
import { r2 } from '../../bench/kit.js';
import type { Profile, Projection } from './model.js';
import type { AccountantOptions, Reporter, RunResult } from './options.js';
import { logDesign, runOnce } from './run.js';
import { reportBetween, reportRun, rounded } from './run-report.js';
import { forestReads, reportValidation } from './validation.js';
import { betweenProfile, defaultAssumptions, type BetweenProfile } from './scenarios.js';
import { reportProjections } from './projections.js';

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
