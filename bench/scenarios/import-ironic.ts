/**
 * `npm run bench -- --scenario import-ironic [--nodes N] [--schedulers database,placement]`:
 * moving in from the real Ironic 21.4 (../shared/reference/serve-ironic.sh, needs
 * python3-ironic) at a few hundred or a thousand nodes. Ironic gets N nodes — 60 %
 * available and powered off, a quarter of those with two traits and an owner, 30 % with
 * an active allocation, 10 % enrolled — and N/20 allocations in error. Then, per
 * scheduler, `npx berth import-ironic` runs as its own process against a fresh table in
 * DynamoDB Local (in memory) — for its rate — and once more into another table behind the
 * metering proxy (measure/meter/: AWS's unit rules, functions/store/ddb/units.ts) — for its
 * units —, then `verify-ironic`. Figures: the import's rate (nodes/s,
 * allocations/s; reading Ironic included and not), its write and read units per node,
 * DynamoDB calls per node, and how long verify took.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VALUE, pool, r1, type BenchContext, type Scenario } from '../kit.js';
import { ensureTable, freePort, startDynamoDbLocal } from '../../local/ddb-local.js';
import { startMeterProxy } from '../../measure/meter/proxy.js';
import { totals } from '../../measure/ledger.js';
import { sharedDir } from '../../scripts/optional-packages.mjs';

const V = { 'x-openstack-ironic-api-version': '1.80', 'content-type': 'application/json' };

async function ironicCall(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(url + path, { method, headers: V, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 400) throw new Error(`Ironic ${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

async function waitUntil(what: string, ok: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await ok()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Ironic's workload: N nodes in a few stable states, allocations active and in error */
async function workload(ctx: BenchContext, url: string, n: number): Promise<{ allocations: number }> {
  const t0 = performance.now();
  const uuids = await pool(n, 4, async (i) => {
    const kind = i % 10;
    // before 1.11 a node is created available: no manage/provide round trips
    // (resource_class came in 1.21: set with a PATCH)
    const body: Record<string, unknown> = {
      driver: 'fake-hardware',
      name: `node-${String(i).padStart(5, '0')}`,
      properties: { cpus: 32, memory_mb: 262144, local_gb: 960, cpu_arch: 'x86_64' },
      driver_info: { ipmi_address: `10.1.${i >> 8}.${i & 255}`, ipmi_username: 'admin', ipmi_password: 'secret' },
      extra: { rack: `r${i % 40}` },
    };
    const r = await fetch(`${url}/v1/nodes`, {
      method: 'POST',
      headers: { ...V, 'x-openstack-ironic-api-version': kind === 9 ? '1.80' : '1.10' },
      body: JSON.stringify(body),
    });
    if (r.status !== 201) throw new Error(`node create: ${r.status} ${await r.text()}`);
    const uuid = ((await r.json()) as { uuid: string }).uuid;
    const owned = kind < 6 && i % 4 === 0;
    await ironicCall(url, 'PATCH', `/v1/nodes/${uuid}`, [
      { op: 'add', path: '/resource_class', value: 'baremetal-gold' },
      ...(owned ? [{ op: 'add', path: '/owner', value: `project-${i % 7}` }] : []),
    ]);
    if (kind === 9) return uuid;
    await ironicCall(url, 'PUT', `/v1/nodes/${uuid}/states/power`, { target: 'power off' });
    if (owned) await ironicCall(url, 'PUT', `/v1/nodes/${uuid}/traits`, { traits: ['CUSTOM_GPU', 'HW_CPU_X86_AVX2'] });
    return uuid;
  });
  await waitUntil(
    'power off everywhere',
    async () => {
      const d = await ironicCall(url, 'GET', '/v1/nodes?fields=uuid,target_power_state&limit=1000');
      return (d.nodes as Array<{ target_power_state: unknown }>).every((x) => x.target_power_state === null);
    },
    600_000,
  );
  const allocated = uuids.filter((_, i) => i % 10 >= 6 && i % 10 < 9);
  const errors = Math.max(1, Math.floor(n / 20));
  let allocations = 0;
  await pool(allocated.length + errors, 4, async (i) => {
    const body =
      i < allocated.length
        ? { resource_class: 'baremetal-gold', candidate_nodes: [allocated[i]] }
        : { resource_class: 'baremetal-none', name: `no-such-${i}` };
    const a = await ironicCall(url, 'POST', '/v1/allocations', body);
    await waitUntil(`allocation ${a.uuid}`, async () => (await ironicCall(url, 'GET', `/v1/allocations/${a.uuid}`)).state !== 'allocating', 120_000);
    allocations++;
  });
  ctx.say(`Ironic workload: ${n} nodes, ${allocated.length} active and ${errors} error allocations in ${r1((performance.now() - t0) / 1000)} s`);
  return { allocations };
}

function berth(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; seconds: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin', 'berth.mjs'), ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env }, timeout: 1_800_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
          seconds: (performance.now() - t0) / 1000,
        }),
    );
  });
}

