/**
 * POST /reshaper against DynamoDB Local: all or nothing, provider and consumer
 * generations checked, custom class references kept, a reshape too big for one DynamoDB
 * transaction written all or nothing too (larger ones: large-changes.test.ts).
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
const state = async (rp: string) => {
  const p = (await api.req('GET', `/resource_providers/${rp}/inventories`)).json;
  const u = (await api.req('GET', `/resource_providers/${rp}/usages`)).json;
  return { generation: p.resource_provider_generation, inventories: p.inventories, usages: u.usages };
};
const owner = { project_id: 'p', user_id: 'u', consumer_type: 'INSTANCE' };

describe('POST /reshaper', () => {
  it('moves inventory and allocations to a child atomically, or changes nothing', async () => {
    const root = await createProvider(api, { inventories: { VCPU: { total: 8 }, DISK_GB: { total: 100 } } });
    const c = randomUUID();
    expect(
      (
        await api.req('PUT', `/allocations/${c}`, {
          version: V,
          body: { allocations: { [root]: { resources: { VCPU: 4, DISK_GB: 10 } } }, ...owner, consumer_generation: null },
        })
      ).status,
    ).toBe(204);
    const child = await createProvider(api, { inventories: {}, parent: root });
    const before = [await state(root), await state(child)];
    const body = (childTotal: number, cg: number | null = 1) => ({
      inventories: {
        [root]: { resource_provider_generation: before[0]!.generation, inventories: { DISK_GB: { total: 100 } } },
        [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: childTotal } } },
      },
      allocations: {
        [c]: { allocations: { [root]: { resources: { DISK_GB: 10 } }, [child]: { resources: { VCPU: 4 } } }, ...owner, consumer_generation: cg },
      },
    });
    // the child is too small: nothing changes anywhere
    const small = await api.req('POST', '/reshaper', { version: V, body: body(3) });
    expect(small.status).toBe(409);
    expect(small.json.errors[0].detail).toContain('Unable to allocate inventory');
    const wrongConsumer = await api.req('POST', '/reshaper', { version: V, body: body(8, 7) });
    expect(wrongConsumer.status).toBe(409);
    expect(wrongConsumer.json.errors[0].code).toBe('placement.concurrent_update');
    expect([await state(root), await state(child)]).toEqual(before);
    expect((await api.req('GET', `/allocations/${c}`, { version: V })).json.consumer_generation).toBe(1);

    expect((await api.req('POST', '/reshaper', { version: V, body: body(8) })).status).toBe(204);
    expect(await state(root)).toMatchObject({ generation: before[0]!.generation + 3, usages: { DISK_GB: 10 } });
    expect(Object.keys((await state(root)).inventories)).toEqual(['DISK_GB']);
    expect(await state(child)).toMatchObject({ generation: 3, usages: { VCPU: 4 } });
    expect((await api.req('GET', `/allocations/${c}`, { version: V })).json).toMatchObject({
      consumer_generation: 2,
      allocations: { [root]: { resources: { DISK_GB: 10 } }, [child]: { resources: { VCPU: 4 } } },
    });
    // a stale provider generation is refused
    const stale = await api.req('POST', '/reshaper', { version: V, body: body(8, 2) });
    expect(stale.status).toBe(409);
    expect(stale.json.errors[0].detail).toContain(`resource provider generation conflict for provider ${root}`);
  });

  it('keeps custom resource class references: a class a reshape starts using cannot be deleted', async () => {
    const cls = `CUSTOM_R${randomUUID().replace(/-/g, '').slice(0, 8).toUpperCase()}`;
    expect((await api.req('PUT', `/resource_classes/${cls}`, { version: '1.7' })).status).toBe(201);
    const a = await createProvider(api, { inventories: { VCPU: { total: 1 } } });
    const b = await createProvider(api, { inventories: { VCPU: { total: 1 } } });
    const r = await api.req('POST', '/reshaper', {
      version: V,
      body: {
        inventories: {
          [a]: { resource_provider_generation: 1, inventories: { [cls]: { total: 2 } } },
          [b]: { resource_provider_generation: 1, inventories: { [cls]: { total: 2 } } },
        },
        allocations: {},
      },
    });
    expect(r.status).toBe(204);
    expect((await api.req('DELETE', `/resource_classes/${cls}`)).status).toBe(409);
    const off = await api.req('POST', '/reshaper', {
      version: V,
      body: {
        inventories: {
          [a]: { resource_provider_generation: 3, inventories: { VCPU: { total: 1 } } },
          [b]: { resource_provider_generation: 3, inventories: { VCPU: { total: 1 } } },
        },
        allocations: {},
      },
    });
    expect(off.status).toBe(204);
    expect((await api.req('DELETE', `/resource_classes/${cls}`)).status).toBe(204);
  });

  it('writes a reshape that needs more than 100 transaction actions, all or nothing', async () => {
    const root = await createProvider(api, { inventories: { VCPU: { total: 100 } } });
    const consumers = Array.from({ length: 40 }, () => randomUUID());
    for (const c of consumers) {
      expect(
        (
          await api.req('PUT', `/allocations/${c}`, {
            version: V,
            body: { allocations: { [root]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: null },
          })
        ).status,
      ).toBe(204);
    }
    const child = await createProvider(api, { inventories: {}, parent: root });
    const before = await state(root);
    const body = (consumerGeneration: number) => ({
      inventories: {
        [root]: { resource_provider_generation: before.generation, inventories: {} },
        [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: 100 } } },
      },
      allocations: Object.fromEntries(
        consumers.map((c, i) => [
          c,
          { allocations: { [child]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: i === 39 ? consumerGeneration : 1 },
        ]),
      ),
    });
    // the last consumer's generation is stale: nothing is written
    const stale = await api.req('POST', '/reshaper', { version: V, body: body(7) });
    expect(stale.status).toBe(409);
    expect(stale.json.errors[0].code).toBe('placement.concurrent_update');
    expect(await state(root)).toEqual(before);
    const r = await api.req('POST', '/reshaper', { version: V, body: body(1) });
    expect(r.status, r.text).toBe(204);
    expect((await state(root)).usages).toEqual({});
    expect((await state(child)).usages).toEqual({ VCPU: 40 });
  }, 60_000);
});
