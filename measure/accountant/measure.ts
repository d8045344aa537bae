/**
 * From one accountant run — the metering proxy's ledger and the workload's own record of
 * every request — to figures per request type, the forest-served requests' polls, and the
 * profile the projection model (./model.ts) takes (./calibrate.ts). Pure.
 */
import { familyId, fanOut, keyLoads, type CallRecord, type KeyLoad } from '../ledger.js';
import { MUTATING, type RequestRecord } from './workload.js';

export interface LabelMeasure {
  label: string;
  lambda: string;
  requests: number;
  perS: number;
  statuses: Record<string, number>;
  /** per request */
  calls: number;
  read: number;
  write: number;
  indexWrite: number;
  waves: number;
  cpuMs: number;
  logBytes: number;
  readByFamily: Record<string, number>;
  writeByFamily: Record<string, number>;
  /** reads the change log (forest-served) */
  polls: boolean;
  logBytesWritten: number;
  providerChanges: number;
}

export interface PollSample {
  label: string;
  container: string;
  /** when it first read the change log, and how long since this container's previous poll */
  at: number;
  gapS: number;
  logQueries: number;
  logBytes: number;
  logUnits: number;
  /** read units outside the change log, by family */
  otherRead: Record<string, number>;
  /** distinct providers changed (commits seen by the meter) since the previous poll */
  changed: number;
}

export interface RunMeasurement {
  containers: number;
  seconds: number;
  providers: number;
  labels: Record<string, LabelMeasure>;
  polls: PollSample[];
  /** calls outside requests: maintenance, background */
  background: Record<string, { calls: number; read: number; write: number; indexWrite: number; runs: number }>;
  /** calls in the window no request or background label claims */
  unaccounted: number;
  /** meter totals in the window, and the same summed per request type + background */
  totals: { read: number; write: number; indexWrite: number };
  keys: KeyLoad[];
  fanOut: { read: Map<string, number>; write: Map<string, number> };
  logBytesPerS: number;
  changesPerS: number;
  records: CallRecord[];
}

export interface MeasureInput {
  containers: number;
  /** every meter record of the run */
  records: CallRecord[];
  /** every request the workload (and the warm-up) made */
  requests: RequestRecord[];
  window: { from: number; to: number };
  providers: number;
  changeLogFamily: string;
  /** Lambda of a request type (from its records' attribution) */
}

/** add v to t[k] */
export function addTo(t: Record<string, number>, k: string, v: number) {
  t[k] = (t[k] ?? 0) + v;
}

/** sequential round trips: calls that started after every earlier call of the request had answered */
export function waves(calls: CallRecord[]): number {
  const s = [...calls].sort((a, b) => a.t - b.t);
  let n = 0;
  let busyUntil = Number.NEGATIVE_INFINITY;
  for (const c of s) {
    if (c.t >= busyUntil) n++;
    busyUntil = Math.max(busyUntil, c.end);
  }
  return n;
}

