/**
 * `npm run bench -- --scenario placement-import [--providers 10000] [--allocations 100000]
 *  [--reference] [--ref-providers 200] [--ref-allocations 2000] [--verify]`:
 * what `npx berth import-placement` costs and how fast it goes, projected to large clouds.
 *
 * The source is a Placement API serving a synthetic cloud of `--providers` providers
 * (compute hosts with two NUMA children each, traits, aggregates, custom names) and
 * `--allocations` allocations (consumers on a host and one of its NUMA nodes, of several
 * projects, users and types): this stack's Placement — Berth speaks the API the import
 * reads — over a table filled with the import's own writer. The real Placement 8.0.0 on
 * SQLite (../shared/reference) serves ~30 GETs/s here, one at a time: a cloud of this
 * size would take it an hour to load and another to read, which measures the reference,
 * not the import; `--reference` imports a smaller cloud written into it through its API
 * (POST /allocations in batches) to give its read rate.
 *
 * The import runs as `npx berth` does (its own process, into a second table of the same
 * DynamoDB Local): a first pass, then a pass over the unchanged source (what every later
 * pass of a live cut-over costs at least). Per pass: wall time and its parts, requests,
 * requests/s, providers/s, allocations/s, items written, write units per provider and
 * per allocation (functions/store/ddb/units.ts, the accountant's rules), peak memory; then the
 * same projected to 100,000 providers / 1,000,000 allocations.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ensureTable, freePort } from '../../local/ddb-local.js';
import { VALUE, SWITCH, r1, sharedPath, startReference, waitForUp, type BenchContext, type Scenario } from '../kit.js';

interface PassFigures {
  seconds: number;
  tableS: number;
  sourceS: number;
  writeS: number;
  requests: number;
  requestsPerS: number;
  providersRead: number;
  consumersRead: number;
  puts: number;
  units: number;
  unitsPerProvider: number;
  unitsPerAllocation: number;
  peakMb: number;
}

function figures(out: string): PassFigures {
  const num = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`the import's output lacks ${re}:\n${out}`);
    return m.slice(1).map(Number);
  };
  const [seconds, tableS, sourceS, writeS, peakMb] = num(
    /over the whole pass \(([\d.]+) s: table ([\d.]+), source ([\d.]+), writes ([\d.]+)\); peak memory (\d+) MB/,
  );
  const [, providersRead, consumersRead, requests, , requestsPerS] = num(
    /read: (\d+) providers listed, (\d+) read whole, (\d+) consumers read; (\d+) requests in ([\d.]+) s \((\d+)\/s/,
  );
  const [puts] = num(/wrote: (\d+) items/);
  const [units, unitsPerProvider, unitsPerAllocation] = num(
    /units: (\d+) write units .*providers' items \d+ \(([\d.]+) per provider\), allocations' .* \(([\d.]+) per allocation\)/,
  );
  return {
    seconds: seconds!,
    tableS: tableS!,
    sourceS: sourceS!,
    writeS: writeS!,
    requests: requests!,
    requestsPerS: requestsPerS!,
    providersRead: providersRead!,
    consumersRead: consumersRead!,
    puts: puts!,
    units: units!,
    unitsPerProvider: unitsPerProvider!,
    unitsPerAllocation: unitsPerAllocation!,
    peakMb: peakMb!,
  };
}

function berth(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin', 'berth.mjs'), ...args],
      { env: { ...process.env, ...env, CI: 'true' }, maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`berth ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr.slice(-2000)}`)) : resolve(String(stdout)),
    );
  });
}

/** A synthetic cloud of about `providers` providers and `allocations` allocations (two per consumer). */
async function syntheticState(providers: number, allocations: number) {
  const { emptyState } = await import('../../functions/core/placement/transfer.js');
  const { INVENTORY_DEFAULTS, providerRecord } = await import('../../functions/core/placement/model.js');
  const now = new Date().toISOString();
  const s = emptyState();
  const inv = (total: number, more: Record<string, number> = {}) => ({ ...INVENTORY_DEFAULTS, total, ...more });
  const aggs = Array.from({ length: 10 }, () => randomUUID());
  for (const [i, name] of ['CUSTOM_FPGA', 'CUSTOM_VF'].entries()) s.classes.set(name, { name, refs: 0, createdAt: now, seq: i + 1 });
  for (const [i, name] of ['CUSTOM_RACK_A', 'CUSTOM_RACK_B'].entries()) s.traits.set(name, { name, refs: 0, createdAt: now, seq: i + 1 });
  for (const [i, a] of aggs.entries()) s.aggregates.set(a, i + 1);
  const hosts = Math.max(1, Math.round(providers / 3));
  const numas: string[][] = [];
  let seq = 0;
  for (let h = 0; h < hosts; h++) {
    const root = randomUUID();
    const rack = h % 2 ? 'CUSTOM_RACK_A' : 'CUSTOM_RACK_B';
    const rec = (
      uuid: string,
      name: string,
      parent: string | undefined,
      inventories: Record<string, ReturnType<typeof inv>>,
      traits: string[],
      aggregates: string[],
    ) =>
      providerRecord({
        uuid,
        name,
        generation: 1 + (h % 7),
        parent,
        root,
        inventories,
        invVersion: 1,
        usages: {},
        traits,
        aggregates,
        children: parent ? 0 : 2,
        allocationCount: 0,
        createdAt: now,
        updatedAt: now,
        seq: ++seq,
      });
    s.providers.set(
      root,
      rec(
        root,
        `compute-${h}`,
        undefined,
        { VCPU: inv(64, { allocation_ratio: 4 }), MEMORY_MB: inv(262144, { reserved: 512, allocation_ratio: 1.5 }), DISK_GB: inv(2000) },
        ['HW_CPU_X86_AVX2', 'COMPUTE_NET_ATTACH_INTERFACE', rack],
        [aggs[h % aggs.length]!],
      ),
    );
    numas.push([root]);
    for (const n of [0, 1]) {
      const u = randomUUID();
      s.providers.set(u, rec(u, `compute-${h}-numa${n}`, root, { PCPU: inv(32), CUSTOM_VF: inv(16) }, ['HW_NUMA_ROOT', rack], []));
      numas[h]!.push(u);
    }
  }
  const consumers = Math.round(allocations / 2);
  for (let c = 0; c < consumers; c++) {
    const [root, ...kids] = numas[c % hosts]!;
    const uuid = randomUUID();
    s.consumers.set(uuid, {
      uuid,
      project: `project-${c % 50}`,
      user: `user-${c % 200}`,
      type: c % 10 === 0 ? null : c % 10 === 1 ? 'MIGRATION' : 'INSTANCE',
      generation: 1 + (c % 3),
      allocations: { [root!]: { VCPU: 1, MEMORY_MB: 512 }, [kids[c % 2]!]: { PCPU: 1 } },
      createdAt: now,
      updatedAt: now,
    });
  }
  // usage and reference counts as the source would have them
  const { nextState } = await import('../../functions/core/placement/transfer-state.js');
  const list = [...s.providers.values()].map((p) => ({
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    ...(p.parent ? { parent: p.parent } : {}),
  }));
  return nextState(
    s,
    { list, classes: [...s.classes.keys()], traits: [...s.traits.keys()], providers: new Map(), consumers: new Map(), consumerGenerations: true },
    { now, seqBase: 1 },
  ).state;
}

