/**
 * From a run's measurement (./measure.ts) to the profile the projection model (./model.ts)
 * starts from: the forest-served requests' polls decomposed into a fixed part, the change
 * log's and the catch-up's (a within-group fit), each key family's spread, and a snapshot
 * load split into what grows with the providers and what does not. Pure.
 */
import { familyId, type KeyLoad } from '../ledger.js';
import type { LabelProfile, Profile, Spread } from './model.js';
import { addTo, type RunMeasurement } from './measure.js';

/**
 * Within-group least squares: y = a[group] + c x. Returns c (0 when x never varies) and
 * each group's intercept.
 */
export function fitSlope(samples: Array<{ group: string; x: number; y: number }>): { slope: number; intercept: Record<string, number> } {
  const groups = new Map<string, Array<{ x: number; y: number }>>();
  for (const s of samples) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  let sxy = 0;
  let sxx = 0;
  const means = new Map<string, { x: number; y: number }>();
  for (const [g, list] of groups) {
    const mx = list.reduce((n, s) => n + s.x, 0) / list.length;
    const my = list.reduce((n, s) => n + s.y, 0) / list.length;
    means.set(g, { x: mx, y: my });
    for (const s of list) {
      sxy += (s.x - mx) * (s.y - my);
      sxx += (s.x - mx) ** 2;
    }
  }
  const slope = sxx > 0 ? Math.max(0, sxy / sxx) : 0;
  const intercept: Record<string, number> = {};
  for (const [g, m] of means) intercept[g] = Math.max(0, m.y - slope * m.x);
  return { slope, intercept };
}

export interface CalibrationExtras {
  /** uuids of providers, consumers and nodes the run used; project ids */
  entities: Set<string>;
  projects: Set<string>;
  /** one snapshot load (the warm-up's cold loads): units by family that grow with the providers (per provider), and the rest */
  load: Profile['load'];
  accessLogBytes: Record<string, number>;
}

/** The classification of a key family by what its keys name (the workload knows its uuids and projects). */
export function spreadOf(keys: KeyLoad[], entities: Set<string>, projects: Set<string>): Record<string, Spread> {
  const out: Record<string, Spread> = {};
  for (const k of keys) {
    if (out[k.family] && out[k.family] !== 'shared') continue;
    const segments = k.pk.split('#').slice(1);
    if (segments.some((s) => projects.has(s))) out[k.family] = 'project';
    else if (segments.some((s) => entities.has(s))) out[k.family] = 'entity';
    else out[k.family] ??= 'shared';
  }
  return out;
}

/** The profile a projection starts from: a run's figures, with the forest-served requests' polls decomposed. */
export function calibrate(m: RunMeasurement, changeLogFamily: string, x: CalibrationExtras): Profile {
  // catch-up: within each polling type, read units outside the change log against the providers changed since the last poll
  // (only families keyed by a provider or consumer: a once-a-minute flag read that happened to fall in busier polls is no catch-up)
  const spread = spreadOf(m.keys, x.entities, x.projects);
  const families = new Set<string>();
  for (const p of m.polls) for (const f of Object.keys(p.otherRead)) if (spread[f] === 'entity') families.add(f);
  const catchUp: Record<string, number> = {};
  const intercepts: Record<string, Record<string, number>> = {};
  for (const f of families) {
    const fit = fitSlope(m.polls.map((p) => ({ group: p.label, x: p.changed, y: p.otherRead[f] ?? 0 })));
    if (fit.slope > 0) catchUp[f] = fit.slope;
    for (const [label, a] of Object.entries(fit.intercept)) (intercepts[label] ??= {})[f] = a;
  }
  const labels: Record<string, LabelProfile> = {};
  for (const l of Object.values(m.labels)) {
    const read = { ...l.readByFamily };
    if (l.polls) {
      delete read[changeLogFamily];
      for (const f of families) {
        if (intercepts[l.label]?.[f] !== undefined) read[f] = intercepts[l.label]![f]!;
      }
    }
    labels[l.label] = {
      label: l.label,
      lambda: l.lambda,
      polls: l.polls,
      read,
      write: { ...l.writeByFamily },
      waves: l.waves,
      cpuMs: l.cpuMs,
      logBytes: l.logBytes,
      accessLogBytes: x.accessLogBytes[l.label] ?? 0,
      logBytesWritten: l.logBytesWritten,
      providerChanges: l.providerChanges,
    };
  }
  const maintenance = { read: {} as Record<string, number>, write: {} as Record<string, number> };
  const runs = m.background.maintenance?.runs ?? 0;
  if (runs) {
    for (const rec of m.records) {
      if (rec.who?.label !== 'maintenance') continue;
      for (const k of rec.keys) {
        if (k.read) addTo(maintenance.read, familyId(k), k.read / runs);
        if (k.write) addTo(maintenance.write, familyId(k), k.write / runs);
      }
    }
  }
  return {
    labels,
    changeLogFamily,
    catchUp,
    fanOut: { read: Object.fromEntries(m.fanOut.read), write: Object.fromEntries(m.fanOut.write) },
    spread,
    load: x.load,
    maintenance,
  };
}

/**
 * A load's families that grow with the cloud (the image chunks, an index read of every
 * provider: more than LOAD_SCALES_BYTES read per provider) are scaled per provider; the
 * others (the image manifest, a flag) are counted once per load.
 */
export const LOAD_SCALES_BYTES = 16;
export function splitLoad(cold: Record<string, { units: number; bytes: number }>, providers: number): Profile['load'] {
  const load: Profile['load'] = { perProvider: {}, fixed: {} };
  for (const [f, v] of Object.entries(cold)) {
    if (!v.units) continue;
    if (v.bytes / providers > LOAD_SCALES_BYTES) load.perProvider[f] = v.units / providers;
    else load.fixed[f] = v.units;
  }
  return load;
}
