/**
 * `npm run bench -- --scenario layout-upgrade [--providers N] [--allocations M]`: the
 * online migration of a layout-1 table (a cloud written by release aea5993; docs/items.md,
 * "Layout versions and upgrades") at a size. The stack's table is filled with layout-1
 * items shaped as aea5993 wrote them (test/fixtures/layout-v1 has the real thing, small):
 * N compute hosts with inventory, traits and an aggregate, M instances (consumers with one
 * allocation each, over 20 projects and 60 users), layout 1's usage, catalog and consumer
 * index entries. Then, with a mixed client load running throughout (provider reads, claims
 * and their deletes, usages, candidates):
 *   at layout 1   the migration opened, nothing converted yet (served as it is)
 *   during        the migration's runs, until it completes (its rate: items and providers/s)
 *   after         the table at layout 2
 * per phase the p50/p99 of every request kind, and errors (none expected).
 */
import { randomUUID } from 'node:crypto';
import { VALUE, pct, placementClient, r1, type BenchContext, type Scenario } from '../kit.js';

const PROJECTS = 20;
const USERS_PER_PROJECT = 3;

/** layout-1 items of a cloud of `n` hosts and `m` instances (aea5993's shapes) */
function layout1Items(n: number, m: number): { items: Record<string, unknown>[]; hosts: string[] } {
  const now = new Date().toISOString();
  let seq = Date.now() * 1000;
  const agg = randomUUID();
  const hosts = Array.from({ length: n }, () => randomUUID());
  const used = new Map<string, { VCPU: number; MEMORY_MB: number; allocs: number }>(hosts.map((h) => [h, { VCPU: 0, MEMORY_MB: 0, allocs: 0 }]));
  const usage = new Map<string, { project: string; user: string; n: number; vcpu: number; mem: number }>();
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < m; i++) {
    const c = randomUUID();
    const h = hosts[i % n]!;
    const project = `project-${i % PROJECTS}`;
    const user = `user-${i % (PROJECTS * USERS_PER_PROJECT)}`;
    const res = { VCPU: 1 + (i % 4), MEMORY_MB: 512 * (1 + (i % 3)) };
    const u = used.get(h)!;
    u.VCPU += res.VCPU;
    u.MEMORY_MB += res.MEMORY_MB;
    u.allocs++;
    items.push({
      pk: `RP#${h}`,
      sk: `ALLOC#${c}`,
      kind: 'ALLOC',
      provider: h,
      consumer: c,
      resources: res,
      cgen: 1,
      created: now,
      wseq: seq++,
      gsi1pk: `CONSALLOC#${c}`,
      gsi1sk: h,
    });
    items.push({
      pk: `CONS#${c}`,
      sk: 'CONS',
      type: 'CONS',
      uuid: c,
      project,
      user,
      ctype: 'INSTANCE',
      gen: 1,
      allocs: { [h]: res },
      ord: [[h, 'VCPU', 'MEMORY_MB']],
      created: now,
      updated: now,
    });
    const key = `${project}|${user}`;
    const t = usage.get(key) ?? { project, user, n: 0, vcpu: 0, mem: 0 };
    t.n++;
    t.vcpu += res.VCPU;
    t.mem += res.MEMORY_MB;
    usage.set(key, t);
  }
  hosts.forEach((h, i) => {
    const u = used.get(h)!;
    items.push({
      pk: `RP#${h}`,
      sk: 'RP',
      gsi1pk: `RPS#${i % 16}`,
      gsi1sk: h,
      type: 'RP',
      uuid: h,
      name: `v1-host-${i}`,
      gen: 1 + u.allocs,
      root: h,
      inv: {
        VCPU: { total: 64, reserved: 0, min_unit: 1, max_unit: 64, step_size: 1, allocation_ratio: 16 },
        MEMORY_MB: { total: 262144, reserved: 2048, min_unit: 1, max_unit: 262144, step_size: 1, allocation_ratio: 1.5 },
      },
      invVer: 1,
      used: { VCPU: u.VCPU, MEMORY_MB: u.MEMORY_MB },
      traits: ['HW_CPU_X86_AVX2', 'CUSTOM_V1_RACK'],
      aggs: [agg],
      children: 0,
      allocs: u.allocs,
      created: now,
      updated: now,
      seq: seq++,
    });
    items.push({ pk: `RPNAME#v1-host-${i}`, sk: 'RPNAME', uuid: h });
  });
  const projects = new Map<string, Record<string, unknown>>();
  for (const t of usage.values()) {
    items.push({
      pk: `USAGE#${t.project}`,
      sk: `U#${t.user}#0`,
      kind: 'USAGE',
      project: t.project,
      user: t.user,
      'n:INSTANCE': t.n,
      'r:INSTANCE:VCPU': t.vcpu,
      'r:INSTANCE:MEMORY_MB': t.mem,
    });
    const p = projects.get(t.project) ?? {
      pk: `USAGE#${t.project}`,
      sk: 'P#0',
      kind: 'USAGE',
      project: t.project,
      'n:INSTANCE': 0,
      'r:INSTANCE:VCPU': 0,
      'r:INSTANCE:MEMORY_MB': 0,
    };
    p['n:INSTANCE'] = Number(p['n:INSTANCE']) + t.n;
    p['r:INSTANCE:VCPU'] = Number(p['r:INSTANCE:VCPU']) + t.vcpu;
    p['r:INSTANCE:MEMORY_MB'] = Number(p['r:INSTANCE:MEMORY_MB']) + t.mem;
    projects.set(t.project, p);
  }
  items.push(...projects.values());
  items.push({ pk: 'TRAITS', sk: 'CUSTOM_V1_RACK', type: 'TRAIT', refs: n, created: now, seq: seq++ });
  items.push({ pk: 'AGG#' + agg, sk: 'AGG', type: 'AGG', seq: seq++, created: now });
  return { items, hosts };
}