function project(ctx: BenchContext, label: string, p: PassFigures, providers: number, allocations: number) {
  const consumers = allocations / 2;
  for (const [P, A] of [
    [providers, allocations],
    [100_000, 1_000_000],
  ] as const) {
    const scale = P / providers;
    // requests: the lists, four per provider, one per consumer; writes and table reads grow with the items
    const requests = Math.round(p.requests * scale);
    const sourceS = p.sourceS * scale;
    const writeS = (p.writeS + p.tableS) * scale;
    const units = p.unitsPerProvider * P + p.unitsPerAllocation * A;
    ctx.say(
      `${label} at ${P.toLocaleString('en')} providers / ${A.toLocaleString('en')} allocations (${Math.round(consumers * scale).toLocaleString('en')} consumers): ${requests.toLocaleString('en')} requests, ${Math.round(units).toLocaleString('en')} write units; here ${r1((sourceS + writeS) / 60)} min (source ${r1(sourceS / 60)} min at ${p.requestsPerS} requests/s, table ${r1(writeS / 60)} min)`,
    );
  }
}

export const placementImportScenario: Scenario = {
  name: 'placement-import',
  options: { providers: VALUE, allocations: VALUE, verify: SWITCH, reference: SWITCH, 'ref-providers': VALUE, 'ref-allocations': VALUE },
  description: '`berth import-placement` from a Placement API: rate (providers/s, allocations/s), write units, projection to 100,000 / 1,000,000',
  optional: true,
  async run(ctx) {
    const providers = Number(ctx.args.providers ?? (ctx.quick ? 1000 : 10_000));
    const allocations = Number(ctx.args.allocations ?? (ctx.quick ? 10_000 : 100_000));
    const { stack } = ctx;
    // the source: this stack's table, filled with the synthetic cloud
    const state = await syntheticState(providers, allocations);
    const { writePass } = await import('../../functions/store/placement/transfer.js');
    const t0 = performance.now();
    await writePass(
      {
        state: (await import('../../functions/core/placement/transfer.js')).emptyState(),
        digests: new Map(),
        placementItems: 0,
        foreign: [],
        foreignCount: 0,
      },
      state,
      { now: new Date().toISOString(), rank: () => undefined, concurrency: 16 },
    );
    ctx.say(
      `source: ${state.providers.size} providers, ${state.consumers.size} consumers, ${allocations} allocations written in ${r1((performance.now() - t0) / 1000)} s; served by this stack's Placement`,
    );
    const target = `import_${randomUUID().replace(/-/g, '')}`;
    await ensureTable(stack.ddbEndpoint, target);
    const env = { TABLE_NAME: target, DDB_ENDPOINT: stack.ddbEndpoint };
    const from = ['import-placement', '--from', stack.placementUrl, '--token', 'admin'];
    for (const [label, args] of [
      ['first pass', from],
      ['pass over an unchanged source', [...from, '--final']],
    ] as const) {
      const p = figures(await berth([...args], env));
      const rec = {
        kind: 'placement-import',
        key: `placement-import/${label}`,
        providers: state.providers.size,
        allocations,
        ...p,
        providers_per_s: Math.round(state.providers.size / p.seconds),
        allocations_per_s: Math.round(allocations / p.seconds),
        headline: { providers_per_s: Math.round(state.providers.size / p.seconds), allocations_per_s: Math.round(allocations / p.seconds) },
      };
      ctx.emit(rec);
      ctx.say(
        `${label}: ${r1(p.seconds)} s (table ${p.tableS}, source ${p.sourceS}, writes ${p.writeS}); ${rec.providers_per_s} providers/s, ${rec.allocations_per_s} allocations/s; ${p.requests} requests (${p.requestsPerS}/s); ${p.puts} items, ${p.units} write units (${p.unitsPerProvider}/provider, ${p.unitsPerAllocation}/allocation); peak ${p.peakMb} MB`,
      );
      project(ctx, `  ${label}`, p, state.providers.size, allocations);
    }
    if (ctx.args.verify === 'true') {
      const t1 = performance.now();
      const out = await berth(['verify-placement', '--against', stack.placementUrl, '--token', 'admin'], env);
      ctx.say(`verify: ${/(\d+) differences?/.exec(out)?.[0]} in ${r1((performance.now() - t1) / 1000)} s`);
    }
    if (ctx.args.reference === 'true') await referenceRun(ctx, stack.ddbEndpoint);
  },
};

