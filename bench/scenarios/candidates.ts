/**
 * GET /allocation_candidates benchmarks against the local stack (real handler, warm
 * provider snapshot, DynamoDB Local):
 *
 *  candidates         upstream's perfload query
 *                     (resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=A0&required=HW_CPU_X86_AVX2)
 *                     over 1,000 / 10,000 / 100,000 providers of placeload's shape, loaded
 *                     with the store's bulk loader (functions/store/placement/bulk.ts); per size:
 *                     the cold first request (snapshot load), sequential p50/p95 of the
 *                     full answer, of limit=5 and of limit=1000, throughput at
 *                     concurrency 10, response size, and the DynamoDB reads a warm
 *                     request makes (snapshot refresh: change-log queries + provider
 *                     re-reads) with the read units AWS would bill (the accountant's meter).
 *                     --sizes 1000,10000 to choose; --quick = 1000 only.
 *  candidates-nested  1,000 compute trees of upstream's nested perfload
 *                     (gate/gabbits/nested-perfload.yaml: compute DISK_GB +
 *                     COMPUTE_VOLUME_MULTI_ATTACH; two NUMA children with VCPU/MEMORY_MB,
 *                     FPGA and VGPU grandchildren, CUSTOM_FOO): the same_subtree query,
 *                     its limit=5 variant and a granular isolate query.
 *  candidates-widetree upstream's TestWideTreeAllocationCandidateExplosion cases
 *                     (2x8x8 g2/g4, 1x8x1 g8, 1x21x1 g8, limit=1000, microversion 1.38),
 *                     built through the API; checked counts and latency.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { VALUE, pct, perfloadProviders, placementClient, pool, r1, threeAggregates, type BenchContext, type Scenario } from '../kit.js';
import { metered, unitsOf } from '../../measure/meter/inprocess.js';

const AGGS = threeAggregates();
const UPSTREAM = `resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=${AGGS[0]}&required=HW_CPU_X86_AVX2`;
const NESTED =
  'resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO' +
  '&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA';
const NESTED_ISOLATE = 'resources1=VCPU:1,MEMORY_MB:256&resources2=FPGA:1&resources3=FPGA:1&group_policy=isolate';

/** GET with the body read as text (clients parse it; the benchmark measures the server) */
async function get(base: string, qs: string, version: string) {
  const t0 = performance.now();
  const r = await fetch(`${base}/allocation_candidates?${qs}`, {
    headers: { 'x-auth-token': 'admin', accept: 'application/json', 'openstack-api-version': `placement ${version}` },
  });
  const text = await r.text();
  return { status: r.status, text, ms: performance.now() - t0 };
}

/**
 * The same request's server-side compute alone (parse + solve + render on the warm
 * snapshot, in this process, which runs the stack), and the snapshot refresh alone
 * (the change-log reads every request makes against DynamoDB Local).
 */
async function computeOnly(qs: string, version: string, n: number): Promise<{ p50: number; refresh: number }> {
  const { snapshot } = await import('../../functions/store/placement/snapshot.js');
  const { parseCandidatesQuery } = await import('../../functions/core/placement/candidates/request.js');
  const { solveCandidates } = await import('../../functions/core/placement/candidates/solver.js');
  const { renderCandidates, shapeFor } = await import('../../functions/core/placement/candidates/render.js');
  const { parseQuery } = await import('../../functions/http/types.js');
  const { RequestVersion } = await import('../../functions/core/microversion.js');
  const [major, minor] = version.split('.').map(Number) as [number, number];
  const v = new RequestVersion(major, minor);
  const compute: number[] = [];
  const refresh: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const forest = await snapshot().fresh();
    const t1 = performance.now();
    const req = parseCandidatesQuery(parseQuery(qs), v);
    renderCandidates(solveCandidates(forest, req), req, shapeFor(v));
    compute.push(performance.now() - t1);
    refresh.push(t1 - t0);
  }
  return { p50: r1(pct(compute, 50)), refresh: r1(pct(refresh, 50)) };
}

function countRequests(text: string): number {
  return (JSON.parse(text) as { allocation_requests: unknown[] }).allocation_requests.length;
}

interface QueryFigures {
  p50_ms: number;
  p95_ms: number;
  min_ms: number;
  candidates: number;
  bytes: number;
}