export const importIronicScenario: Scenario = {
  name: 'import-ironic',
  options: { nodes: VALUE, schedulers: VALUE },
  description: 'berth import-ironic from the real Ironic 21.4: nodes/s, allocations/s, write units per node (both schedulers), verify time',
  optional: true,
  async run(ctx) {
    const n = Number(ctx.args.nodes ?? (ctx.quick ? 200 : 1000));
    const schedulers = (ctx.args.schedulers ?? 'database,placement').split(',');
    const port = await freePort();
    const child = spawn(join(sharedDir(), 'reference', 'serve-ironic.sh'), [String(port)], {
      stdio: 'ignore',
      detached: true,
      env: { ...process.env, IRONIC_RUN_DIR: mkdtempSync(join(tmpdir(), 'bench-ironic-')) },
    });
    const url = `http://127.0.0.1:${port}`;
    const ddb = await startDynamoDbLocal({});
    const meter = await startMeterProxy(ddb.endpoint);
    try {
      await waitUntil('Ironic', async () => JSON.stringify(await (await fetch(`${url}/v1/drivers`)).json()).includes('fake-hardware'), 150_000);
      const { allocations } = await workload(ctx, url, n);
      for (const scheduler of schedulers) {
        const table = `import_${scheduler}`;
        await ensureTable(ddb.endpoint, table);
        // the rate straight against DynamoDB Local (the meter forwards writes one at a time and reads item images)
        const r = await berth(['import-ironic', '--from', url, '--scheduler', scheduler], { TABLE_NAME: table, DDB_ENDPOINT: ddb.endpoint });
        if (r.code !== 0) throw new Error(`import-ironic exited ${r.code}\n${r.stdout}\n${r.stderr.slice(-3000)}`);
        // the units through the meter, into a table of its own
        const metered = `${table}_metered`;
        await ensureTable(ddb.endpoint, metered);
        const env = { TABLE_NAME: metered, DDB_ENDPOINT: meter.endpoint };
        meter.reset();
        const m = await berth(['import-ironic', '--from', url, '--scheduler', scheduler], env);
        if (m.code !== 0) throw new Error(`import-ironic (metered) exited ${m.code}\n${m.stdout}\n${m.stderr.slice(-3000)}`);
        const t = totals(meter.records).calls;
        const read = /read (\d+) nodes, (\d+) allocations, \d+ VIF lists in ([\d.]+) s/.exec(r.stderr);
        const wrote = /in ([\d.]+) s\) and (\d+) allocations bound to no node \([^)]* in ([\d.]+) s\)/.exec(r.stdout);
        const readS = Number(read?.[3] ?? 0);
        const writeS = Number(wrote?.[1] ?? 0) + Number(wrote?.[3] ?? 0);
        const v = await berth(['verify-ironic', '--from', url], { TABLE_NAME: table, DDB_ENDPOINT: ddb.endpoint });
        const rec = {
          kind: 'import-ironic',
          key: `import-ironic/${scheduler}`,
          scheduler,
          nodes: n,
          allocations,
          wall_s: r1(r.seconds),
          read_ironic_s: r1(readS),
          write_s: r1(writeS),
          nodes_per_s: r1(n / r.seconds),
          nodes_per_s_writing: r1(n / writeS),
          allocations_per_s: r1(allocations / r.seconds),
          write_units_per_node: Math.round(((t.write + t.indexWrite) / n) * 100) / 100,
          table_write_units_per_node: Math.round((t.write / n) * 100) / 100,
          index_write_units_per_node: Math.round((t.indexWrite / n) * 100) / 100,
          read_units_per_node: Math.round((t.read / n) * 100) / 100,
          ddb_calls_per_node: Math.round((t.calls / n) * 100) / 100,
          verify_s: r1(v.seconds),
          verify_differences: /: (\d+) difference\(s\)/.exec(v.stdout)?.[1],
          headline: { nodes_per_s: r1(n / r.seconds), write_units_per_node: Math.round(((t.write + t.indexWrite) / n) * 100) / 100 },
        };
        ctx.emit(rec);
        ctx.say(
          `${scheduler.padEnd(9)} ${n} nodes + ${allocations} allocations in ${rec.wall_s} s (Ironic read ${rec.read_ironic_s} s, writes ${rec.write_s} s): ${rec.nodes_per_s} nodes/s, ${rec.allocations_per_s} allocations/s (${rec.nodes_per_s_writing} nodes/s writing); ${rec.write_units_per_node} write units/node (table ${rec.table_write_units_per_node}, index ${rec.index_write_units_per_node}), ${rec.read_units_per_node} read units/node, ${rec.ddb_calls_per_node} DynamoDB calls/node; verify ${rec.verify_s} s, ${rec.verify_differences} differences`,
        );
      }
    } finally {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
      await meter.stop();
      await ddb.stop();
    }
  },
};
