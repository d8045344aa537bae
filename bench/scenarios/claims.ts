/**
 * Claim benchmarks against the local stack (real handlers, DynamoDB Local):
 *
 *  claims      PUT /allocations/{new consumer} (1.28, consumer_generation null) at
 *              c = 1 / 10 / 50 over many providers and on one hot provider: claims/s,
 *              latency p50/p95/p99, transaction attempts per claim; then the DynamoDB
 *              capacity units one claim consumes (ReturnConsumedCapacity, which
 *              DynamoDB Local reports, plus what the written item sizes cost on AWS),
 *              and what GET /usages costs.
 *  contention  one provider VCPU total 100, 1000 claims of 1 VCPU from 50 parallel
 *              clients: PASS iff exactly 100 succeed and usage ends at 100; then the
 *              same load with room for everyone (all must succeed). Both run with each
 *              provider guard: 'capacity' (invVer + used <= capacity - delta, the one
 *              we ship) and 'generation' (gen = read, the alternative) to compare.
 */
import { randomUUID } from 'node:crypto';
import type { BenchContext, Scenario } from '../run.js';
import { ddb, tableName } from '../../functions/store/ddb/client.js';
import { claimStats } from '../../functions/store/placement/allocations.js';
import { K } from '../../functions/store/placement/keys.js';
import { usageShardOf } from '../../functions/store/placement/usage.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { resetConfig } from '../../functions/config.js';

// ------------------------------------------------------------------ helpers

interface Res {
  status: number;
  json: any;
  ms: number;
}

