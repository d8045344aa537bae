/**
 * The dashboard in a real headless Chromium (Debian's, driven by playwright-core):
 * it draws the provider tree with usage bars, consumers by project, aggregates/traits,
 * from the public APIs of a running local stack, and renders to a sane screenshot.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { serveDashboard } from '../../../local/dashboard.js';
import { startPlacement, type Api } from '../harness.js';
import { needs } from '../../optional.js';

const chromiumNeeded = needs('chromium');

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let api: Api;
let dash: Server;
let browser: Browser;
let dashUrl: string;

const COMPUTE = 'c0ffee00-0000-4000-8000-000000000001';
const NUMA = 'c0ffee00-0000-4000-8000-000000000002';
const AGG = 'a99a0000-0000-4000-8000-0000000000aa';
const CONSUMER = 'cccc0000-0000-4000-8000-0000000000c1';

beforeAll(async () => {
  if (!chromiumNeeded.available) return;
  api = await startPlacement();
  const ok = async (r: Promise<{ status: number; text: string }>, want: number) => {
    const x = await r;
    if (x.status !== want) throw new Error(`seed failed: ${x.status} ${x.text}`);
  };
  await ok(api.req('POST', '/resource_providers', { body: { name: 'compute-1', uuid: COMPUTE } }), 200);
  await ok(api.req('POST', '/resource_providers', { body: { name: 'numa-0', uuid: NUMA, parent_provider_uuid: COMPUTE } }), 200);
  await ok(
    api.req('PUT', `/resource_providers/${COMPUTE}/inventories`, {
      body: { resource_provider_generation: 0, inventories: { DISK_GB: { total: 100 } } },
    }),
    200,
  );
  await ok(
    api.req('PUT', `/resource_providers/${NUMA}/inventories`, {
      body: { resource_provider_generation: 0, inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 } } },
    }),
    200,
  );
  await ok(api.req('PUT', `/resource_providers/${COMPUTE}/aggregates`, { body: { aggregates: [AGG], resource_provider_generation: 1 } }), 200);
  await ok(api.req('PUT', `/resource_providers/${NUMA}/traits`, { body: { traits: ['HW_CPU_X86_AVX2'], resource_provider_generation: 1 } }), 200);
  await ok(
    api.req('PUT', `/allocations/${CONSUMER}`, {
      body: {
        allocations: { [NUMA]: { resources: { VCPU: 6, MEMORY_MB: 1024 } }, [COMPUTE]: { resources: { DISK_GB: 10 } } },
        project_id: 'proj-a',
        user_id: 'user-a',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
    }),
    204,
  );
  dash = await serveDashboard({ port: 0, host: '127.0.0.1', placementUrl: api.url, baremetalUrl: '' });
  dashUrl = `http://127.0.0.1:${(dash.address() as { port: number }).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  dash?.close();
  await api?.close();
});

chromiumNeeded.describe('dashboard in headless Chromium', () => {
  it('draws the provider tree with usage bars and switches tabs', async () => {
    expect(existsSync(CHROMIUM)).toBe(true);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
    const names = await page.locator('.provider .name').allTextContents();
    expect(names).toEqual(['compute-1', 'numa-0']);
    // numa-0 sits inside compute-1's children
    expect(await page.locator(`.provider[data-uuid="${COMPUTE}"] .children .provider[data-uuid="${NUMA}"]`).count()).toBe(1);
    const vcpuBar = page.locator(`.provider[data-uuid="${NUMA}"] > .bars .bar[data-rc="VCPU"] i`);
    expect(await vcpuBar.getAttribute('style')).toContain('width:75.0%');
    expect(await page.locator(`.provider[data-uuid="${NUMA}"]`).textContent()).toContain('HW_CPU_X86_AVX2');
    await page.click('nav button[data-tab="consumers"]');
    const consumers = await page.locator('#projects').textContent();
    expect(consumers).toContain('project proj-a');
    expect(consumers).toContain('VCPU 6');
    await page.click('nav button[data-tab="groups"]');
    expect(await page.locator('#aggregates').textContent()).toContain(AGG);
    await page.click('nav button[data-tab="providers"]');
    const png = await page.screenshot({ fullPage: true });
    // a real rendering: a PNG of the viewport's width with plenty of bytes in it
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.length).toBeGreaterThan(20_000);
    const out = join(process.cwd(), 'test-results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'dashboard.png'), png);
    await page.close();
  });
});
