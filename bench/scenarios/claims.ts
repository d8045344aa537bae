/**
 * Claim benchmarks against the local stack (real handlers, DynamoDB Local):
 *
 *  claims      PUT /allocations/{new consumer} (1.28, consumer_generation null) at
 *              c = 1 / 10 / 50 over many providers and on one hot provider: claims/s,
 *              latency p50/p95/p99, transaction attempts per claim; then the DynamoDB
 *              units one claim consumes on AWS and what GET /usages costs (the
 *              accountant's metering proxy, measure/meter/).
 *  contention  one provider VCPU total 100, 1000 claims of 1 VCPU from 50 parallel
 *              clients: PASS iff exactly 100 succeed and usage ends at 100; then the
 *              same load with room for everyone (all must succeed), with transaction
 *              attempts per claim: the capacity guard (invVer + used <= capacity - delta)
 *              lets claims on one provider commute. (Until 1a09a41 a CLAIM_GUARD option
 *              ran the generation guard beside it; docs/consistency.md keeps the figures.)
 */
import { randomUUID } from 'node:crypto';
import { pct, placementClient, pool, r1, type BenchContext, type PlacementClient, type Scenario } from '../kit.js';
import { listen, type Tally } from '../../functions/observability/counters.js';
import { metered, unitsOf } from '../../measure/meter/inprocess.js';

