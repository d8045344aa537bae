/**
 * A tiny accountant run (measure/accountant/accountant.ts) at K = 2 containers: a Nova-like
 * workload against the real handlers, DynamoDB Local behind the metering proxy. Its books
 * must balance: every DynamoDB call in the window belongs to a request type or to a
 * background task, the per-request sums plus background equal the meter's totals, the
 * per-key sums equal the per-call sums, and what the workload does costs units. The costs
 * between requests are measured too: the warm snapshots' reloads (compressed to seconds)
 * are named apart from the requests that started them, and a deploy after the run loads a
 * new snapshot in every new container, from the image, replaying the log written since.
 */
import { describe, expect, inject, it } from 'vitest';
import { DEFAULTS } from '../../../measure/accountant/options.js';
import { logDesign, runOnce } from '../../../measure/accountant/run.js';
import { predictRun } from '../../../measure/accountant/validation.js';
import { defaultAssumptions, SCENARIOS, scenarioRates } from '../../../measure/accountant/scenarios.js';
import { project } from '../../../measure/accountant/model.js';
import type { DdbLocal } from '../../../local/ddb-local.js';

describe('the accountant, K = 2', () => {
  it('accounts every DynamoDB call to a request type, and its books balance', async () => {
    const ddb = { endpoint: inject('ddbEndpoint') } as DdbLocal;
    const o = {
      ...DEFAULTS,
      hosts: 12,
      claimsPerS: 1,
      candidatesPerS: 2,
      refreshPeriodS: 6,
      durationS: 10,
      lifetimeS: 4,
      baremetalPerS: 0.2,
      maintenanceIntervalS: 5,
      resyncS: 6,
    };
    const run = await runOnce(ddb, o, 2, o.claimsPerS, () => undefined);
    const { m } = run;
    expect(run.failures).toEqual([]);
    expect(run.dispatched).toHaveLength(2);
    expect(run.dispatched.every((n) => n > 5)).toBe(true);
    // every call in the window is a request's or a background task's
    expect(m.unaccounted).toBe(0);
    const labels = new Set(Object.keys(m.labels));
    for (const r of m.records) expect(labels.has(r.who!.label) || r.who!.label in m.background).toBe(true);
    // the workload's request types all ran and cost something
    for (const l of [
      'scheduler:candidates',
      'claim:get',
      'claim:put',
      'delete:get',
      'delete:put',
      'quota:usages-project',
      'nova:in_tree',
      'nova:inventories',
      'nova:traits',
    ]) {
      expect(m.labels[l]?.requests, l).toBeGreaterThan(0);
      expect(m.labels[l]!.read + m.labels[l]!.write, l).toBeGreaterThan(0);
    }
    expect(m.labels['claim:put']!.write).toBeGreaterThan(0);
    // a claim writes no index entry (provider state, consumer and usage items carry no
    // index keys); a bare-metal allocation does (its node's and its own listing indexes)
    expect(m.labels['claim:put']!.indexWrite).toBe(0);
    expect(m.labels['baremetal:allocate']?.write).toBeGreaterThan(0);
    expect(m.labels['baremetal:allocate']!.indexWrite).toBeGreaterThan(0);
    // per request type (x requests) + background = the meter's totals; per key = per call
    const perType = Object.values(m.labels).reduce((n, l) => n + (l.read + l.write + l.indexWrite) * l.requests, 0);
    const background = Object.values(m.background).reduce((n, b) => n + b.read + b.write + b.indexWrite, 0);
    const total = m.totals.read + m.totals.write + m.totals.indexWrite;
    expect(total).toBeGreaterThan(0);
    expect(perType + background).toBeCloseTo(total, 6);
    expect(m.keys.reduce((n, k) => n + k.read + k.write, 0)).toBeCloseTo(total, 6);
    // reloads between requests: each its own background work, none a request's
    const resyncs = run.loads.filter((e) => e.work === 'resync');
    expect(resyncs.length).toBeGreaterThan(0);
    expect(m.background['snapshot:resync']?.runs).toBe(new Set(resyncs.map((e) => `${e.container} ${e.request}`)).size);
    for (const l of Object.values(m.labels)) expect(l.readByFamily['IMG#*#*'] ?? 0, l.label).toBe(0);
    // the deploy: two new containers, each loads the image and replays the log written since
    const d = run.deploy!;
    expect(d.containers).toBe(2);
    expect(d.loads).toHaveLength(2);
    expect(new Set(d.loads.map((e) => e.container)).size).toBe(2);
    for (const e of d.loads) {
      expect(e.route).toBe('image');
      expect(e.byFamily.FOREST?.units).toBe(1);
      expect(e.byFamily['IMG#*#*']!.units).toBeGreaterThan(0);
      expect(e.log.queries).toBeGreaterThan(0);
      expect(e.log.bytes).toBeLessThanOrEqual(d.logBytesSinceImage + 2000);
    }
    expect(d.partitions.some((x) => x.family === 'LOG#*' && x.read >= 2)).toBe(true);
    expect(d.firstAnswerMs).toHaveLength(2);
    // handler CPU and log bytes came back with every request
    expect(Object.values(m.labels).every((l) => l.cpuMs > 0 && l.logBytes > 0)).toBe(true);
    // the profile and the model run on it
    const { design } = await logDesign();
    for (const [label, p] of Object.entries(predictRun(run.profile, m, design))) {
      expect(Number.isFinite(p.total), label).toBe(true);
      expect(p.total, label).toBeGreaterThan(0);
    }
    const a = await defaultAssumptions();
    const p = project(run.profile, scenarioRates(SCENARIOS[0]!), SCENARIOS[0]!.hosts, a, design);
    expect(p.readPerS).toBeGreaterThan(0);
    expect(p.writePerS).toBeGreaterThan(0);
    expect(p.cost.total).toBeGreaterThan(0);
    expect(p.hottest.family).toBeTruthy();
  }, 180_000);
});
