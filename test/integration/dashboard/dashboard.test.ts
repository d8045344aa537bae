/**
 * The dashboard in a real headless Chromium (Debian's, driven by playwright-core),
 * from the public APIs of a running local stack:
 * - a small cloud: the provider tree with usage bars, consumers by project,
 *   aggregates/traits, and a sane screenshot;
 * - a large cloud (12,000 providers, bulk-loaded): the list read once in its smallest
 *   form and paged, details for the visible page only, find by name/uuid, the summary by
 *   aggregate, Placement's filters, bare-metal paging, and — with the response limit
 *   lowered so the list cannot be sent — the search-only mode and its message.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { resetConfig } from '../../../functions/config.js';
import { serveDashboard } from '../../../local/dashboard.js';
import { bulkTrees, type BulkTree } from '../fixtures.js';
import { startPlacement, type Api } from '../harness.js';
import { availableNode, startBaremetal, type BmApi } from '../baremetal/harness.js';
import { needs } from '../../optional.js';

const chromiumNeeded = needs('chromium');

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** the dashboard's page size (dashboard/public/state.js) */
const PAGE_SIZE = 25;
let browser: Browser;

beforeAll(async () => {
  if (!chromiumNeeded.available) return;
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
});

async function ok(r: Promise<{ status: number; text: string }>, want: number) {
  const x = await r;
  if (x.status !== want) throw new Error(`seed failed: ${x.status} ${x.text}`);
}

/** wait until the page has finished what the last action started */
async function settled(page: Page) {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
}

const text = async (page: Page, selector: string) => (await page.locator(selector).textContent()) ?? '';

