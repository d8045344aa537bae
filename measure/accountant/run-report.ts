/**
 * What one run measured, as text tables and JSON records: per request type the calls,
 * DynamoDB calls, units, CPU and log bytes, the hottest partition keys, the forest-served
 * requests' polls (reportRun); and the costs between requests — reloads, catch-ups and
 * the deploy after it — per partition and projected (reportBetween, ./between.ts).
 */
import { table } from '../report.js';
import { r1, r2 } from '../../bench/kit.js';
import { byFamily, queryUnits, type LoadEvent } from './between.js';
import type { Reporter, RunResult } from './options.js';

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

export function rounded(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r2(v)]));
}