interface Sample {
  kind: string;
  ms: number;
  status: number;
}

async function run(ctx: BenchContext): Promise<void> {
  const n = Number(ctx.args.providers ?? (ctx.quick ? 500 : 5000));
  const m = Number(ctx.args.allocations ?? n * 4);
  const { batchPut, BATCH_WRITE_MAX } = await import('../../functions/store/ddb/batch.js');
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { tableName } = await import('../../functions/store/ddb/client.js');
  const { ddb } = await import('../../functions/store/ddb/reads.js');
  const { ensureLayout, forgetLayout, layoutKey, readLayoutRecord } = await import('../../functions/store/layout/state.js');
  const { migrateLayout, openMigration } = await import('../../functions/store/layout/migrate.js');
  // the stack's fresh table becomes one written by aea5993: no record, layout-1 items
  await ddb().send(new DeleteCommand({ TableName: tableName(), Key: layoutKey() }));
  const { items, hosts } = layout1Items(n, m);
  const t0 = performance.now();
  const batches = Array.from({ length: Math.ceil(items.length / BATCH_WRITE_MAX) }, (_, i) =>
    items.slice(i * BATCH_WRITE_MAX, (i + 1) * BATCH_WRITE_MAX),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < batches.length) await batchPut(batches[next++]!);
    }),
  );
  ctx.say(`layout-upgrade: ${items.length} layout-1 items (${n} providers, ${m} allocations) written in ${r1((performance.now() - t0) / 1000)} s`);
  forgetLayout();
  const rec = await ensureLayout();
  if (rec.version !== 1) throw new Error(`expected a layout-1 table, found ${JSON.stringify(rec)}`);
  await openMigration('bench');
  await migrateLayout({ deadline: Date.now() }); // custom classes and traits: then served

  const pl = placementClient(ctx.stack.placementUrl);
  // the forest's cold load (every layout-1 provider through the index, read as it is), timed apart
  const cold = await pl('GET', '/allocation_candidates?resources=VCPU:1&limit=1', undefined, '1.39');
  ctx.say(`layout-upgrade: first candidates answer at layout 1 (the forest's cold load): ${r1(cold.ms)} ms`);
  const samples = new Map<string, Sample[]>();
  let phase = 'at layout 1';
  let stop = false;
  const record = (kind: string, r: { ms: number; status: number }) => {
    const list = samples.get(phase) ?? [];
    list.push({ kind, ms: r.ms, status: r.status });
    samples.set(phase, list);
  };
  const client = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const h = hosts[(w * 7919 + i * 104729) % hosts.length]!;
      record('provider', await pl('GET', `/resource_providers/${h}`, undefined, '1.39'));
      record('usages', await pl('GET', `/usages?project_id=project-${i % PROJECTS}`, undefined, '1.38'));
      const c = randomUUID();
      const claim = await pl(
        'PUT',
        `/allocations/${c}`,
        { allocations: { [h]: { resources: { VCPU: 1 } } }, project_id: 'bench', user_id: 'bench', consumer_generation: null },
        '1.38',
      );
      record('claim', claim);
      if (claim.status === 204) record('delete', await pl('DELETE', `/allocations/${c}`, undefined, '1.38'));
      if (i % 4 === 0) record('candidates', await pl('GET', '/allocation_candidates?resources=VCPU:1,MEMORY_MB:512&limit=50', undefined, '1.39'));
    }
  };
  const clients = Array.from({ length: 4 }, (_, w) => client(w));
  await new Promise((r) => setTimeout(r, ctx.quick ? 5_000 : 30_000));
  phase = 'during';
  const m0 = performance.now();
  let runs = 0;
  for (;;) {
    runs++;
    const r = await migrateLayout({ deadline: Date.now() + 10_000 });
    if (r.done) break;
  }
  const migrateS = (performance.now() - m0) / 1000;
  const done = await readLayoutRecord();
  phase = 'after';
  await new Promise((r) => setTimeout(r, ctx.quick ? 3_000 : 10_000));
  stop = true;
  await Promise.all(clients);
  const progress = done?.progress;
  ctx.emit({
    kind: 'layout-upgrade',
    key: `layout-upgrade/${n}`,
    providers: n,
    allocations: m,
    items: items.length,
    migrate_s: r1(migrateS),
    runs,
    items_per_s: Math.round((progress?.scanned ?? 0) / migrateS),
    providers_per_s: Math.round((progress?.providers ?? 0) / migrateS),
    progress,
  });
  ctx.say(
    `layout-upgrade: migrated in ${r1(migrateS)} s (${runs} runs): ${Math.round((progress?.scanned ?? 0) / migrateS)} items/s, ${Math.round((progress?.providers ?? 0) / migrateS)} providers/s; ${JSON.stringify(progress)}`,
  );
  for (const [p, list] of samples) {
    const kinds = [...new Set(list.map((s) => s.kind))];
    for (const kind of kinds) {
      const ks = list.filter((s) => s.kind === kind);
      const ms = ks.map((s) => s.ms);
      const errors = ks.filter((s) => s.status >= 500).length;
      const rec = {
        kind: 'layout-upgrade-latency',
        key: `layout-upgrade/${n}/${p}/${kind}`,
        phase: p,
        request: kind,
        n: ks.length,
        p50_ms: r1(pct(ms, 50)),
        p99_ms: r1(pct(ms, 99)),
        errors_5xx: errors,
      };
      ctx.emit(rec);
      ctx.say(
        `  ${p.padEnd(12)} ${kind.padEnd(10)} n=${String(ks.length).padStart(5)} p50 ${String(rec.p50_ms).padStart(7)} ms  p99 ${String(rec.p99_ms).padStart(7)} ms  5xx ${errors}`,
      );
    }
  }
}

export const layoutUpgradeScenario: Scenario = {
  name: 'layout-upgrade',
  options: { providers: VALUE, allocations: VALUE },
  description: 'a layout-1 (aea5993) table migrated online under a client load: rate, latency at layout 1 / during / after',
  optional: true,
  run,
};