chromiumNeeded.describe('dashboard in headless Chromium: a small cloud', () => {
  let api: Api;
  let dash: Server;
  let dashUrl: string;
  const COMPUTE = 'c0ffee00-0000-4000-8000-000000000001';
  const NUMA = 'c0ffee00-0000-4000-8000-000000000002';
  const AGG = 'a99a0000-0000-4000-8000-0000000000aa';
  const CONSUMER = 'cccc0000-0000-4000-8000-0000000000c1';

  beforeAll(async () => {
    api = await startPlacement({}, { stream: true }); // the Changes tab reads the feed
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
  }, 120_000);

  afterAll(async () => {
    dash?.close();
    await api?.close();
  });

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
    // a whole small cloud fits one page: the summary counts it exactly
    expect(await text(page, '#pager')).toContain('1–2 of 2 providers');
    expect(await text(page, `#by-aggregate tr[data-aggregate="${AGG}"] .count`)).toBe('1');
    expect(await text(page, '#by-aggregate')).toContain('1 provider in no aggregate.');
    await page.click('nav button[data-tab="consumers"]');
    const consumers = await page.locator('#projects').textContent();
    expect(consumers).toContain('project proj-a');
    expect(consumers).toContain('VCPU 6');
    await page.click('nav button[data-tab="groups"]');
    expect(await page.locator('#aggregates').textContent()).toContain(AGG);
    expect(await text(page, '#traits tr[data-trait="HW_CPU_X86_AVX2"]')).toContain('numa-0');
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

  it('shows the change feed live on the Changes tab (npm start: the events file)', async () => {
    const { startLocalFeed } = await import('../../../local/feed.js');
    const dir = mkdtempSync(join(tmpdir(), 'berth-dash-feed-'));
    const feed = await startLocalFeed({
      endpoint: inject('ddbEndpoint'),
      table: process.env.TABLE_NAME!,
      eventsFile: join(dir, 'events.jsonl'),
      intervalMs: 100,
    });
    const live = await serveDashboard({ port: 0, host: '127.0.0.1', placementUrl: api.url, baremetalUrl: '', eventsFile: join(dir, 'events.jsonl') });
    try {
      await feed.drain();
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`http://127.0.0.1:${(live.address() as { port: number }).port}`);
      await page.click('nav button[data-tab="changes"]');
      await page.waitForSelector('#changes-list tr', { timeout: 30_000 });
      const rows = await page.locator('#changes-list tr').allTextContents();
      // newest first: the claim above, the providers' changes before it
      expect(rows[0]).toContain('consumer.allocations.update');
      expect(rows.some((r) => r.includes('resource_provider.create'))).toBe(true);
      // a change made now appears without reloading the page
      const before = rows.length;
      await ok(api.req('DELETE', `/allocations/${CONSUMER}`), 204);
      await page.waitForFunction(`document.querySelectorAll('#changes-list tr').length > ${before}`, undefined, { timeout: 30_000 });
      expect(await page.locator('#changes-list tr').first().textContent()).toContain('consumer.allocations.update');
      expect(await page.locator('#changes-list tr').first().textContent()).toContain('gone');
      await page.close();
    } finally {
      live.close();
      await feed.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

chromiumNeeded.describe('dashboard in headless Chromium: a large cloud', () => {
  const TREES = 3000;
  const CHILDREN = 3;
  const AGGREGATES = Array.from({ length: 12 }, () => randomUUID());
  const ODD_NAME = '<img src=x onerror="window.__xss=1">';
  let api: Api;
  let bmServer: Server;
  let dash: Server;
  let dashUrl: string;
  let trees: BulkTree[];
  let total: number;
  /** names in the order the API lists them */
  let listed: string[];

  beforeAll(async () => {
    api = await startPlacement();
    trees = await bulkTrees({ trees: TREES, children: CHILDREN, aggregates: AGGREGATES });
    // a name that would be markup if it were inserted as HTML
    await ok(api.req('POST', '/resource_providers', { body: { name: ODD_NAME, uuid: randomUUID() } }), 200);
    // consumers of one project on the first tree
    const first = trees[0]!;
    for (const [i, child] of first.children.entries()) {
      await ok(
        api.req('PUT', `/allocations/${randomUUID()}`, {
          body: {
            allocations: { [child.uuid]: { resources: { VCPU: 4, MEMORY_MB: 8192 } }, [first.root.uuid]: { resources: { DISK_GB: 20 } } },
            project_id: 'proj-big',
            user_id: `user-${i}`,
            consumer_generation: null,
            consumer_type: 'INSTANCE',
          },
        }),
        204,
      );
    }
    const all = await api.req('GET', '/resource_providers', { version: '1.0', headers: { 'accept-encoding': 'gzip' } });
    listed = all.json.resource_providers.map((p: { name: string }) => p.name);
    total = listed.length;
    expect(total).toBe(TREES * (CHILDREN + 1) + 1);
    // bare metal on the same table: more nodes than one page of the dashboard
    const { serveBaremetal } = await import('../../../local/apis.js');
    bmServer = await serveBaremetal(0);
    const bmUrl = `http://127.0.0.1:${(bmServer.address() as { port: number }).port}`;
    for (let i = 0; i < 60; i++) {
      const r = await fetch(`${bmUrl}/v1/nodes`, {
        method: 'POST',
        headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'x-openstack-ironic-api-version': '1.78' },
        body: JSON.stringify({ driver: 'fake-hardware', name: `bm-${String(i).padStart(2, '0')}`, resource_class: 'baremetal' }),
      });
      expect(r.status).toBe(201);
    }
    dash = await serveDashboard({ port: 0, host: '127.0.0.1', placementUrl: api.url, baremetalUrl: bmUrl });
    dashUrl = `http://127.0.0.1:${(dash.address() as { port: number }).port}`;
  }, 180_000);

  afterAll(async () => {
    dash?.close();
    bmServer?.closeAllConnections?.();
    bmServer?.close();
    await api?.close();
    delete process.env.MAX_RESPONSE_BYTES;
    resetConfig();
  });

  it('reads the list once, compressed, in its smallest form, and details for the visible page only', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: { url: string; version: string }[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/placement/')) requests.push({ url: r.url(), version: r.headers()['openstack-api-version'] ?? '' });
    });
    const listAnswer = page.waitForResponse((r) => new URL(r.url()).pathname === '/placement/resource_providers' && !new URL(r.url()).search);
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 60_000 });
    const list = await listAnswer;
    expect(list.status()).toBe(200);
    expect((await list.allHeaders())['content-encoding']).toBe('gzip');
    const lists = requests.filter((r) => new URL(r.url).pathname === '/placement/resource_providers' && !new URL(r.url).search);
    expect(lists).toEqual([expect.objectContaining({ version: 'placement 1.0' })]);
    // per-provider reads for the visible page only; everything else bounded whatever the cloud's size
    expect(requests.filter((r) => r.url.endsWith('/inventories'))).toHaveLength(PAGE_SIZE);
    expect(requests.length).toBeLessThan(400);
    const pages = Math.ceil(total / PAGE_SIZE);
    expect(await text(page, '#pager')).toContain(`1–25 of ${total.toLocaleString('en-US')} providers`);
    expect(await text(page, '#pager')).toContain(`page 1 of ${pages.toLocaleString('en-US')}`);
    expect(await text(page, '#provider-summary')).toContain(total.toLocaleString('en-US'));
    expect(await page.locator('#tree .provider').count()).toBe(PAGE_SIZE);

    await page.click('#pager button[data-go="next"]');
    await settled(page);
    expect(await text(page, '#pager')).toContain(`26–50 of ${total.toLocaleString('en-US')} providers`);
    expect((await page.locator('#tree .provider .name').allTextContents()).sort()).toEqual(listed.slice(25, 50).sort());
    await page.click('#pager button[data-go="last"]');
    await settled(page);
    expect(await text(page, '#pager')).toContain(`page ${pages.toLocaleString('en-US')} of ${pages.toLocaleString('en-US')}`);
    expect(await page.locator('#tree .provider').count()).toBe(total - (pages - 1) * PAGE_SIZE);
    await page.close();
  });

  it('finds providers by name or uuid in the list, and inserts names as text', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 60_000 });
    const t = trees[123]!;
    await page.fill('#find', t.root.name);
    await settled(page);
    expect(await text(page, '#pager')).toContain(`1–4 of 4 providers`);
    // the whole tree on one page: children nested in their root
    expect(await page.locator(`.provider[data-uuid="${t.root.uuid}"] .children .provider`).count()).toBe(CHILDREN);
    const child = trees[2000]!.children[1]!;
    await page.fill('#find', child.uuid.slice(0, 13).toUpperCase());
    await settled(page);
    expect(await text(page, '#pager')).toContain('1–1 of 1 provider');
    expect(await page.locator('#tree .provider .name').allTextContents()).toEqual([child.name]);
    // its parent is on no page shown: the card says where it belongs
    expect(await text(page, `.provider[data-uuid="${child.uuid}"]`)).toContain(`child of ${trees[2000]!.root.uuid.slice(0, 8)}`);
    await page.fill('#find', 'onerror');
    await settled(page);
    expect(await page.locator('#tree .provider .name').allTextContents()).toEqual([ODD_NAME]);
    expect(await page.locator('#tree img').count()).toBe(0);
    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
    await page.fill('#find', 'no-such-provider');
    await settled(page);
    expect(await text(page, '#tree')).toContain('No provider matches.');
    await page.close();
  });

  it('summarizes by aggregate and filters with Placement (member_of, in_tree, required)', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 60_000 });
    const perAggregate = TREES / AGGREGATES.length;
    // the aggregates of the visible page are always counted, exactly, cloud-wide
    const first = trees[0]!.aggregate!;
    const rows = page.locator('#aggregates tr[data-aggregate]');
    const counted = new Map<string, string>();
    for (let i = 0; i < (await rows.count()); i++) {
      counted.set((await rows.nth(i).getAttribute('data-aggregate'))!, (await rows.nth(i).locator('.count').textContent())!);
    }
    expect(counted.get(first)).toBe(String(perAggregate));
    for (const [agg, n] of counted) {
      expect(AGGREGATES).toContain(agg);
      expect(n).toBe(String(perAggregate));
    }
    // what the found aggregates leave out, said with the sampling caveat
    const outside = total - counted.size * perAggregate;
    expect(await text(page, '#by-aggregate .summary-note')).toContain(`${outside.toLocaleString('en-US')} providers outside these aggregates`);

    // the providers tab shows the largest few; the Aggregates tab all of them
    expect(await page.locator('#by-aggregate tr[data-aggregate]').count()).toBe(Math.min(8, counted.size));
    await page.click('nav button[data-tab="groups"]');
    await page.click(`#aggregates button[data-show="${first}"]`);
    await settled(page);
    expect(await text(page, '#filter-note')).toContain(`member_of=${first}`);
    expect(await text(page, '#pager')).toContain(`1–25 of ${perAggregate} providers`);
    const names = await page.locator('#tree .provider .name').allTextContents();
    expect(names.every((n) => /^host-\d{5}$/.test(n))).toBe(true);

    // a provider's tree, in tree order
    const rootShown = await page.locator('#tree .provider').first().getAttribute('data-uuid');
    const t = trees.find((x) => x.root.uuid === rootShown)!;
    expect(t.aggregate).toBe(first);
    await page.click(`.provider[data-uuid="${t.root.uuid}"] button[data-tree]`);
    await settled(page);
    expect(await text(page, '#pager')).toContain('1–4 of 4 providers');
    expect(await page.locator(`.provider[data-uuid="${t.root.uuid}"] .children .provider`).count()).toBe(CHILDREN);

    await page.click('nav button[data-tab="groups"]');
    await page.click('#traits tr[data-trait="HW_CPU_X86_AVX2"] button');
    await settled(page);
    expect(await text(page, '#filter-note')).toContain('required=HW_CPU_X86_AVX2');
    expect(await text(page, '#pager')).toContain(`of ${TREES.toLocaleString('en-US')} providers`);
    await page.click('#filter-note button');
    await settled(page);
    expect(await text(page, '#pager')).toContain(`of ${total.toLocaleString('en-US')} providers`);
    await page.close();
  });

  it('shows the consumers of the visible page and a project’s usage cloud-wide', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 60_000 });
    await page.click('nav button[data-tab="consumers"]');
    expect(await text(page, '#projects')).toContain(`project proj-big — ${CHILDREN} consumers`);
    expect(await text(page, '#consumer-note')).toContain('Consumers of the 25 providers on the providers page shown');
    await page.fill('#project-usage input[name="project_id"]', 'proj-big');
    await page.click('#project-usage button[type="submit"]');
    await settled(page);
    const usage = await text(page, '#project-usage-result');
    expect(usage).toContain(`VCPU ${4 * CHILDREN}`);
    expect(usage).toContain(`DISK_GB ${20 * CHILDREN}`);
    await page.close();
  });

  it('pages bare-metal nodes', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 60_000 });
    await page.click('nav button[data-tab="baremetal"]');
    expect(await page.locator('#nodes tr').count()).toBe(51);
    expect(await text(page, '#bm-summary')).toContain('nodes on this page');
    await page.click('#nodes-pager button[data-go="next"]');
    await settled(page);
    expect(await page.locator('#nodes tr').count()).toBe(11);
    expect(await page.locator('#nodes-pager button[data-go="next"]').isDisabled()).toBe(true);
    await page.close();
  });

  it('works from Placement’s filters, and says why, when the list is too large to send', async () => {
    // a limit the 1.0 list of this cloud cannot fit even compressed (~0.6 MB), but a tree or an aggregate can
    process.env.MAX_RESPONSE_BYTES = '200000';
    resetConfig();
    try {
      const direct = await api.req('GET', '/resource_providers', { version: '1.0', headers: { 'accept-encoding': 'gzip' } });
      expect(direct.status).toBe(400);
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(dashUrl);
      await page.waitForSelector('body[data-loaded="true"]', { timeout: 60_000 });
      const note = await text(page, '#list-note');
      expect(note).toContain('Search only');
      expect(note).toContain('does not fit even compressed');
      expect(note).toContain('member_of, in_tree');
      expect(await text(page, '#provider-summary')).toContain('too many to list');
      expect(await page.locator('#find').isDisabled()).toBe(true);
      expect(await text(page, '#tree')).toContain('Use the filters above to find providers.');

      const t = trees[7]!;
      await page.fill('#filters input[name="name"]', t.root.name);
      await page.click('#apply');
      await settled(page);
      expect(await page.locator('#tree .provider .name').allTextContents()).toEqual([t.root.name]);
      // the summary sees what the filter found
      expect(await text(page, `#by-aggregate tr[data-aggregate="${t.aggregate}"] .count`)).toBe(String(TREES / AGGREGATES.length));
      await page.click(`.provider[data-uuid="${t.root.uuid}"] button[data-tree]`);
      await settled(page);
      expect(await text(page, '#pager')).toContain('1–4 of 4 providers');
      // within a filter's result the find box works again
      await page.fill('#find', 'numa2');
      await settled(page);
      expect(await page.locator('#tree .provider .name').allTextContents()).toEqual([`${t.root.name}-numa2`]);
      await page.fill('#find', '');
      await settled(page);

      // a filter whose answer is too large too: the API's narrowing message, not a broken page
      await page.fill('#filters input[name="in_tree"]', '');
      await page.fill('#filters input[name="resources"]', 'VCPU:1');
      await page.click('#apply');
      await settled(page);
      expect(await text(page, '#filter-note')).toContain('The filter was refused');
      expect(await text(page, '#filter-note')).toContain('does not fit');
      await page.close();
    } finally {
      delete process.env.MAX_RESPONSE_BYTES;
      resetConfig();
    }
  });
});

