/**
 * `npm run screenshot`: regenerates docs/dashboard.png (and docs/dashboard-baremetal.png)
 * for docs/operating.md — a fresh local stack (DynamoDB Local in memory, free ports), a
 * realistic small cloud built through the public APIs (compute hosts with NUMA
 * children, a shared storage pool in an aggregate, GPUs, consumers of three projects,
 * bare-metal nodes with allocations), then the dashboard in Debian's headless Chromium.
 * Options: --out DIR (default docs/), CHROMIUM_PATH.
 */
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';
import { commandLine, plainErrors } from './args.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = (commandLine(process.argv.slice(2), { out: { type: 'string' } }, plainErrors()).values.out as string | undefined) ?? join(ROOT, 'docs');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
process.env.LOG_LEVEL ??= 'ERROR';

async function call(base: string, method: string, path: string, body: unknown, headers: Record<string, string>, want: number): Promise<any> {
  const r = await fetch(base + path, {
    method,
    headers: {
      'x-auth-token': 'admin',
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function seed(placementUrl: string, baremetalUrl: string) {
  const P = (m: string, p: string, b?: unknown, want = 200) => call(placementUrl, m, p, b, { 'openstack-api-version': 'placement 1.39' }, want);
  const B = (m: string, p: string, b?: unknown, want = 200) => call(baremetalUrl, m, p, b, { 'x-openstack-ironic-api-version': '1.78' }, want);
  const rack = { a: randomUUID(), b: randomUUID() };
  await P('PUT', '/traits/CUSTOM_RACK_A', undefined, 201);
  await P('PUT', '/traits/CUSTOM_RACK_B', undefined, 201);
  await P('POST', '/resource_classes', { name: 'CUSTOM_NVME_IOPS' }, 201);

  // a shared storage pool for rack A
  const pool = randomUUID();
  await P('POST', '/resource_providers', { name: 'ceph-pool-a', uuid: pool });
  await P('PUT', `/resource_providers/${pool}/inventories`, {
    resource_provider_generation: 0,
    inventories: { DISK_GB: { total: 20000, reserved: 500 }, CUSTOM_NVME_IOPS: { total: 400000 } },
  });
  await P('PUT', `/resource_providers/${pool}/traits`, {
    resource_provider_generation: 1,
    traits: ['MISC_SHARES_VIA_AGGREGATE', 'STORAGE_DISK_SSD'],
  });
  await P('PUT', `/resource_providers/${pool}/aggregates`, { resource_provider_generation: 2, aggregates: [rack.a] });

  // where instances land: NUMA nodes (and one GPU), with their host and whether the host is in rack A
  const slots: { uuid: string; host: string; rackA: boolean; gpu: boolean }[] = [];
  for (let h = 1; h <= 4; h++) {
    const host = randomUUID();
    const inA = h <= 2;
    await P('POST', '/resource_providers', { name: `compute-${String(h).padStart(2, '0')}.${inA ? 'rack-a' : 'rack-b'}`, uuid: host });
    await P('PUT', `/resource_providers/${host}/inventories`, {
      resource_provider_generation: 0,
      inventories: { DISK_GB: { total: 1800, reserved: 100 } },
    });
    await P('PUT', `/resource_providers/${host}/aggregates`, { resource_provider_generation: 1, aggregates: [inA ? rack.a : rack.b] });
    await P('PUT', `/resource_providers/${host}/traits`, {
      resource_provider_generation: 2,
      traits: [inA ? 'CUSTOM_RACK_A' : 'CUSTOM_RACK_B', 'COMPUTE_VOLUME_MULTI_ATTACH'],
    });
    for (let n = 0; n < 2; n++) {
      const numa = randomUUID();
      slots.push({ uuid: numa, host, rackA: inA, gpu: false });
      await P('POST', '/resource_providers', { name: `compute-${String(h).padStart(2, '0')}-numa${n}`, uuid: numa, parent_provider_uuid: host });
      await P('PUT', `/resource_providers/${numa}/inventories`, {
        resource_provider_generation: 0,
        inventories: { VCPU: { total: 32, allocation_ratio: 4.0 }, MEMORY_MB: { total: 262144, reserved: 4096 } },
      });
      await P('PUT', `/resource_providers/${numa}/traits`, {
        resource_provider_generation: 1,
        traits: ['HW_CPU_X86_AVX2', 'HW_CPU_X86_AVX512F', 'HW_NUMA_ROOT'],
      });
    }
    if (h === 3) {
      const gpu = randomUUID();
      await P('POST', '/resource_providers', { name: 'compute-03-gpu0', uuid: gpu, parent_provider_uuid: host });
      await P('PUT', `/resource_providers/${gpu}/inventories`, { resource_provider_generation: 0, inventories: { VGPU: { total: 8 } } });
      await P('PUT', `/resource_providers/${gpu}/traits`, {
        resource_provider_generation: 1,
        traits: ['HW_GPU_API_VULKAN', 'HW_GPU_MAX_DISPLAY_HEADS_4'],
      });
      slots.push({ uuid: gpu, host, rackA: false, gpu: true });
    }
  }
  // instances of three projects
  const projects = ['web-frontend', 'analytics', 'ml-training'];
  let k = 0;
  for (const [i, slot] of slots.entries()) {
    const count = slot.gpu ? 2 : 1 + (i % 4);
    for (let c = 0; c < count; c++) {
      const project = projects[slot.gpu ? 2 : k++ % 3]!;
      const vcpus = [4, 8, 16, 2][c % 4]!;
      const allocations: Record<string, { resources: Record<string, number> }> = slot.gpu
        ? { [slot.uuid]: { resources: { VGPU: 2 } } }
        : { [slot.uuid]: { resources: { VCPU: vcpus, MEMORY_MB: vcpus * 4096 } } };
      // rack A's disks come from the shared pool, the others' from the host
      allocations[slot.rackA ? pool : slot.host] = { resources: { DISK_GB: 40 * (1 + (c % 3)) } };
      await P(
        'PUT',
        `/allocations/${randomUUID()}`,
        { allocations, project_id: project, user_id: `${project}-deployer`, consumer_generation: null, consumer_type: 'INSTANCE' },
        204,
      );
    }
  }
  // bare metal: five nodes, two allocated
  for (let n = 1; n <= 5; n++) {
    const node = await B(
      'POST',
      '/v1/nodes',
      {
        driver: 'fake-hardware',
        name: `bm-${String(n).padStart(2, '0')}`,
        resource_class: n <= 3 ? 'baremetal-large' : 'baremetal-gpu',
        properties: { cpus: 64, memory_mb: 524288 },
      },
      201,
    );
    for (const target of ['manage', 'provide']) {
      await B('PUT', `/v1/nodes/${node.uuid}/states/provision`, { target }, 202);
      await waitFor(async () => (await B('GET', `/v1/nodes/${node.uuid}`)).target_provision_state === null);
    }
    await B('PUT', `/v1/nodes/${node.uuid}/states/power`, { target: 'power off' }, 202);
    await waitFor(async () => (await B('GET', `/v1/nodes/${node.uuid}`)).power_state === 'power off');
  }
  for (const [name, rc] of [
    ['hpc-job-17', 'baremetal-large'],
    ['render-farm-2', 'baremetal-gpu'],
  ]) {
    const a = await B('POST', '/v1/allocations', { name, resource_class: rc }, 201);
    await waitFor(async () => (await B('GET', `/v1/allocations/${a.uuid}`)).state !== 'allocating');
  }
}

async function waitFor(check: () => Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const { startStack } = await import('../local/start.js');
  const stack = await startStack({
    fresh: true,
    placementPort: 0,
    baremetalPort: 0,
    dashboardPort: 0,
    host: '127.0.0.1',
    maintenanceInterval: 0,
    dataDir: '',
  });
  try {
    await seed(stack.placementUrl, stack.baremetalUrl);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
      await page.goto(stack.dashboardUrl);
      await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: join(OUT, 'dashboard.png') });
      await page.click('nav button[data-tab="baremetal"]');
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(OUT, 'dashboard-baremetal.png') });
      process.stdout.write(`[screenshot] wrote ${join(OUT, 'dashboard.png')} and dashboard-baremetal.png\n`);
    } finally {
      await browser.close();
    }
  } finally {
    await stack.stop();
  }
}

main().catch((e) => {
  process.stderr.write(`[screenshot] failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