/** the real Placement 8.0.0 as the source: a small cloud written through its API, imported */
async function referenceRun(ctx: BenchContext, ddbEndpoint: string) {
  const providers = Number(ctx.args['ref-providers'] ?? 200);
  const allocations = Number(ctx.args['ref-allocations'] ?? 2000);
  const ref = startReference(sharedPath('reference', 'serve-placement.sh'), await freePort());
  try {
    await waitForUp(ref.url, 90_000);
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(ref.url + path, {
        method,
        headers: {
          'x-auth-token': 'admin',
          'openstack-api-version': 'placement 1.39',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await r.text();
      return { status: r.status, text, json: text ? JSON.parse(text) : undefined };
    };
    const state = await syntheticState(providers, allocations);
    const t0 = performance.now();
    for (const name of [...state.classes.keys()]) await call('PUT', `/resource_classes/${name}`);
    for (const name of [...state.traits.keys()]) await call('PUT', `/traits/${name}`);
    for (const p of state.providers.values()) {
      await call('POST', '/resource_providers', { uuid: p.uuid, name: p.name, ...(p.parent ? { parent_provider_uuid: p.parent } : {}) });
      const r = await call('PUT', `/resource_providers/${p.uuid}/inventories`, { resource_provider_generation: 0, inventories: p.inventories });
      await call('PUT', `/resource_providers/${p.uuid}/traits`, {
        resource_provider_generation: r.json.resource_provider_generation,
        traits: p.traits,
      });
    }
    const cs = [...state.consumers.values()];
    for (let i = 0; i < cs.length; i += 100) {
      const body: Record<string, unknown> = {};
      for (const c of cs.slice(i, i + 100))
        body[c.uuid] = {
          allocations: Object.fromEntries(Object.entries(c.allocations).map(([rp, resources]) => [rp, { resources }])),
          project_id: c.project,
          user_id: c.user,
          consumer_generation: null,
          consumer_type: c.type ?? 'INSTANCE',
        };
      const r = await call('POST', '/allocations', body);
      if (r.status !== 204) throw new Error(`POST /allocations: ${r.status} ${r.text.slice(0, 300)}`);
    }
    const loadS = (performance.now() - t0) / 1000;
    ctx.say(
      `reference Placement 8.0.0 (SQLite): ${state.providers.size} providers, ${allocations} allocations written through its API in ${r1(loadS)} s`,
    );
    const target = `import_${randomUUID().replace(/-/g, '')}`;
    await ensureTable(ddbEndpoint, target);
    const p = figures(await berth(['import-placement', '--from', ref.url, '--token', 'admin'], { TABLE_NAME: target, DDB_ENDPOINT: ddbEndpoint }));
    ctx.emit({ kind: 'placement-import', key: 'placement-import/reference first pass', providers: state.providers.size, allocations, ...p });
    ctx.say(
      `reference first pass: ${r1(p.seconds)} s (source ${p.sourceS} s: ${p.requests} requests, ${p.requestsPerS}/s); ${p.unitsPerProvider} write units/provider, ${p.unitsPerAllocation}/allocation`,
    );
    project(ctx, '  reference first pass', p, state.providers.size, allocations);
  } finally {
    ref.stop();
  }
}