chromiumNeeded.describe('dashboard in headless Chromium: bare metal through Placement (BAREMETAL_SCHEDULER=placement)', () => {
  let bm: BmApi;
  let placement: Server;
  let dash: Server;
  let dashUrl: string;
  const nodes: string[] = [];
  let allocated = '';

  beforeAll(async () => {
    bm = await startBaremetal({ BAREMETAL_SCHEDULER: 'placement' });
    const { servePlacement } = await import('../../../local/apis.js');
    placement = await servePlacement(0);
    for (const name of ['dash-gold-1', 'dash-gold-2']) nodes.push((await availableNode(bm, { resource_class: 'dash-gold', name })).uuid);
    // made by a member of proj-bm: the allocation's consumer is that project's
    const c = await bm.req('POST', '/v1/allocations', {
      body: { resource_class: 'dash-gold', candidate_nodes: [nodes[0]] },
      headers: { 'X-Project-Id': 'proj-bm' },
    });
    expect(c.status).toBe(201);
    await bm.settle();
    const a = (await bm.req('GET', `/v1/allocations/${c.json.uuid}`)).json;
    expect(a.state).toBe('active');
    allocated = a.node_uuid;
    const url = (s: Server) => `http://127.0.0.1:${(s.address() as { port: number }).port}`;
    dash = await serveDashboard({ port: 0, host: '127.0.0.1', placementUrl: url(placement), baremetalUrl: bm.url });
    dashUrl = url(dash);
  }, 120_000);

  afterAll(async () => {
    dash?.close();
    placement?.closeAllConnections?.();
    placement?.close();
    await bm?.close();
  });

  it('shows every node as a provider with its unit, the allocated one full, and the allocation in its project', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(dashUrl);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
    expect((await page.locator('.provider .name').allTextContents()).sort()).toEqual([...nodes].sort());
    const bar = (u: string) => page.locator(`.provider[data-uuid="${u}"] > .bars .bar[data-rc="CUSTOM_DASH_GOLD"] i`);
    expect(await bar(allocated).getAttribute('style')).toContain('width:100.0%');
    const free = nodes.find((u) => u !== allocated)!;
    expect(await bar(free).getAttribute('style')).toContain('width:0.0%');
    await page.click('nav button[data-tab="consumers"]');
    const consumers = (await page.locator('#projects').textContent()) ?? '';
    expect(consumers).toContain('project proj-bm');
    expect(consumers).toContain('CUSTOM_DASH_GOLD 1');
    await page.close();
  });
});
