/**
 * What clients print as it comes: the order of Placement's answers and its Python
 * floats, as the reference Placement 8.0.0 gives them (asked with ../shared/reference;
 * the differential runs compare the same against it on random walks):
 *  - GET /allocations/{consumer}: providers and classes in the order of the last write;
 *  - classes (inventories, usages, allocations of a provider, summaries) and traits
 *    (provider traits, summaries, GET /traits) in id order: standard names first, then
 *    custom ones as created (functions/core/placement/standard.ts);
 *  - a provider's allocations by class, amount and write (core/placement/order.ts);
 *  - allocation_ratio printed as Python prints a float: 1.0, 16.0, 3.3333, 1e-05.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';

vi.setConfig({ testTimeout: 60_000 });

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

const tag = () => randomUUID().slice(0, 6).toUpperCase();
/** the keys of an object as the server wrote them (JSON.parse keeps the text's order) */
const keys = (o: object) => Object.keys(o);

async function consumerGeneration(c: string): Promise<number | null> {
  const r = await api.req('GET', `/allocations/${c}`);
  return r.json.consumer_generation ?? null;
}

describe('GET /allocations/{consumer} in the written order', () => {
  it('returns the providers and classes of the last write in its order, every time', async () => {
    const inv = { VCPU: { total: 64 }, MEMORY_MB: { total: 65536 }, DISK_GB: { total: 1000 } };
    const rps = [];
    for (let i = 0; i < 4; i++) rps.push(await createProvider(api, { inventories: inv }));
    const c = randomUUID();
    const orders = [
      [rps[0]!, rps[1]!, rps[2]!],
      [rps[2]!, rps[0]!, rps[1]!],
      [rps[1]!, rps[3]!, rps[0]!, rps[2]!],
      [rps[3]!, rps[2]!],
    ];
    const classOrders = [
      ['VCPU', 'MEMORY_MB', 'DISK_GB'],
      ['DISK_GB', 'VCPU'],
      ['MEMORY_MB', 'DISK_GB', 'VCPU'],
    ];
    for (const [w, order] of orders.entries()) {
      const allocations: Record<string, { resources: Record<string, number> }> = {};
      order.forEach((rp, i) => {
        const classes = classOrders[(w + i) % classOrders.length]!;
        allocations[rp] = { resources: Object.fromEntries(classes.map((rc, k) => [rc, k + 1])) };
      });
      const put = await api.req('PUT', `/allocations/${c}`, {
        body: { allocations, project_id: 'p', user_id: 'u', consumer_generation: await consumerGeneration(c), consumer_type: 'INSTANCE' },
      });
      expect(put.status, put.text).toBe(204);
      for (let k = 0; k < 5; k++) {
        const got = await api.req('GET', `/allocations/${c}`);
        expect(keys(got.json.allocations)).toEqual(order);
        for (const rp of order) expect(keys(got.json.allocations[rp].resources)).toEqual(keys(allocations[rp]!.resources));
      }
    }
  });

  it('keeps the list order of a pre-1.12 PUT and the body order of POST /allocations and of a reshape', async () => {
    const inv = { VCPU: { total: 64 }, MEMORY_MB: { total: 65536 } };
    const [a, b, x] = [await createProvider(api, { inventories: inv }), await createProvider(api, { inventories: inv }), await createProvider(api)];
    const c1 = randomUUID();
    const list = await api.req('PUT', `/allocations/${c1}`, {
      version: '1.8',
      body: {
        allocations: [
          { resource_provider: { uuid: b }, resources: { MEMORY_MB: 8, VCPU: 1 } },
          { resource_provider: { uuid: a }, resources: { VCPU: 2 } },
        ],
        project_id: 'p',
        user_id: 'u',
      },
    });
    expect(list.status, list.text).toBe(204);
    const got1 = await api.req('GET', `/allocations/${c1}`);
    expect(keys(got1.json.allocations)).toEqual([b, a]);
    expect(keys(got1.json.allocations[b].resources)).toEqual(['MEMORY_MB', 'VCPU']);

    const c2 = randomUUID();
    const post = await api.req('POST', '/allocations', {
      body: {
        [c2]: {
          allocations: { [a]: { resources: { MEMORY_MB: 1, VCPU: 1 } }, [b]: { resources: { VCPU: 1 } } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        },
      },
    });
    expect(post.status, post.text).toBe(204);
    expect(keys((await api.req('GET', `/allocations/${c2}`)).json.allocations)).toEqual([a, b]);
    expect(keys((await api.req('GET', `/allocations/${c2}`)).json.allocations[a].resources)).toEqual(['MEMORY_MB', 'VCPU']);

    // a reshape: new inventory on x, c2 moved onto x and a in that order
    const gx = (await api.req('GET', `/resource_providers/${x}`)).json.generation;
    const reshape = await api.req('POST', '/reshaper', {
      body: {
        inventories: { [x]: { resource_provider_generation: gx, inventories: { MEMORY_MB: { total: 64 }, VCPU: { total: 4 } } } },
        allocations: {
          [c2]: {
            allocations: { [x]: { resources: { VCPU: 1, MEMORY_MB: 1 } }, [a]: { resources: { VCPU: 1 } } },
            project_id: 'p',
            user_id: 'u',
            consumer_generation: 1,
            consumer_type: 'INSTANCE',
          },
        },
      },
    });
    expect(reshape.status, reshape.text).toBe(204);
    const got2 = await api.req('GET', `/allocations/${c2}`);
    expect(keys(got2.json.allocations)).toEqual([x, a]);
    expect(keys(got2.json.allocations[x].resources)).toEqual(['VCPU', 'MEMORY_MB']);
  });
});

describe('classes and traits in Placement id order', () => {
  it('lists custom classes as created, after the standard ones, wherever classes are keys', async () => {
    const t = tag();
    // created Z before A: id order is Z, A (name order would be A, Z)
    const [z, a] = [`CUSTOM_Z_${t}`, `CUSTOM_A_${t}`];
    for (const rc of [z, a]) expect((await api.req('POST', '/resource_classes', { body: { name: rc } })).status).toBe(201);
    const rcs = (await api.req('GET', '/resource_classes')).json.resource_classes.map((r: { name: string }) => r.name);
    expect(rcs.indexOf(z)).toBeLessThan(rcs.indexOf(a));
    expect(rcs.slice(0, 3)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB']);

    const body = {
      [a]: { total: 10 },
      DISK_GB: { total: 100 },
      [z]: { total: 10 },
      VCPU: { total: 8 },
      MEMORY_MB: { total: 1024 },
    };
    const rp = await createProvider(api, { inventories: body });
    const want = ['VCPU', 'MEMORY_MB', 'DISK_GB', z, a];
    expect(keys((await api.req('GET', `/resource_providers/${rp}/inventories`)).json.inventories)).toEqual(want);
    expect(keys((await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages)).toEqual(want);

    // usages: a project's classes in the same order, consumer_count after the first one
    const project = `proj-${t}`;
    const c = randomUUID();
    const put = await api.req('PUT', `/allocations/${c}`, {
      body: {
        allocations: { [rp]: { resources: { [a]: 1, DISK_GB: 1, [z]: 1, VCPU: 1 } } },
        project_id: project,
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
    });
    expect(put.status, put.text).toBe(204);
    expect(keys((await api.req('GET', `/usages?project_id=${project}`, { version: '1.37' })).json.usages)).toEqual(['VCPU', 'DISK_GB', z, a]);
    const byType = (await api.req('GET', `/usages?project_id=${project}`)).json.usages;
    expect(keys(byType.INSTANCE)).toEqual(['VCPU', 'consumer_count', 'DISK_GB', z, a]);
    // a provider's allocations: each consumer's classes in class order
    const mine = (await api.req('GET', `/resource_providers/${rp}/allocations`)).json.allocations[c];
    expect(keys(mine.resources)).toEqual(['VCPU', 'DISK_GB', z, a]);
  });

  it('lists a provider’s traits standard first, then custom as created; PUT answers by name as upstream', async () => {
    const t = tag();
    const [zed, alpha, mid] = [`CUSTOM_ZED_${t}`, `CUSTOM_ALPHA_${t}`, `CUSTOM_MID_${t}`];
    for (const x of [zed, alpha, mid]) expect((await api.req('PUT', `/traits/${x}`)).status).toBe(201);
    const rp = await createProvider(api, { inventories: { VCPU: { total: 4 } } });
    const put = await api.req('PUT', `/resource_providers/${rp}/traits`, {
      body: { resource_provider_generation: 1, traits: [mid, 'STORAGE_DISK_SSD', zed, 'HW_CPU_X86_AVX2', alpha] },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json.traits).toEqual([alpha, mid, zed, 'HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD']);
    const want = ['HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD', zed, alpha, mid];
    for (let k = 0; k < 3; k++) expect((await api.req('GET', `/resource_providers/${rp}/traits`)).json.traits).toEqual(want);

    // GET /traits: the same order (prefix and associated filters too); name=in: by name
    const custom = (await api.req('GET', `/traits?name=startswith:CUSTOM_`)).json.traits.filter((x: string) => x.endsWith(t));
    expect(custom).toEqual([zed, alpha, mid]);
    const all = (await api.req('GET', '/traits')).json.traits as string[];
    expect(all.indexOf(zed)).toBeGreaterThan(all.indexOf('STORAGE_DISK_SSD'));
    expect(all.findIndex((x) => x.startsWith('CUSTOM_'))).toBeGreaterThan(all.lastIndexOf('STORAGE_DISK_SSD'));
    const byIn = (await api.req('GET', `/traits?name=in:${zed},STORAGE_DISK_SSD,${alpha}`)).json.traits;
    expect(byIn).toEqual([alpha, zed, 'STORAGE_DISK_SSD']);

    // provider summaries: the same trait order; classes in class order
    const cands = await api.req('GET', `/allocation_candidates?resources=VCPU:1&required=${alpha}`);
    expect(cands.status, cands.text).toBe(200);
    expect(cands.json.provider_summaries[rp].traits).toEqual(want);
  });

  it('orders a provider’s allocations by class, amount and write, as upstream’s index does', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 64 }, MEMORY_MB: { total: 4096 } } });
    const [c1, c2, c3] = [randomUUID(), randomUUID(), randomUUID()];
    const claim = async (c: string, resources: Record<string, number>) => {
      const r = await api.req('PUT', `/allocations/${c}`, {
        body: {
          allocations: { [rp]: { resources } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: await consumerGeneration(c),
          consumer_type: 'INSTANCE',
        },
      });
      expect(r.status, r.text).toBe(204);
    };
    await claim(c1, { MEMORY_MB: 64 }); // no VCPU: comes after every VCPU row
    await claim(c2, { VCPU: 4, MEMORY_MB: 1 });
    await claim(c3, { VCPU: 2 }); // less VCPU than c2: before it
    const got = (await api.req('GET', `/resource_providers/${rp}/allocations`)).json.allocations;
    expect(keys(got)).toEqual([c3, c2, c1]);
    expect(keys(got[c2].resources)).toEqual(['VCPU', 'MEMORY_MB']);
    await claim(c3, { VCPU: 4 }); // now equal to c2's: rewritten later, so after it
    expect(keys((await api.req('GET', `/resource_providers/${rp}/allocations`)).json.allocations)).toEqual([c2, c3, c1]);
  });
});

describe('aggregates as first seen (upstream: by the id of the aggregate row made on first sight)', () => {
  it('lists a provider’s aggregates in the order the deployment first saw them; PUT echoes the request', async () => {
    const [a1, a2, a3] = [randomUUID(), randomUUID(), randomUUID()];
    const [p1, p2, p3] = [await createProvider(api), await createProvider(api), await createProvider(api)];
    const put = async (rp: string, aggregates: string[], generation: number) => {
      const r = await api.req('PUT', `/resource_providers/${rp}/aggregates`, { body: { resource_provider_generation: generation, aggregates } });
      expect(r.status, r.text).toBe(200);
      expect(r.json.aggregates).toEqual(aggregates);
    };
    await put(p1, [a2], 0);
    await put(p2, [a1], 0);
    await put(p3, [a1, a3, a2], 0); // a3 first seen here, after a2 and a1
    for (let k = 0; k < 3; k++) expect((await api.req('GET', `/resource_providers/${p3}/aggregates`)).json.aggregates).toEqual([a2, a1, a3]);
    // the order outlives the providers that first named them
    expect((await api.req('DELETE', `/resource_providers/${p1}`)).status).toBe(204);
    const old = await api.req('PUT', `/resource_providers/${p2}/aggregates`, { version: '1.1', body: [a3, a2, a1] });
    expect(old.json).toEqual({ aggregates: [a3, a2, a1] });
    expect((await api.req('GET', `/resource_providers/${p2}/aggregates`, { version: '1.1' })).json.aggregates).toEqual([a2, a1, a3]);
  });
});

describe('allocation_ratio as Python prints a float', () => {
  it('prints stored ratios as floats, and echoes a write with the number types the client sent', async () => {
    const rp = await createProvider(api);
    const raw = `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8, "allocation_ratio": 16}, "MEMORY_MB": {"total": 1024, "allocation_ratio": 1.5}, "DISK_GB": {"total": 100, "allocation_ratio": 1e-05}, "PCPU": {"total": 4}, "VGPU": {"total": 2, "allocation_ratio": 3.3333}}}`;
    const put = await api.req('PUT', `/resource_providers/${rp}/inventories`, { raw });
    expect(put.status, put.text).toBe(200);
    // the echo: request order, 16 as sent (an int to Python), the default 1.0 a float
    expect(put.text).toMatch(/"VCPU":\{[^}]*"allocation_ratio":16[,}]/);
    expect(put.text).toMatch(/"DISK_GB":\{[^}]*"allocation_ratio":1e-05[,}]/);
    expect(put.text).toMatch(/"PCPU":\{[^}]*"allocation_ratio":1\.0[,}]/);
    expect(keys(put.json.inventories)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCPU', 'VGPU']);

    const got = await api.req('GET', `/resource_providers/${rp}/inventories`);
    const ratio = (rc: string) => got.text.match(new RegExp(`"${rc}":\\{[^}]*"allocation_ratio":([^,}]+)`))?.[1];
    expect([ratio('VCPU'), ratio('MEMORY_MB'), ratio('DISK_GB'), ratio('PCPU'), ratio('VGPU')]).toEqual(['16.0', '1.5', '1e-05', '1.0', '3.3333']);
    const one = await api.req('GET', `/resource_providers/${rp}/inventories/VCPU`);
    expect(one.text).toMatch(/"allocation_ratio":16\.0[,}]/);

    const other = await createProvider(api);
    const post = await api.req('POST', `/resource_providers/${other}/inventories`, {
      raw: '{"resource_class": "VCPU", "total": 4, "allocation_ratio": 2.0}',
    });
    expect(post.status, post.text).toBe(201);
    expect(post.text).toMatch(/"allocation_ratio":2\.0[,}]/);
    const updated = await api.req('PUT', `/resource_providers/${other}/inventories/VCPU`, {
      raw: '{"resource_provider_generation": 1, "total": 4, "allocation_ratio": 2}',
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.text).toMatch(/"allocation_ratio":2[,}]/);
  });
});