async function sequential(ctx: BenchContext, label: string, qs: string, n: number, version = '1.39'): Promise<QueryFigures> {
  const base = ctx.stack.placementUrl;
  const first = await get(base, qs, version);
  if (first.status !== 200) throw new Error(`${label}: ${first.status} ${first.text.slice(0, 300)}`);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await get(base, qs, version);
    if (r.status !== 200) throw new Error(`${label}: ${r.status}`);
    ms.push(r.ms);
  }
  const compute = await computeOnly(qs, version, Math.min(n, 10));
  const figures = {
    p50_ms: r1(pct(ms, 50)),
    p95_ms: r1(pct(ms, 95)),
    min_ms: r1(Math.min(...ms)),
    candidates: countRequests(first.text),
    bytes: first.text.length,
    compute_p50_ms: compute.p50,
    refresh_p50_ms: compute.refresh,
  };
  ctx.emit({
    kind: 'latency',
    key: `${label}/seq`,
    requests: n,
    ...figures,
    loadavg1: r1(loadavg()[0]!),
    headline: { p50_ms: figures.p50_ms, p95_ms: figures.p95_ms },
  });
  ctx.say(
    `${label}: p50 ${figures.p50_ms} ms, p95 ${figures.p95_ms} ms (min ${figures.min_ms}) over ${n}; ${figures.candidates} candidates, ` +
      `${(figures.bytes / 1e6).toFixed(2)} MB; of which solve+render p50 ${compute.p50} ms, snapshot refresh p50 ${compute.refresh} ms (load ${r1(loadavg()[0]!)})`,
  );
  return figures;
}

async function throughput(ctx: BenchContext, label: string, qs: string, n: number, c = 10, version = '1.39') {
  const base = ctx.stack.placementUrl;
  const t0 = performance.now();
  const res = await pool(n, c, () => get(base, qs, version));
  const wall = (performance.now() - t0) / 1000;
  const ok = res.filter((r) => r.status === 200);
  const rps = r1(ok.length / wall);
  const p50 = r1(
    pct(
      ok.map((r) => r.ms),
      50,
    ),
  );
  ctx.emit({
    kind: 'throughput',
    key: `${label}/c${c}`,
    concurrency: c,
    requests: n,
    ok: ok.length,
    wall_s: r1(wall),
    rps,
    p50_ms: p50,
    headline: { rps },
  });
  ctx.say(`${label}: c=${c} ${rps} req/s (${ok.length}/${n} ok, p50 ${p50} ms)`);
}

/**
 * What a warm request reads from DynamoDB: the snapshot's refresh (change-log queries
 * over minute buckets x shards, plus a consistent re-read of every provider named
 * there). Counted from the snapshot's own statistics over `n` requests; the read units
 * AWS would bill, by key family, from the accountant's metering proxy (measure/meter/).
 */
async function steadyStateReads(ctx: BenchContext, label: string, qs: string, n: number) {
  const { snapshot } = await import('../../functions/store/placement/snapshot.js');
  const { config } = await import('../../functions/config.js');
  const { value } = await metered(ctx.stack, async (meter) => {
    // the handlers reconnect through the meter (a new snapshot: one cold request, not counted)
    await get(ctx.stack.placementUrl, qs, '1.39');
    meter.reset();
    const s = snapshot().stats;
    const before = { ...s };
    for (let i = 0; i < n; i++) await get(ctx.stack.placementUrl, qs, '1.39');
    return {
      refreshes: s.refreshes - before.refreshes,
      logQueries: (s.logQueries - before.logQueries) / n,
      providerReads: (s.providerReads - before.providerReads) / n,
      units: unitsOf(meter.records),
    };
  });
  const perRequest = value.units.read / n;
  const byFamily = Object.fromEntries(Object.entries(value.units.byFamily).map(([f, u]) => [f, r1((u.read / n) * 100) / 100]));
  ctx.emit({
    kind: 'capacity',
    key: `${label}/steady-state-reads`,
    requests: n,
    refreshes_per_request: r1(value.refreshes / n),
    log_queries_per_request: r1(value.logQueries),
    provider_reads_per_request: r1(value.providerReads),
    change_log_shards: config().changeLogShards,
    read_units_per_request: r1(perRequest * 100) / 100,
    read_units_by_family: byFamily,
  });
  ctx.say(
    `${label}: a warm request reads ${r1(value.logQueries)} change-log partitions and re-reads ${r1(value.providerReads)} providers: ${r1(perRequest * 100) / 100} read units per request on AWS (${JSON.stringify(byFamily)}), nothing proportional to the number of providers`,
  );
}