async function makeProvider(req: PlacementClient, inventories: Record<string, Record<string, number>>): Promise<string> {
  const uuid = randomUUID();
  const c = await req('POST', '/resource_providers', { name: `bench-${uuid}`, uuid }, '1.20');
  if (c.status !== 200) throw new Error(`create provider: ${c.status} ${JSON.stringify(c.json)}`);
  const i = await req('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
  if (i.status !== 200) throw new Error(`set inventory: ${i.status} ${JSON.stringify(i.json)}`);
  return uuid;
}

const claimBody = (rp: string, res: Record<string, number>, project = 'bench-project', user = 'bench-user') => ({
  allocations: { [rp]: { resources: res } },
  project_id: project,
  user_id: user,
  consumer_generation: null,
});

/** what a listener counted of the claims, and it stops */
function statsDelta(counted: Tally) {
  counted.stop();
  return {
    attempts: counted.get('claim.attempts'),
    conflicts: counted.get('claim.conflicts'),
    condition_failures: counted.get('claim.conditionFailures'),
  };
}

// ------------------------------------------------------------------ claims

async function claimsScenario(ctx: BenchContext) {
  const req = placementClient(ctx.stack.placementUrl);
  const nProviders = ctx.quick ? 20 : 50;
  ctx.say(`setting up ${nProviders} providers (VCPU 1,000,000, MEMORY_MB 10,000,000)`);
  const rps = await pool(nProviders, 5, () => makeProvider(req, { VCPU: { total: 1_000_000 }, MEMORY_MB: { total: 10_000_000 } }));
  const counts: Record<number, number> = ctx.quick ? { 1: 50, 10: 150, 50: 300 } : { 1: 200, 10: 600, 50: 1000 };

  for (const [label, pick] of [
    ['spread', (i: number) => rps[i % rps.length]!],
    ['hot', () => rps[0]!],
  ] as const) {
    for (const c of [1, 10, 50]) {
      if (label === 'hot' && c === 1) continue; // same as spread at c=1
      const n = counts[c]!;
      // warm up (connections, snapshot, JIT)
      await pool(Math.min(20, n), c, (i) => req('PUT', `/allocations/${randomUUID()}`, claimBody(pick(i), { VCPU: 1, MEMORY_MB: 64 })));
      const before = listen();
      const t0 = performance.now();
      const res = await pool(n, c, (i) => req('PUT', `/allocations/${randomUUID()}`, claimBody(pick(i), { VCPU: 1, MEMORY_MB: 64 })));
      const secs = (performance.now() - t0) / 1000;
      const ok = res.filter((r) => r.status === 204);
      const lat = ok.map((r) => r.ms);
      const failures: Record<string, number> = {};
      for (const r of res.filter((x) => x.status !== 204)) {
        const k = `${r.status} ${r.json?.errors?.[0]?.code ?? ''}`;
        failures[k] = (failures[k] ?? 0) + 1;
      }
      const d = statsDelta(before);
      const rec = {
        kind: 'throughput',
        key: `claims/${label}/c${c}`,
        case: label,
        concurrency: c,
        claims: n,
        succeeded: ok.length,
        failures,
        headline: { claims_per_s: r1(ok.length / secs), p50_ms: r1(pct(lat, 50)), p95_ms: r1(pct(lat, 95)), p99_ms: r1(pct(lat, 99)) },
        attempts_per_claim: r1((d.attempts / n) * 100) / 100,
        transaction_conflicts: d.conflicts,
        condition_failures: d.condition_failures,
      };
      ctx.emit(rec);
      ctx.say(
        `${label.padEnd(6)} c=${String(c).padEnd(2)} ${rec.headline.claims_per_s} claims/s, p50 ${rec.headline.p50_ms} ms, p95 ${rec.headline.p95_ms} ms, p99 ${rec.headline.p99_ms} ms, ${rec.attempts_per_claim} tx attempts/claim, ${ok.length}/${n} ok`,
      );
    }
  }

  // ---- units of one claim (sequential, fresh consumers, an existing project), by AWS's
  // rules: the accountant's metering proxy (measure/meter/) in front of DynamoDB
  const rp = rps[1]!;
  const samples = ctx.quick ? 10 : 30;
  const per: Array<ReturnType<typeof unitsOf>> = [];
  await metered(ctx.stack, async (meter) => {
    // the handlers reconnect to the meter: one claim first, not counted
    await req('PUT', `/allocations/${randomUUID()}`, claimBody(rp, { VCPU: 1, MEMORY_MB: 64 }));
    for (let i = 0; i < samples; i++) {
      meter.reset();
      const r = await req('PUT', `/allocations/${randomUUID()}`, claimBody(rp, { VCPU: 1, MEMORY_MB: 64 }));
      if (r.status !== 204) throw new Error(`claim failed: ${r.status}`);
      per.push(unitsOf(meter.records));
    }
  });
  const avg = (f: (c: ReturnType<typeof unitsOf>) => number) => r1((per.reduce((a, c) => a + f(c), 0) / per.length) * 10) / 10;
  const families = [...new Set(per.flatMap((p) => Object.keys(p.byFamily)))].sort();
  const capRec = {
    kind: 'meta',
    key: 'claims/capacity-units',
    source: "the accountant's metering proxy (measure/meter/), AWS's documented rules",
    per_claim: {
      ddb_calls: avg((c) => c.calls),
      read_units: avg((c) => c.read),
      write_units: avg((c) => c.write),
      index_write_units: avg((c) => c.index),
    },
    by_family: Object.fromEntries(
      families.map((f) => [
        f,
        { read: avg((c) => c.byFamily[f]?.read ?? 0), write: avg((c) => c.byFamily[f]?.write ?? 0), bytes: avg((c) => c.byFamily[f]?.bytes ?? 0) },
      ]),
    ),
  };
  ctx.emit(capRec);
  ctx.say(
    `one claim (1 provider, new consumer), on AWS: ${capRec.per_claim.read_units} RCU + ${capRec.per_claim.write_units} WCU + ${capRec.per_claim.index_write_units} index WCU in ${capRec.per_claim.ddb_calls} DynamoDB calls; by key: ${families.map((f) => `${f} ${capRec.by_family[f]!.read}r/${capRec.by_family[f]!.write}w`).join(', ')}`,
  );

  // ---- GET /usages: reads whatever the number of consumers
  const u = await metered(ctx.stack, async (meter) => {
    await req('GET', '/usages?project_id=bench-project&user_id=bench-user', undefined, '1.9');
    meter.reset();
    const a = await req('GET', '/usages?project_id=bench-project&user_id=bench-user', undefined, '1.9');
    const pu = unitsOf(meter.records);
    meter.reset();
    await req('GET', '/usages?project_id=bench-project', undefined, '1.38');
    return { json: a.json, pu, p: unitsOf(meter.records) };
  });
  const consumers = u.value.json?.usages?.VCPU;
  const lat: number[] = [];
  for (let i = 0; i < (ctx.quick ? 20 : 100); i++)
    lat.push((await req('GET', '/usages?project_id=bench-project&user_id=bench-user', undefined, '1.9')).ms);
  ctx.emit({
    kind: 'latency',
    key: 'usages/project-user',
    consumers,
    headline: { p50_ms: r1(pct(lat, 50)), p95_ms: r1(pct(lat, 95)) },
    read_units: { project_user: u.value.pu.read, project_by_type: u.value.p.read },
    requests: { project_user: u.value.pu.calls, project_by_type: u.value.p.calls },
  });
  ctx.say(
    `GET /usages over ${consumers} consumers: ${u.value.pu.calls} DynamoDB request, ${u.value.pu.read} RCU (project+user), ${u.value.p.read} RCU (project, 1.38); p50 ${r1(pct(lat, 50))} ms`,
  );
}

// ------------------------------------------------------------------ contention

async function contentionRun(ctx: BenchContext, total: number) {
  const req = placementClient(ctx.stack.placementUrl);
  const rp = await makeProvider(req, { VCPU: { total } });
  const project = `contention-${randomUUID()}`;
  let sampling = true;
  let maxSeen = 0;
  const sampler = (async () => {
    while (sampling) {
      const r = await req('GET', `/resource_providers/${rp}/usages`);
      maxSeen = Math.max(maxSeen, r.json?.usages?.VCPU ?? 0);
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  const before = listen();
  const t0 = performance.now();
  const res = await pool(1000, 50, () => req('PUT', `/allocations/${randomUUID()}`, claimBody(rp, { VCPU: 1 }, project)));
  const secs = (performance.now() - t0) / 1000;
  sampling = false;
  await sampler;
  const d = statsDelta(before);
  const tally: Record<string, number> = {};
  for (const r of res) {
    const k = r.status === 204 ? '204' : `${r.status} ${r.json?.errors?.[0]?.code ?? ''}`;
    tally[k] = (tally[k] ?? 0) + 1;
  }
  const granted = res.filter((r) => r.status === 204).length;
  const used = (await req('GET', `/resource_providers/${rp}/usages`)).json.usages.VCPU;
  const total9 = (await req('GET', `/usages?project_id=${project}`, undefined, '1.9')).json.usages.VCPU ?? 0;
  const expected = Math.min(total, 1000);
  const pass =
    granted === expected && used === expected && total9 === expected && maxSeen <= total && res.every((r) => r.status === 204 || r.status === 409);
  const lat = res.filter((r) => r.status === 204).map((r) => r.ms);
  const rec = {
    kind: 'check',
    key: `contention/capacity/total${total}`,
    guard: 'capacity',
    capacity: total,
    result: pass ? 'PASS' : 'FAIL',
    granted,
    final_usage: used,
    usages_total: total9,
    max_sampled_usage: maxSeen,
    tally,
    headline: { seconds: r1(secs), attempts_per_s: r1(1000 / secs), granted_p50_ms: r1(pct(lat, 50)), granted_p95_ms: r1(pct(lat, 95)) },
    tx_attempts: d.attempts,
    transaction_conflicts: d.conflicts,
    condition_failures: d.condition_failures,
  };
  ctx.emit(rec);
  ctx.say(
    `capacity ${String(total).padEnd(6)} ${rec.result}: ${granted} granted, usage ${used}, /usages ${total9}, max sampled ${maxSeen}; ${rec.headline.seconds} s (${rec.headline.attempts_per_s} claims/s), ${d.attempts} tx attempts (${d.conflicts} conflicts, ${d.condition_failures} condition failures); ${JSON.stringify(tally)}`,
  );
  return rec;
}

async function contentionScenario(ctx: BenchContext) {
  await contentionRun(ctx, 100);
  await contentionRun(ctx, 100_000);
}

export const claimScenarios: Scenario[] = [
  { name: 'claims', description: 'claim throughput/latency at c=1/10/50, capacity units per claim, GET /usages cost', run: claimsScenario },
  {
    name: 'contention',
    description: '1000 claims of 1 VCPU from 50 clients on one provider (capacity 100, then room for all): exact grants, attempts per claim',
    run: contentionScenario,
  },
];
