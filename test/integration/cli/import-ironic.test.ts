/**
 * Moving in from the real Ironic 21.4 (../shared/reference/serve-ironic.sh: one process,
 * fake-hardware, noauth): `npx berth import-ironic` then `verify-ironic`, as real
 * processes against tables in DynamoDB Local, under both schedulers.
 *
 * Ironic holds a workload leaving nodes in several stable states — enroll, manageable
 * (retired), available powered off (traits, owner, lessee) and on, in maintenance,
 * active with an instance and an allocation (protected, instance_info), available with
 * an allocation, one with an instance set the way Nova sets it (no allocation) — with
 * properties, extra, a driver password Ironic shows masked, and allocations active and
 * in error. A node being deployed is refused with the list and nothing is written; once
 * it is active the import goes ahead and verify-ironic finds 0 differences. An
 * interrupted import is finished by running it again; a finished one run again writes
 * nothing; a table holding other bare metal is refused, Placement's data (moved in
 * first) is not in the way. With the placement scheduler every node is its resource
 * provider and every active allocation its consumer, and a provider Nova's ironic driver
 * made for a node is adopted as Berth's own node writes adopt one. After every
 * test the shared check (test/integration/baremetal/agreement.ts) reads the table.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../../../local/ddb-local.js';
import { parseFaults, startFaultProxy } from '../../../local/ddb-faults.js';
import { projectAggregate } from '../../../functions/bridge/shape.js';
import { referenceLauncher, startReference, waitForIronic, type ReferenceServer } from '../differential-kit.js';
import { servePlacementHere, type Api } from '../harness.js';
import { activeBaremetal, useBaremetalTable } from '../baremetal/harness.js';
import { scanTable } from '../baremetal/agreement.js';
import { needs } from '../../optional.js';

const ironicPkg = needs('ironic', 'reference-servers');
const BIN = join(process.cwd(), 'bin', 'berth.mjs');
const V = '1.80';
const before = process.env.BAREMETAL_SCHEDULER;

let ironic: ReferenceServer | undefined;
let url = '';
let placement: Api | undefined;
/** the workload's nodes and allocations by name */
const nodes: Record<string, string> = {};
const allocs: Record<string, string> = {};
const NOVA_INSTANCE = randomUUID();

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npx berth …` as a process on the current test table (no BAREMETAL_SCHEDULER: the table says which) */
function berth(args: string[], env: Record<string, string> = {}): Promise<Out> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? tmpdir(),
          TABLE_NAME: process.env.TABLE_NAME,
          DDB_ENDPOINT: inject('ddbEndpoint'),
          ...env,
        },
        timeout: 180_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

async function ir(method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(url + path, {
    method,
    headers: { 'x-openstack-ironic-api-version': V, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (r.status >= 400) throw new Error(`Ironic ${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`Ironic: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TRANSITIONAL = ['deploying', 'wait call-back'];

async function provision(uuid: string, target: string, expect: string): Promise<void> {
  await ir('PUT', `/v1/nodes/${uuid}/states/provision`, { target });
  await until(`${uuid} ${expect}`, async () => {
    const n = await ir('GET', `/v1/nodes/${uuid}`);
    if (n.last_error) throw new Error(`${uuid}: ${n.last_error}`);
    return n.provision_state === expect && n.target_provision_state === null ? true : undefined;
  });
}

async function power(uuid: string, target: 'power on' | 'power off'): Promise<void> {
  await ir('PUT', `/v1/nodes/${uuid}/states/power`, { target });
  await until(`${uuid} ${target}`, async () => ((await ir('GET', `/v1/nodes/${uuid}`)).target_power_state === null ? true : undefined));
}

async function node(name: string, body: Record<string, unknown>, to: 'enroll' | 'manageable' | 'available' = 'available'): Promise<string> {
  const { owner, lessee, ...fields } = body;
  const uuid = (await ir('POST', '/v1/nodes', { driver: 'fake-hardware', name, resource_class: 'baremetal-gold', ...fields })).uuid as string;
  // at 1.80 (project-scoped node creation) a node is created with no owner but the caller's: set after
  const who = Object.entries({ owner, lessee }).filter(([, v]) => v !== undefined);
  if (who.length)
    await ir(
      'PATCH',
      `/v1/nodes/${uuid}`,
      who.map(([k, v]) => ({ op: 'add', path: `/${k}`, value: v })),
    );
  if (to !== 'enroll') await provision(uuid, 'manage', 'manageable');
  if (to === 'available') await provision(uuid, 'provide', 'available');
  nodes[name] = uuid;
  return uuid;
}

async function allocation(name: string, body: Record<string, unknown>, state: 'active' | 'error'): Promise<string> {
  const uuid = (await ir('POST', '/v1/allocations', { name, ...body })).uuid as string;
  const a = await until(`allocation ${name}`, async () => {
    const x = await ir('GET', `/v1/allocations/${uuid}`);
    return x.state === 'allocating' ? undefined : x;
  });
  if (a.state !== state) throw new Error(`allocation ${name} is ${a.state} (${a.last_error})`);
  allocs[name] = uuid;
  return uuid;
}

/** the workload: nodes in several stable states, allocations active and in error */
async function workload(): Promise<void> {
  await node(
    'n-enroll',
    {
      driver_info: { ipmi_address: '10.0.0.1', ipmi_username: 'admin', ipmi_password: 'secret' },
      properties: { cpus: 16, memory_mb: 131072, local_gb: 400, cpu_arch: 'x86_64' },
      extra: { rack: 'r1', slot: 4, tags: ['a', 'b'] },
      description: 'first rack',
    },
    'enroll',
  );
  const manageable = await node('n-manageable', {}, 'manageable');
  await ir('PATCH', `/v1/nodes/${manageable}`, [
    { op: 'add', path: '/retired', value: true },
    { op: 'add', path: '/retired_reason', value: 'end of life' },
  ]);
  const free = await node('n-free', { owner: 'p-owner', lessee: 'p-lessee', properties: { cpus: 8 } });
  await power(free, 'power off');
  await ir('PUT', `/v1/nodes/${free}/traits`, { traits: ['CUSTOM_GPU', 'HW_CPU_X86_AVX2'] });
  const maint = await node('n-maint', {});
  await power(maint, 'power off');
  await ir('PUT', `/v1/nodes/${maint}/maintenance`, { reason: 'fan failure' });
  const on = await node('n-on', { resource_class: 'baremetal-silver' });
  await power(on, 'power on');
  const active = await node('n-active', { owner: 'p-tenant', extra: { purpose: 'prod' } });
  await power(active, 'power off');
  const reserved = await node('n-reserved', { resource_class: 'baremetal-silver' });
  await power(reserved, 'power off');
  await ir('PUT', `/v1/nodes/${reserved}/traits`, { traits: ['CUSTOM_FAST'] });
  const nova = await node('n-nova', {});
  await power(nova, 'power off');
  await ir('PATCH', `/v1/nodes/${nova}`, [{ op: 'add', path: '/instance_uuid', value: NOVA_INSTANCE }]);
  const deploying = await node('n-deploying', {});
  await power(deploying, 'power off');

  await allocation('alloc-active', { resource_class: 'baremetal-gold', candidate_nodes: [active], owner: 'p-tenant' }, 'active');
  await allocation('alloc-reserved', { resource_class: 'baremetal-silver', traits: ['CUSTOM_FAST'], extra: { purpose: 'ci' } }, 'active');
  await allocation('alloc-error', { resource_class: 'baremetal-bronze' }, 'error');
  await ir('PATCH', `/v1/nodes/${active}`, [{ op: 'add', path: '/instance_info/image_source', value: 'http://images.example.com/ubuntu.qcow2' }]);
  await provision(active, 'active', 'active');
  await ir('PATCH', `/v1/nodes/${active}`, [
    { op: 'add', path: '/protected', value: true },
    { op: 'add', path: '/protected_reason', value: 'production' },
  ]);
}

beforeAll(async () => {
  if (!ironicPkg.available) return;
  const port = await freePort();
  // slow fake deploys: the node deployed during the refusal test stays "deploying" for a while
  ironic = startReference(referenceLauncher('serve-ironic.sh'), port, {
    IRONIC_FAKE_DEPLOY_DELAY: '3',
    IRONIC_RUN_DIR: mkdtempSync(join(tmpdir(), 'berth-ironic-')),
  });
  url = ironic.url;
  await waitForIronic(url, 150_000);
  await workload();
  await useBaremetalTable({ BAREMETAL_SCHEDULER: 'database' });
  placement = await servePlacementHere();
}, 300_000);

afterAll(async () => {
  ironic?.stop();
  await placement?.close();
  if (before === undefined) delete process.env.BAREMETAL_SCHEDULER;
  else process.env.BAREMETAL_SCHEDULER = before;
});

/** what the table holds of bare metal and Placement */
async function tableKinds(): Promise<{ nodes: number; allocations: number; providers: number; consumers: number }> {
  const items = await scanTable(inject('ddbEndpoint'), process.env.TABLE_NAME!);
  const count = (p: RegExp, sk: string) => items.filter((i) => p.test(String(i.pk)) && i.sk === sk).length;
  return { nodes: count(/^BMN#/, 'BMN'), allocations: count(/^BMA#/, 'BMA'), providers: count(/^RP#/, 'RP'), consumers: count(/^CONS#/, 'CONS') };
}

ironicPkg.describe('berth import-ironic / verify-ironic against Ironic 21.4', () => {
  it('refuses a node being deployed, listing it, and writes nothing', async () => {
    const uuid = nodes['n-deploying']!;
    await ir('PUT', `/v1/nodes/${uuid}/states/provision`, { target: 'active' });
    await until('n-deploying to start deploying', async () =>
      TRANSITIONAL.includes((await ir('GET', `/v1/nodes/${uuid}`)).provision_state) ? true : undefined,
    );
    const r = await berth(['import-ironic', '--from', url]);
    const still = (await ir('GET', `/v1/nodes/${uuid}`)).provision_state;
    expect(TRANSITIONAL, `the deploy ended before the import read it (${still}): the test proves nothing`).toContain(still);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain('refused, nothing written');
    expect(r.stderr).toMatch(new RegExp(`node ${uuid} \\(n-deploying\\): provision state "(deploying|wait call-back)": an action is in progress`));
    // only that node is listed
    expect(r.stderr.split('\n').filter((l) => l.startsWith('  node ')).length).toBe(1);
    expect(await tableKinds()).toEqual({ nodes: 0, allocations: 0, providers: 0, consumers: 0 });
    await until(
      'n-deploying to be active',
      async () => ((await ir('GET', `/v1/nodes/${uuid}`)).provision_state === 'active' ? true : undefined),
      90_000,
    );
  });

  it('imports every node and allocation (database scheduler); verify-ironic finds 0 differences', async () => {
    // a rehearsal reads everything and writes nothing
    const dry = await berth(['import-ironic', '--from', url, '--dry-run']);
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain('9 nodes to write');
    expect(dry.stdout).toContain('--dry-run: nothing written');
    expect(await tableKinds()).toEqual({ nodes: 0, allocations: 0, providers: 0, consumers: 0 });
    const r = await berth(['import-ironic', '--from', url]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('(database scheduler): 9 nodes to write (2 with their active allocation), 1 allocations bound to no node');
    expect(r.stdout).toMatch(/imported 9 nodes .* and 1 allocations bound to no node/);
    // a progress bar, and what is not carried: the password Ironic showed masked
    expect(r.stderr).toContain('10/10 100%');
    expect(r.stdout).toMatch(/secrets Ironic showed masked .*: driver_info\.ipmi_password: 1 \(/);
    expect(await tableKinds()).toEqual({ nodes: 9, allocations: 3, providers: 0, consumers: 0 });
    const v = await berth(['verify-ironic', '--from', url]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toContain('9 nodes and 3 allocations of');
    expect(v.stdout).toContain(': 0 difference(s)');
    // run again: its own earlier pass, nothing to write
    const again = await berth(['import-ironic', '--from', url]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain(
      '0 nodes to write (0 with their active allocation), 0 allocations bound to no node; 9 nodes and 1 allocations already imported',
    );
  });

  it('verify-ironic prints every difference, field by field, and exits 1', async () => {
    // the table this file imported into, changed behind the import's back
    const { getNode } = await import('../../../functions/store/baremetal/nodes.js');
    const { saveNode } = await import('../../../functions/store/baremetal/node-writes.js');
    const { scheduler } = await import('../../../functions/bridge/scheduler.js');
    const cur = (await getNode(nodes['n-free']!))!;
    expect('ok' in (await saveNode(cur, { ...cur, extra: { moved: true }, traits: ['CUSTOM_GPU'] }, scheduler().links))).toBe(true);
    const v = await berth(['verify-ironic', '--from', url]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`node ${nodes['n-free']} (n-free): extra: Ironic {}, Berth {"moved":true}`);
    expect(v.stdout).toContain(`node ${nodes['n-free']} (n-free): traits: Ironic ["CUSTOM_GPU","HW_CPU_X86_AVX2"], Berth ["CUSTOM_GPU"]`);
    expect(v.stdout).toContain(': 2 difference(s)');
    // and a pass over a table that no longer holds what Ironic does is refused
    const r = await berth(['import-ironic', '--from', url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`node ${nodes['n-free']}: extra, traits`);
  });

  it('resumes an interrupted import; other bare metal is in the way, Placement’s data is not', async () => {
    await useBaremetalTable({ BAREMETAL_SCHEDULER: 'database' });
    // Placement moved in first (a compute host): no bare metal, nothing in the import's way
    expect((await placement!.req('POST', '/resource_providers', { body: { name: 'compute-1' } })).status).toBe(200);
    const { importIronic } = await import('../../../cli/import-ironic.js');
    const { connectIronic } = await import('../../../cli/ironic-api.js');
    const api = await connectIronic({ endpoint: url, headers: {}, describe: 'test' });
    // a pass that dies after 4 writes (each one whole node, with its allocation)
    await expect(
      importIronic({
        api,
        concurrency: 1,
        onWritten: (n) => {
          if (n === 4) throw new Error('the operator’s laptop went to sleep');
        },
      }),
    ).rejects.toThrow('went to sleep');
    const partial = await tableKinds();
    expect(partial.nodes).toBe(4);
    // what is missing, verify names
    const half = await berth(['verify-ironic', '--from', url]);
    expect(half.code).toBe(1);
    expect(half.stdout.split('\n').filter((l) => /^node .*: in Ironic, not in Berth$/.test(l)).length).toBe(5);
    expect(half.stdout.split('\n').filter((l) => /^allocation .*: in Ironic, not in Berth$/.test(l)).length).toBe(3 - partial.allocations);
    const r = await berth(['import-ironic', '--from', url]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('5 nodes to write');
    expect(r.stdout).toContain('4 nodes and 0 allocations already imported by an earlier pass');
    const v = await berth(['verify-ironic', '--from', url]);
    expect(v.code, v.stdout + v.stderr).toBe(0);

    // a table somebody else wrote to is not moved into
    await useBaremetalTable({ BAREMETAL_SCHEDULER: 'database' });
    const { completeNode } = await import('../../../functions/store/baremetal/nodes.js');
    const { createNode } = await import('../../../functions/store/baremetal/node-writes.js');
    const { scheduler } = await import('../../../functions/bridge/scheduler.js');
    const own = completeNode({ uuid: randomUUID(), driver: 'fake-hardware', created_at: new Date().toISOString(), seq: 1 });
    expect('ok' in (await createNode(own, scheduler().links))).toBe(true);
    const refused = await berth(['import-ironic', '--from', url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds bare metal already \(1 nodes, 0 allocations, 0 other bare-metal items\) and no earlier import/);
    expect(await tableKinds()).toEqual({ nodes: 1, allocations: 0, providers: 0, consumers: 0 });

    // nor a table whose item layout this release does not write yet (an older release's, not migrated)
    await useBaremetalTable({ BAREMETAL_SCHEDULER: 'database' });
    const { layoutKey, recordLayout } = await import('../../../functions/store/layout/state.js');
    const { unrecordedState } = await import('../../../functions/core/layout.js');
    const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
    const { tableName } = await import('../../../functions/store/ddb/client.js');
    const { ddb } = await import('../../../functions/store/ddb/reads.js');
    // (a new local table is recorded at this release's layout: record it as a layout-1 table waiting)
    await ddb().send(new DeleteCommand({ TableName: tableName(), Key: layoutKey() }));
    await recordLayout(unrecordedState(true));
    const old = await berth(['import-ironic', '--from', url]);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain('holds item layout 1');
    expect(await tableKinds()).toEqual({ nodes: 0, allocations: 0, providers: 0, consumers: 0 });
  });

  it('with the placement scheduler, nodes become providers and active allocations consumers', async () => {
    // a table whose deployment runs the placement scheduler (META baremetal-scheduler says so)
    await useBaremetalTable({ BAREMETAL_SCHEDULER: 'placement' });
    const wrong = await berth(['import-ironic', '--from', url, '--scheduler', 'database']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('import with --scheduler placement');
    // Placement moved in first: Nova's ironic driver reported n-nova as a provider (uuid and
    // name the node's) and claimed its unit for the instance it deployed; and a compute host
    const pl = placement!;
    const nova = nodes['n-nova']!;
    expect((await pl.req('PUT', '/resource_classes/CUSTOM_BAREMETAL_GOLD')).status).toBe(201);
    expect((await pl.req('POST', '/resource_providers', { body: { uuid: nova, name: nova } })).status).toBe(200);
    const novaInv = { resource_provider_generation: 0, inventories: { CUSTOM_BAREMETAL_GOLD: { total: 1 } } };
    expect((await pl.req('PUT', `/resource_providers/${nova}/inventories`, { body: novaInv })).status).toBe(200);
    const claim = {
      allocations: { [nova]: { resources: { CUSTOM_BAREMETAL_GOLD: 1 } } },
      project_id: 'p-nova',
      user_id: 'u-nova',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    expect((await pl.req('PUT', `/allocations/${NOVA_INSTANCE}`, { body: claim })).status).toBe(204);
    expect((await pl.req('POST', '/resource_providers', { body: { name: 'compute-1' } })).status).toBe(200);

    const r = await berth(['import-ironic', '--from', url]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('(placement scheduler): 9 nodes to write');
    expect(r.stdout).toContain('every node is its resource provider, every active allocation its Placement consumer');
    expect(r.stdout).toMatch(/active allocations without an owner: .*incomplete-consumer project.*: 1 \(/);
    expect(await tableKinds()).toEqual({ nodes: 9, allocations: 3, providers: 10, consumers: 3 });
    const v = await berth(['verify-ironic', '--from', url]);
    expect(v.code, v.stdout + v.stderr).toBe(0);

    const inv = async (n: string) => (await pl.req('GET', `/resource_providers/${nodes[n]}/inventories`)).json.inventories;
    // an available node with its power state known: its unit is free
    expect(await inv('n-free')).toEqual({
      CUSTOM_BAREMETAL_GOLD: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0 },
    });
    expect((await pl.req('GET', `/resource_providers/${nodes['n-free']}`)).json.name).toBe(nodes['n-free']);
    expect((await pl.req('GET', `/resource_providers/${nodes['n-free']}/traits`)).json.traits.sort()).toEqual(['CUSTOM_GPU', 'HW_CPU_X86_AVX2']);
    expect((await pl.req('GET', `/resource_providers/${nodes['n-free']}/aggregates`)).json.aggregates.sort()).toEqual(
      [projectAggregate('p-owner'), projectAggregate('p-lessee')].sort(),
    );
    // not allocatable: reserved (enroll, manageable and retired, maintenance, Nova's instance, the one deployed without an instance)
    for (const n of ['n-enroll', 'n-manageable', 'n-maint', 'n-nova', 'n-deploying'])
      expect((await inv(n)).CUSTOM_BAREMETAL_GOLD.reserved, n).toBe(1);
    expect((await inv('n-on')).CUSTOM_BAREMETAL_SILVER.reserved).toBe(0);
    // the active allocations are consumers holding their node's unit
    const active = (await pl.req('GET', `/allocations/${allocs['alloc-active']}`)).json;
    expect(active).toMatchObject({
      allocations: { [nodes['n-active']!]: { resources: { CUSTOM_BAREMETAL_GOLD: 1 } } },
      project_id: 'p-tenant',
      consumer_type: 'BAREMETAL',
    });
    const held = (await pl.req('GET', `/allocations/${allocs['alloc-reserved']}`)).json;
    expect(held.allocations).toEqual({ [nodes['n-reserved']!]: { resources: { CUSTOM_BAREMETAL_SILVER: 1 }, generation: expect.any(Number) } });
    expect(held.project_id).toBe('00000000-0000-0000-0000-000000000000');
    expect((await pl.req('GET', `/resource_providers/${nodes['n-reserved']}/usages`)).json.usages).toEqual({ CUSTOM_BAREMETAL_SILVER: 1 });
    expect((await pl.req('GET', '/usages?project_id=p-tenant')).json.usages).toMatchObject({ BAREMETAL: { CUSTOM_BAREMETAL_GOLD: 1 } });
    // Nova's provider became the node's, as Berth's own node write adopts one: reserved (an
    // instance that is not an allocation's), Nova's claim still on it
    expect(await inv('n-nova')).toMatchObject({ CUSTOM_BAREMETAL_GOLD: { total: 1, reserved: 1 } });
    expect((await pl.req('GET', `/allocations/${NOVA_INSTANCE}`)).json).toMatchObject({
      allocations: { [nova]: { resources: { CUSTOM_BAREMETAL_GOLD: 1 } } },
      project_id: 'p-nova',
    });
    expect((await pl.req('GET', `/resource_providers?name=compute-1`)).json.resource_providers.length).toBe(1);
    // the error allocation is no consumer
    expect((await pl.req('GET', `/allocations/${allocs['alloc-error']}`)).json.allocations).toEqual({});
    expect(activeBaremetal.table).toBe(process.env.TABLE_NAME);
  });
  it('finishes against AWS’s failure modes: 20 % of DynamoDB calls failing, run again until done', async () => {
    await useBaremetalTable({ BAREMETAL_SCHEDULER: 'placement' });
    // throttles, conflicts, transactions in progress, 500s, answers lost after the write
    const proxy = await startFaultProxy(inject('ddbEndpoint'), parseFaults('rate=0.2,seed=32'));
    const runs: Out[] = [];
    try {
      do runs.push(await berth(['import-ironic', '--from', url], { DDB_ENDPOINT: proxy.endpoint }));
      while (runs.at(-1)!.code !== 0 && runs.length < 8);
      expect(Object.values(proxy.stats.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    } finally {
      await proxy.stop();
    }
    const last = runs.at(-1)!;
    expect(last.code, runs.map((r) => r.stdout + r.stderr).join('\n----\n')).toBe(0);
    expect(await tableKinds()).toMatchObject({ nodes: 9, allocations: 3, consumers: 2 });
    const v = await berth(['verify-ironic', '--from', url]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});