// ------------------------------------------------------------------ flat

async function load(ctx: BenchContext, providers: Parameters<typeof import('../../functions/store/placement/bulk.js').bulkLoadProviders>[0]) {
  const { bulkLoadProviders } = await import('../../functions/store/placement/bulk.js');
  const t0 = performance.now();
  const res = await bulkLoadProviders(providers, { concurrency: 8 });
  const s = (performance.now() - t0) / 1000;
  ctx.emit({
    kind: 'load',
    key: `load/${providers.length}`,
    providers: res.providers,
    batches: res.batches,
    retries: res.retries,
    wall_s: r1(s),
    providers_per_s: r1(res.providers / s),
  });
  ctx.say(`bulk-loaded ${res.providers} providers in ${r1(s)} s (${r1(res.providers / s)}/s, ${res.retries} throttled batches retried)`);
}

async function runFlat(ctx: BenchContext) {
  const sizes = ctx.args.sizes ? ctx.args.sizes.split(',').map(Number) : ctx.quick ? [1000] : [1000, 10000, 100000];
  let loaded = 0;
  for (const size of sizes) {
    await load(ctx, perfloadProviders(size - loaded, loaded, AGGS));
    loaded = size;
    const label = `candidates/${size}`;
    const cold = await get(ctx.stack.placementUrl, UPSTREAM, '1.39');
    ctx.emit({ kind: 'latency', key: `${label}/first`, first_ms: r1(cold.ms), status: cold.status });
    ctx.say(`${label}: first request after the load ${r1(cold.ms)} ms (snapshot catches up with the bulk load)`);
    const seqN = size >= 100000 ? 10 : 30;
    await sequential(ctx, `${label}/upstream`, UPSTREAM, seqN);
    await sequential(ctx, `${label}/upstream_limit5`, `${UPSTREAM}&limit=5`, 50);
    await sequential(ctx, `${label}/upstream_limit1000`, `${UPSTREAM}&limit=1000`, 30);
    await throughput(ctx, `${label}/upstream`, UPSTREAM, size >= 100000 ? 20 : size >= 10000 ? 100 : 500);
    await throughput(ctx, `${label}/upstream_limit5`, `${UPSTREAM}&limit=5`, 500);
    await steadyStateReads(ctx, label, `${UPSTREAM}&limit=5`, 50);
  }
}

// ------------------------------------------------------------------ nested

async function runNested(ctx: BenchContext) {
  const api = placementClient(ctx.stack.placementUrl);
  if ((await api('PUT', '/traits/CUSTOM_FOO', undefined, '1.6')).status >= 300) throw new Error('CUSTOM_FOO');
  const trees = Number(ctx.args.trees ?? (ctx.quick ? 100 : 1000));
  const providers = [];
  for (let t = 0; t < trees; t++) {
    const id = (s: string) => ({ uuid: randomUUID(), name: `${s}${t}-${randomUUID().slice(0, 8)}` });
    const cn = { ...id('cn'), inventories: { DISK_GB: { total: 20480 } }, traits: ['COMPUTE_VOLUME_MULTI_ATTACH'] };
    const n0 = {
      ...id('numa0-'),
      parent: cn.uuid,
      inventories: { VCPU: { total: 4, reserved: 2 }, MEMORY_MB: { total: 2048, min_unit: 512, step_size: 256 } },
      traits: ['HW_NUMA_ROOT'],
    };
    const n1 = {
      ...id('numa1-'),
      parent: cn.uuid,
      inventories: { VCPU: { total: 4 }, MEMORY_MB: { total: 2048, min_unit: 256, max_unit: 1024 } },
      traits: ['HW_NUMA_ROOT', 'CUSTOM_FOO'],
    };
    providers.push(
      cn,
      n0,
      { ...id('fpga0-0-'), parent: n0.uuid, inventories: { FPGA: { total: 1 } } },
      { ...id('pgpu0-0-'), parent: n0.uuid, inventories: { VGPU: { total: 8 } } },
      n1,
      { ...id('fpga1-0-'), parent: n1.uuid, inventories: { FPGA: { total: 1 } } },
      { ...id('fpga1-1-'), parent: n1.uuid, inventories: { FPGA: { total: 1 } } },
    );
  }
  await load(ctx, providers);
  await get(ctx.stack.placementUrl, NESTED, '1.39');
  const f = await sequential(ctx, 'nested/upstream', NESTED, 30);
  if (f.candidates !== 2 * trees) ctx.say(`nested/upstream: CHECK FAILED: ${f.candidates} candidates, expected ${2 * trees}`);
  ctx.emit({
    kind: 'check',
    key: 'nested/upstream/count',
    result: f.candidates === 2 * trees ? 'PASS' : 'FAIL',
    candidates: f.candidates,
    expected: 2 * trees,
  });
  await sequential(ctx, 'nested/upstream_limit5', `${NESTED}&limit=5`, 50);
  await sequential(ctx, 'nested/granular_isolate', NESTED_ISOLATE, 30);
  await throughput(ctx, 'nested/upstream', NESTED, 200);
}

