/**
 * Requests Placement accepts that need more than one DynamoDB transaction (100 actions):
 * written all or nothing through the intent protocol (functions/store/ddb/intents/),
 * at the sizes real clouds reach — a compute host's reshape with 500 instances, 1,000
 * aggregates and 300 custom traits on one provider, a consumer on 120 providers, 200
 * consumers in one POST /allocations, a subtree of 500 providers re-parented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

const V = '1.38';
const owner = { project_id: 'p-large', user_id: 'u-large', consumer_type: 'INSTANCE' };
const usagesOf = async (rp: string) => (await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages;
const generationOf = async (rp: string) => (await api.req('GET', `/resource_providers/${rp}`, { version: V })).json.generation as number;

/** `n` new consumers holding `resources` on `rp`, written 100 at a time (each POST itself more than one transaction) */
async function consumersOn(rp: string, n: number, resources: Record<string, number>): Promise<string[]> {
  const all = Array.from({ length: n }, () => randomUUID());
  for (let i = 0; i < all.length; i += 100) {
    const body = Object.fromEntries(
      all.slice(i, i + 100).map((c) => [c, { allocations: { [rp]: { resources } }, ...owner, consumer_generation: null }]),
    );
    const r = await api.req('POST', '/allocations', { version: V, body });
    expect(r.status, r.text).toBe(204);
  }
  return all;
}