export function client(base: string) {
  return async (method: string, path: string, body?: unknown, version = '1.28'): Promise<Res> => {
    const t0 = performance.now();
    const r = await fetch(base + path, {
      method,
      headers: {
        'x-auth-token': 'admin',
        accept: 'application/json',
        'openstack-api-version': `placement ${version}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    const ms = performance.now() - t0;
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, json, ms };
  };
}

export async function pool<T>(n: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, n) }, async () => {
      for (let i = next++; i < n; i = next++) out[i] = await task(i);
    }),
  );
  return out;
}

export function pct(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const r1 = (x: number) => Math.round(x * 10) / 10;

async function makeProvider(req: ReturnType<typeof client>, inventories: Record<string, Record<string, number>>): Promise<string> {
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

function statsDelta(before: typeof claimStats) {
  return {
    attempts: claimStats.attempts - before.attempts,
    conflicts: claimStats.conflicts - before.conflicts,
    condition_failures: claimStats.conditionFailures - before.conditionFailures,
  };
}

// ------------------------------------------------------------------ capacity units

interface Capacity {
  read: number;
  write: number;
  /** of which index (GSI) units */
  index: number;
  requests: number;
}

// the document client reports the underlying command names
const READS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand']);
let meterOn = false;
let meter: Capacity = { read: 0, write: 0, index: 0, requests: 0 };
let meterInstalled = false;

/** Ask DynamoDB for ConsumedCapacity on every call the process makes while measuring. */
function installMeter() {
  if (meterInstalled) return;
  meterInstalled = true;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (!meterOn) return next(args);
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'INDEXES';
      const out = await next(args);
      const cc = (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const list = (Array.isArray(cc) ? cc : cc ? [cc] : []) as Array<{
        CapacityUnits?: number;
        GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
      }>;
      const isRead = READS.has(String(context.commandName));
      meter.requests++;
      for (const c of list) {
        const units = Number(c.CapacityUnits ?? 0);
        if (isRead) meter.read += units;
        else meter.write += units;
        for (const g of Object.values(c.GlobalSecondaryIndexes ?? {})) meter.index += Number(g.CapacityUnits ?? 0);
      }
      return out;
    },
    { step: 'initialize', name: 'benchCapacityMeter' },
  );
}

async function measured<T>(fn: () => Promise<T>): Promise<{ value: T; cap: Capacity }> {
  installMeter();
  meter = { read: 0, write: 0, index: 0, requests: 0 };
  meterOn = true;
  try {
    const value = await fn();
    return { value, cap: { ...meter } };
  } finally {
    meterOn = false;
  }
}

/** DynamoDB's item size (attribute names + values), as its capacity accounting counts it. */
export function itemSize(v: unknown, isTop = true): number {
  if (isTop && v && typeof v === 'object' && !Array.isArray(v)) {
    let n = 0;
    for (const [k, x] of Object.entries(v)) n += Buffer.byteLength(k) + itemSize(x, false);
    return n;
  }
  if (v === null || typeof v === 'boolean') return 1;
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (typeof v === 'number') {
    const digits = String(Math.abs(v)).replace('.', '').replace(/^0+/, '').length || 1;
    return Math.ceil(digits / 2) + 1;
  }
  if (Array.isArray(v)) return 3 + v.reduce((a: number, x) => a + 1 + itemSize(x, false), 0);
  if (typeof v === 'object') {
    let n = 3;
    for (const [k, x] of Object.entries(v as object)) n += 1 + Buffer.byteLength(k) + itemSize(x, false);
    return n;
  }
  return 0;
}

async function getItem(key: { pk: string; sk: string }) {
  return (await ddb().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

// ------------------------------------------------------------------ claims

async function claimsScenario(ctx: BenchContext) {
  const req = client(ctx.stack.placementUrl);
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
      const before = { ...claimStats };
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

  // ---- capacity units of one claim (sequential, fresh consumers, an existing project)
  const rp = rps[1]!;
  const samples = ctx.quick ? 10 : 30;
  const per: Capacity[] = [];
  let last = '';
  for (let i = 0; i < samples; i++) {
    last = randomUUID();
    const { value, cap } = await measured(() => req('PUT', `/allocations/${last}`, claimBody(rp, { VCPU: 1, MEMORY_MB: 64 })));
    if (value.status !== 204) throw new Error(`claim failed: ${value.status}`);
    per.push(cap);
  }
  const avg = (f: (c: Capacity) => number) => r1((per.reduce((a, c) => a + f(c), 0) / per.length) * 10) / 10;
  // what the written items cost on AWS: transactional writes 2 WCU per started KB; none
  // of them is in an index (the provider's state item and new allocation rows are not)
  const items = {
    provider: await getItem(K.providerState(rp)),
    row: await getItem(K.providerAllocation(rp, last)),
    consumer: await getItem(K.consumer(last)),
    usage: await getItem(K.usage('bench-project', usageShardOf(last), 'bench-user')),
  };
  const sizes = Object.fromEntries(Object.entries(items).map(([k, v]) => [k, itemSize(v)]));
  const logSize = itemSize({
    pk: 'LOG#0',
    sk: '1800000000000#0123456789abcdef',
    d: JSON.stringify([[rp, { VCPU: 1, MEMORY_MB: 64 }, 1, 1, new Date().toISOString()]]),
    ttl: 1800000000,
  });
  const kb = (b: number) => Math.max(1, Math.ceil(b / 1024));
  const tableWcu = 2 * (kb(sizes.provider!) + kb(sizes.row!) + kb(sizes.consumer!) + kb(sizes.usage!) + kb(logSize));
  const indexWcu = 0;
  const readRcu = Math.ceil(sizes.provider! / 4096) + 1; // consistent BatchGet: provider + (absent) consumer
  const capRec = {
    kind: 'meta',
    key: 'claims/capacity-units',
    source: 'ReturnConsumedCapacity (DynamoDB Local reports it)',
    per_claim_reported: {
      read_units: avg((c) => c.read),
      write_units: avg((c) => c.write),
      of_which_index_units: avg((c) => c.index),
      requests: avg((c) => c.requests),
    },
    item_bytes: { ...sizes, log: logSize },
    per_claim_on_aws_from_item_sizes: {
      read_units: readRcu,
      table_write_units: tableWcu,
      index_write_units: indexWcu,
      write_units: tableWcu + indexWcu,
    },
  };
  ctx.emit(capRec);
  ctx.say(
    `one claim (1 provider, new consumer): DynamoDB Local reports ${capRec.per_claim_reported.read_units} RCU + ${capRec.per_claim_reported.write_units} WCU (of which ${capRec.per_claim_reported.of_which_index_units} index) in ${capRec.per_claim_reported.requests} requests`,
  );
  ctx.say(
    `  from item sizes (${JSON.stringify(capRec.item_bytes)} bytes): on AWS ${readRcu} RCU + ${tableWcu} WCU transactional + ${indexWcu} WCU index = ${tableWcu + indexWcu} WCU`,
  );

  // ---- GET /usages: reads whatever the number of consumers
  const u = await measured(() => req('GET', '/usages?project_id=bench-project&user_id=bench-user', undefined, '1.9'));
  const up = await measured(() => req('GET', '/usages?project_id=bench-project', undefined, '1.38'));
  const consumers = u.value.json?.usages?.VCPU;
  const lat: number[] = [];
  for (let i = 0; i < (ctx.quick ? 20 : 100); i++)
    lat.push((await req('GET', '/usages?project_id=bench-project&user_id=bench-user', undefined, '1.9')).ms);
  ctx.emit({
    kind: 'latency',
    key: 'usages/project-user',
    consumers,
    headline: { p50_ms: r1(pct(lat, 50)), p95_ms: r1(pct(lat, 95)) },
    read_units: { project_user: u.cap.read, project_by_type: up.cap.read },
    requests: { project_user: u.cap.requests, project_by_type: up.cap.requests },
  });
  ctx.say(
    `GET /usages over ${consumers} consumers: ${u.cap.requests} DynamoDB request, ${u.cap.read} RCU (project+user), ${up.cap.read} RCU (project, 1.38); p50 ${r1(pct(lat, 50))} ms`,
  );
}

// ------------------------------------------------------------------ contention

async function contentionRun(ctx: BenchContext, guard: 'capacity' | 'generation', total: number) {
  const req = client(ctx.stack.placementUrl);
  process.env.CLAIM_GUARD = guard;
  resetConfig();
  try {
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
    const before = { ...claimStats };
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
      key: `contention/${guard}/total${total}`,
      guard,
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
      `guard=${guard.padEnd(10)} capacity ${String(total).padEnd(6)} ${rec.result}: ${granted} granted, usage ${used}, /usages ${total9}, max sampled ${maxSeen}; ${rec.headline.seconds} s (${rec.headline.attempts_per_s} claims/s), ${d.attempts} tx attempts (${d.conflicts} conflicts, ${d.condition_failures} condition failures); ${JSON.stringify(tally)}`,
    );
    return rec;
  } finally {
    delete process.env.CLAIM_GUARD;
    resetConfig();
  }
}

async function contentionScenario(ctx: BenchContext) {
  for (const guard of ['capacity', 'generation'] as const) {
    await contentionRun(ctx, guard, 100);
    await contentionRun(ctx, guard, 100_000);
  }
}

export const claimScenarios: Scenario[] = [
  { name: 'claims', description: 'claim throughput/latency at c=1/10/50, capacity units per claim, GET /usages cost', run: claimsScenario },
  {
    name: 'contention',
    description: '1000 claims of 1 VCPU from 50 clients on one provider (capacity 100, then room for all), capacity guard vs generation guard',
    run: contentionScenario,
  },
];