// ------------------------------------------------------------------ wide trees

async function runWide(ctx: BenchContext) {
  const api = placementClient(ctx.stack.placementUrl);
  if ((await api('PUT', '/resource_classes/CUSTOM_VF', undefined, '1.7')).status >= 300) throw new Error('CUSTOM_VF');
  const cases: Array<[number, number, number, number, number]> = [
    // computes, pfs, vfs per pf, groups, expected candidates
    [2, 8, 8, 2, 128],
    [2, 8, 8, 4, 1000],
    [1, 8, 1, 8, 1000],
    [1, 21, 1, 8, 1000],
  ];
  for (const [computes, pfs, vfs, groups, expected] of cases) {
    const label = `widetree/${computes}x${pfs}x${vfs}-g${groups}x1-l1000`;
    const created: string[] = [];
    const make = async (name: string, inventories: Record<string, Record<string, number>>, parent?: string) => {
      const uuid = randomUUID();
      const c = await api(
        'POST',
        '/resource_providers',
        { name: `${name}-${uuid.slice(0, 6)}`, uuid, ...(parent ? { parent_provider_uuid: parent } : {}) },
        '1.20',
      );
      if (c.status !== 200) throw new Error(`create: ${c.status}`);
      const i = await api('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
      if (i.status !== 200) throw new Error(`inventory: ${i.status} ${JSON.stringify(i.json)}`);
      created.push(uuid);
      return uuid;
    };
    for (let i = 0; i < computes; i++) {
      const cn = await make(`compute${i}`, { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, DISK_GB: { total: 500 } });
      for (let j = 0; j < pfs; j++) await make(`compute${i}:PF${j}`, { CUSTOM_VF: { total: vfs, max_unit: vfs } }, cn);
    }
    const qs =
      'resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2&' +
      Array.from({ length: groups }, (_, g) => `resources${g}=CUSTOM_VF:1`).join('&') +
      '&group_policy=none&limit=1000';
    const f = await sequential(ctx, label, qs, 20, '1.38');
    const pass = f.candidates === expected && f.p50_ms <= 100;
    ctx.emit({
      kind: 'check',
      key: `${label}/check`,
      result: pass ? 'PASS' : 'FAIL',
      candidates: f.candidates,
      expected,
      p50_ms: f.p50_ms,
      target_ms: 100,
    });
    for (const u of created.reverse()) await api('DELETE', `/resource_providers/${u}`);
  }
}

export const candidatesScenarios: Scenario[] = [
  {
    name: 'candidates',
    description: 'GET /allocation_candidates, upstream perfload query at 1k / 10k / 100k providers (bulk-loaded)',
    options: { sizes: VALUE },
    run: runFlat,
  },
  {
    name: 'candidates-nested',
    description: 'GET /allocation_candidates over 1,000 nested compute trees (same_subtree)',
    options: { trees: VALUE },
    run: runNested,
  },
  { name: 'candidates-widetree', description: 'GET /allocation_candidates on wide trees (upstream bug 2126751 cases)', run: runWide },
];