describe('changes larger than one transaction', () => {
  it('reshapes a compute host with 500 instances (VCPU to a NUMA child), readers seeing all of it or none', async () => {
    const root = await createProvider(api, { inventories: { VCPU: { total: 1000 }, DISK_GB: { total: 10_000 } } });
    const consumers = await consumersOn(root, 500, { VCPU: 1, DISK_GB: 10 });
    const child = await createProvider(api, { inventories: {}, parent: root });
    const rootGen = await generationOf(root);
    const body = {
      inventories: {
        [root]: { resource_provider_generation: rootGen, inventories: { DISK_GB: { total: 10_000 } } },
        [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: 1000 } } },
      },
      allocations: Object.fromEntries(
        consumers.map((c) => [
          c,
          { allocations: { [root]: { resources: { DISK_GB: 10 } }, [child]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: 1 },
        ]),
      ),
    };
    // a reader polls while the reshape is written: once it has seen the new state it never sees the old one again
    let writing = true;
    const seen: Array<'old' | 'new'> = [];
    const reader = (async () => {
      const sample = [consumers[0]!, consumers[250]!, consumers[499]!];
      while (writing) {
        for (const c of sample) {
          const a = (await api.req('GET', `/allocations/${c}`, { version: V })).json.allocations;
          seen.push(a[child] ? 'new' : 'old');
        }
        const u = await usagesOf(child);
        seen.push(u.VCPU === 500 ? 'new' : 'old');
      }
    })();
    const r = await api.req('POST', '/reshaper', { version: V, body });
    writing = false;
    await reader;
    expect(r.status, r.text).toBe(204);
    const firstNew = seen.indexOf('new');
    if (firstNew >= 0) expect(seen.slice(firstNew)).not.toContain('old');
    expect(await usagesOf(root)).toEqual({ DISK_GB: 5000 });
    expect(await usagesOf(child)).toEqual({ VCPU: 500 });
    for (const c of [consumers[0]!, consumers[499]!]) {
      const got = (await api.req('GET', `/allocations/${c}`, { version: V })).json;
      expect(got.allocations[child].resources).toEqual({ VCPU: 1 });
      expect(got.consumer_generation).toBe(2);
    }
    expect((await api.req('GET', `/usages?project_id=${owner.project_id}`, { version: '1.9' })).json.usages).toMatchObject({ VCPU: 500 });
  }, 300_000);

  it('refuses a large reshape whose provider generation is stale, changing nothing', async () => {
    const root = await createProvider(api, { inventories: { VCPU: { total: 200 } } });
    const consumers = await consumersOn(root, 120, { VCPU: 1 });
    const child = await createProvider(api, { inventories: {}, parent: root });
    const rootGen = await generationOf(root);
    const body = (gen: number) => ({
      inventories: {
        [root]: { resource_provider_generation: gen, inventories: {} },
        [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: 200 } } },
      },
      allocations: Object.fromEntries(
        consumers.map((c) => [c, { allocations: { [child]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: 1 }]),
      ),
    });
    const stale = await api.req('POST', '/reshaper', { version: V, body: body(rootGen - 1) });
    expect(stale.status).toBe(409);
    expect(stale.json.errors[0].code).toBe('placement.concurrent_update');
    expect(await usagesOf(root)).toEqual({ VCPU: 120 });
    expect(await usagesOf(child)).toEqual({});
    expect((await api.req('GET', `/allocations/${consumers[0]}`, { version: V })).json.consumer_generation).toBe(1);
    expect((await api.req('POST', '/reshaper', { version: V, body: body(rootGen) })).status).toBe(204);
    expect(await usagesOf(child)).toEqual({ VCPU: 120 });
  }, 300_000);

  it('sets 1,000 aggregates on one provider, in the order given, and can take them away again', async () => {
    const rp = await createProvider(api);
    const aggs = Array.from({ length: 1000 }, () => randomUUID());
    const put = await api.req('PUT', `/resource_providers/${rp}/aggregates`, {
      version: '1.19',
      body: { aggregates: aggs, resource_provider_generation: 0 },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json.aggregates).toEqual(aggs);
    expect(put.json.resource_provider_generation).toBe(1);
    const got = await api.req('GET', `/resource_providers/${rp}/aggregates`, { version: '1.19' });
    expect(got.json.aggregates).toEqual(aggs);
    const list = await api.req('GET', `/resource_providers?member_of=${aggs[999]}`, { version: '1.19' });
    expect(list.json.resource_providers.map((p: { uuid: string }) => p.uuid)).toEqual([rp]);
    const cleared = await api.req('PUT', `/resource_providers/${rp}/aggregates`, {
      version: '1.19',
      body: { aggregates: [], resource_provider_generation: 1 },
    });
    expect(cleared.status).toBe(200);
    expect((await api.req('GET', `/resource_providers/${rp}/aggregates`, { version: '1.19' })).json.aggregates).toEqual([]);
  }, 300_000);

  it('sets 300 custom traits on one provider; a trait in use stays undeletable', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `CUSTOM_LARGE_${String(i).padStart(3, '0')}_${randomUUID().slice(0, 8).toUpperCase()}`);
    for (const n of names) expect((await api.req('PUT', `/traits/${n}`, { version: '1.6' })).status).toBe(201);
    const rp = await createProvider(api);
    const traits = [...names, 'HW_CPU_X86_AVX2'];
    const put = await api.req('PUT', `/resource_providers/${rp}/traits`, { version: '1.6', body: { traits, resource_provider_generation: 0 } });
    expect(put.status, put.text).toBe(200);
    const got = await api.req('GET', `/resource_providers/${rp}/traits`, { version: '1.6' });
    expect([...got.json.traits].sort()).toEqual([...traits].sort());
    expect((await api.req('DELETE', `/traits/${names[150]}`, { version: '1.6' })).status).toBe(409);
    // away again: every trait's reference count back to zero
    expect((await api.req('DELETE', `/resource_providers/${rp}/traits`, { version: '1.6' })).status).toBe(204);
    expect((await api.req('DELETE', `/traits/${names[150]}`, { version: '1.6' })).status).toBe(204);
  }, 300_000);

  it('claims for one consumer on 120 providers, and moves it off them again', async () => {
    const rps: string[] = [];
    for (let i = 0; i < 120; i++) rps.push(await createProvider(api, { inventories: { VCPU: { total: 4 } } }));
    const c = randomUUID();
    const allocations = Object.fromEntries(rps.map((rp) => [rp, { resources: { VCPU: 2 } }]));
    const r = await api.req('PUT', `/allocations/${c}`, { version: V, body: { allocations, ...owner, consumer_generation: null } });
    expect(r.status, r.text).toBe(204);
    const got = (await api.req('GET', `/allocations/${c}`, { version: V })).json;
    expect(Object.keys(got.allocations).sort()).toEqual([...rps].sort());
    for (const rp of [rps[0]!, rps[119]!]) expect(await usagesOf(rp)).toEqual({ VCPU: 2 });
    expect((await api.req('DELETE', `/allocations/${c}`)).status).toBe(204);
    for (const rp of [rps[0]!, rps[119]!]) expect(await usagesOf(rp)).toEqual({ VCPU: 0 });
  }, 300_000);

  it('writes 200 consumers in one POST /allocations, counted in /usages', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 1000 }, MEMORY_MB: { total: 1_000_000 } } });
    const project = `p-${randomUUID()}`;
    const consumers = Array.from({ length: 200 }, () => randomUUID());
    const body = Object.fromEntries(
      consumers.map((c, i) => [
        c,
        {
          allocations: { [rp]: { resources: { VCPU: 1, MEMORY_MB: 128 } } },
          project_id: project,
          user_id: `u${i % 3}`,
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        },
      ]),
    );
    const r = await api.req('POST', '/allocations', { version: V, body });
    expect(r.status, r.text).toBe(204);
    expect(await usagesOf(rp)).toEqual({ VCPU: 200, MEMORY_MB: 25_600 });
    expect((await api.req('GET', `/usages?project_id=${project}`, { version: V })).json.usages).toEqual({
      INSTANCE: { consumer_count: 200, VCPU: 200, MEMORY_MB: 25_600 },
    });
    const allocs = (await api.req('GET', `/resource_providers/${rp}/allocations`, { version: V })).json.allocations;
    expect(Object.keys(allocs)).toHaveLength(200);
  }, 300_000);

  it('re-parents a subtree of 500 providers into another tree (1.37)', async () => {
    const a = await createProvider(api);
    const b = await createProvider(api);
    const x = await createProvider(api, { parent: a });
    const below: string[] = [];
    for (let i = 0; i < 499; i++) below.push(await createProvider(api, { parent: i < 20 ? x : below[i % 20]! }));
    const r = await api.req('PUT', `/resource_providers/${x}`, { version: '1.37', body: { name: `rp-${x}`, parent_provider_uuid: b } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.root_provider_uuid).toBe(b);
    const leaf = (await api.req('GET', `/resource_providers/${below[498]}`, { version: '1.37' })).json;
    expect(leaf.root_provider_uuid).toBe(b);
    const tree = (await api.req('GET', `/resource_providers?in_tree=${b}`, { version: '1.37' })).json.resource_providers;
    expect(tree).toHaveLength(501);
    expect(
      (await api.req('GET', `/resource_providers?in_tree=${a}`, { version: '1.37' })).json.resource_providers.map((p: { uuid: string }) => p.uuid),
    ).toEqual([a]);
  }, 300_000);
});