export function measure(i: MeasureInput): RunMeasurement {
  const { from, to } = i.window;
  const seconds = (to - from) / 1000;
  const inWindow = new Map(i.requests.filter((r) => r.t0 >= from && r.t0 < to).map((r) => [r.id, r]));
  const allIds = new Set(i.requests.map((r) => r.id));
  const byRequest = new Map<string, CallRecord[]>();
  const background: RunMeasurement['background'] = {};
  const bgRuns = new Map<string, Set<string>>();
  const windowRecords: CallRecord[] = [];
  let unaccounted = 0;
  for (const rec of i.records) {
    const id = rec.who?.request;
    if (id && inWindow.has(id)) {
      byRequest.set(id, [...(byRequest.get(id) ?? []), rec]);
      windowRecords.push(rec);
      continue;
    }
    // a request of the workload outside the window, or anything outside it
    if ((id && allIds.has(id)) || rec.t < from || rec.t >= to) continue;
    windowRecords.push(rec);
    // not a request of the workload: maintenance, background, or nobody's
    const label = rec.who?.label;
    if (!label) {
      unaccounted++;
      continue;
    }
    const b = (background[label] ??= { calls: 0, read: 0, write: 0, indexWrite: 0, runs: 0 });
    b.calls++;
    b.read += rec.read;
    b.write += rec.write;
    b.indexWrite += rec.indexWrite;
    const runs = bgRuns.get(label) ?? new Set<string>();
    runs.add(rec.who!.request);
    bgRuns.set(label, runs);
    b.runs = runs.size;
  }
  // per request type
  const labels: Record<string, LabelMeasure> = {};
  const logFam = i.changeLogFamily;
  for (const r of inWindow.values()) {
    const calls = byRequest.get(r.id) ?? [];
    let l = labels[r.label];
    if (!l) {
      l = labels[r.label] = {
        label: r.label,
        lambda: calls[0]?.who?.family ?? '?',
        requests: 0,
        perS: 0,
        statuses: {},
        calls: 0,
        read: 0,
        write: 0,
        indexWrite: 0,
        waves: 0,
        cpuMs: 0,
        logBytes: 0,
        readByFamily: {},
        writeByFamily: {},
        polls: false,
        logBytesWritten: 0,
        providerChanges: 0,
      };
    }
    if (l.lambda === '?' && calls[0]?.who?.family) l.lambda = calls[0].who.family;
    l.requests++;
    l.statuses[String(r.status)] = (l.statuses[String(r.status)] ?? 0) + 1;
    l.calls += calls.length;
    l.waves += waves(calls);
    l.cpuMs += r.cpuUs / 1000;
    l.logBytes += r.logBytes;
    let readsLog = false;
    for (const c of calls) {
      l.read += c.read;
      l.write += c.write;
      l.indexWrite += c.indexWrite;
      for (const k of c.keys) {
        const f = familyId(k);
        if (k.read) addTo(l.readByFamily, f, k.read);
        if (k.write) addTo(l.writeByFamily, f, k.write);
        if (f === logFam && k.read) readsLog = true;
        if (f === logFam && k.write) l.logBytesWritten += k.bytes;
      }
    }
    if (readsLog) l.polls = true as boolean;
    if (MUTATING.has(r.label) && r.provider && r.status < 300) l.providerChanges++;
  }
  for (const l of Object.values(labels)) {
    const n = l.requests;
    l.perS = n / seconds;
    for (const k of ['calls', 'read', 'write', 'indexWrite', 'waves', 'cpuMs', 'logBytes', 'logBytesWritten', 'providerChanges'] as const) l[k] /= n;
    for (const t of [l.readByFamily, l.writeByFamily]) for (const f of Object.keys(t)) t[f]! /= n;
  }
  // a type polls when most of its requests read the change log
  const pollCount = new Map<string, number>();
  for (const r of inWindow.values()) {
    if ((byRequest.get(r.id) ?? []).some((c) => c.keys.some((k) => familyId(k) === logFam && k.read > 0)))
      pollCount.set(r.label, (pollCount.get(r.label) ?? 0) + 1);
  }
  for (const l of Object.values(labels)) l.polls = (pollCount.get(l.label) ?? 0) >= l.requests / 2;

  // commits of provider changes (the meter's end of the request's last write), for the polls
  const allById = new Map<string, CallRecord[]>();
  for (const rec of i.records) {
    const id = rec.who?.request;
    if (!id) continue;
    const list = allById.get(id) ?? [];
    list.push(rec);
    allById.set(id, list);
  }
  const commits: Array<{ at: number; provider: string }> = [];
  for (const r of i.requests) {
    if (!MUTATING.has(r.label) || !r.provider || r.status >= 300) continue;
    const writes = (allById.get(r.id) ?? []).filter((c) => c.write > 0 && c.outcome === 'ok');
    if (writes.length) commits.push({ at: Math.max(...writes.map((c) => c.end)), provider: r.provider });
  }
  commits.sort((a, b) => a.at - b.at);
  // polls: per container, every request's first change-log read, in time order
  const pollsByContainer = new Map<string, Array<{ r: RequestRecord; at: number }>>();
  for (const r of i.requests) {
    const first = (allById.get(r.id) ?? []).filter((c) => c.keys.some((k) => familyId(k) === logFam && k.read > 0)).sort((a, b) => a.t - b.t)[0];
    if (!first) continue;
    const list = pollsByContainer.get(r.container) ?? [];
    list.push({ r, at: first.t });
    pollsByContainer.set(r.container, list);
  }
  const polls: PollSample[] = [];
  for (const [container, list] of pollsByContainer) {
    list.sort((a, b) => a.at - b.at);
    for (let k = 1; k < list.length; k++) {
      const { r, at } = list[k]!;
      if (!inWindow.has(r.id)) continue;
      const prev = list[k - 1]!.at;
      const changed = new Set(commits.filter((c) => c.at > prev && c.at <= at).map((c) => c.provider)).size;
      const sample: PollSample = {
        label: r.label,
        container,
        at,
        gapS: (at - prev) / 1000,
        logQueries: 0,
        logBytes: 0,
        logUnits: 0,
        otherRead: {},
        changed,
      };
      for (const c of byRequest.get(r.id) ?? []) {
        for (const key of c.keys) {
          if (!key.read) continue;
          const f = familyId(key);
          if (f === logFam) {
            sample.logUnits += key.read;
            sample.logBytes += key.bytes;
            if (c.op === 'Query') sample.logQueries++;
          } else addTo(sample.otherRead, f, key.read);
        }
      }
      polls.push(sample);
    }
  }
  const totals = { read: 0, write: 0, indexWrite: 0 };
  for (const rec of windowRecords) {
    totals.read += rec.read;
    totals.write += rec.write;
    totals.indexWrite += rec.indexWrite;
  }
  const logBytesPerS = Object.values(labels).reduce((n, l) => n + l.logBytesWritten * l.requests, 0) / seconds;
  const changesPerS = commits.filter((c) => c.at >= from && c.at < to).length / seconds;
  return {
    containers: i.containers,
    seconds,
    providers: i.providers,
    labels,
    polls,
    background,
    unaccounted,
    totals,
    keys: keyLoads(windowRecords),
    fanOut: { read: fanOut(windowRecords, 'read'), write: fanOut(windowRecords, 'write') },
    logBytesPerS,
    changesPerS,
    records: windowRecords,
  };
}

/** API Gateway's access log line for a request, in the stack's format (cdk/lib/stage.ts configureStage) */
export function accessLogLine(r: Pick<RequestRecord, 'method' | 'path' | 'status' | 't0' | 't1'>): string {
  return JSON.stringify({
    requestId: 'AbCdEfGhIjKlMnO=',
    ip: '203.0.113.10',
    method: r.method,
    path: r.path.split('?')[0],
    status: String(r.status),
    latencyMs: String(Math.max(1, r.t1 - r.t0)),
    integrationError: '-',
  });
}
