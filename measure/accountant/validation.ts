/**
 * The projection model checked against runs: the forest-served read units per request a
 * run measured, and what the model (./model.ts), calibrated on another run, predicts for
 * it (measured vs modelled).
 */
import { table } from '../report.js';
import { r1, r2 } from '../../bench/kit.js';
import type { RunMeasurement } from './measure.js';
import { pollUnits, sum, type Profile } from './model.js';
import type { LogDesign } from './log-poll.js';
import type { Reporter, RunResult } from './options.js';

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
