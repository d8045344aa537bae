import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { getProvider } from '../../../functions/store/placement/providers.js';
import { createProvider } from '../fixtures.js';

// races and cold snapshot loads on a busy 2-core machine need more than vitest's 5 s default
vi.setConfig({ testTimeout: 60_000 });

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

const inv = (uuid: string) => `/resource_providers/${uuid}/inventories`;

describe('inventories', () => {
  it('applies defaults, bumps the generation and invVer on every change, and keeps usage fields', async () => {
    const rp = await createProvider(api);
    const put = await api.req('PUT', inv(rp), {
      body: { resource_provider_generation: 0, inventories: { VCPU: { total: 8, allocation_ratio: 16 }, DISK_GB: { total: 100 } } },
    });
    expect(put.status).toBe(200);
    expect(put.json.resource_provider_generation).toBe(1);
    expect(put.json.inventories.DISK_GB).toEqual({ total: 100, reserved: 0, min_unit: 1, max_unit: 2147483647, step_size: 1, allocation_ratio: 1 });
    expect(put.json.inventories.VCPU.allocation_ratio).toBe(16);
    const before = (await getProvider(rp))!;
    expect(before.invVersion).toBe(1);

    // an identical PUT still bumps the generation (upstream always increments)
    const same = await api.req('PUT', inv(rp), {
      body: { resource_provider_generation: 1, inventories: { VCPU: { total: 8, allocation_ratio: 16 }, DISK_GB: { total: 100 } } },
    });
    expect(same.json.resource_provider_generation).toBe(2);
    const post = await api.req('POST', inv(rp), { body: { resource_class: 'MEMORY_MB', total: 1024, reserved: 512 } });
    expect(post.status).toBe(201);
    expect(post.headers.get('location')).toBe(`${api.url}${inv(rp)}/MEMORY_MB`);
    expect(post.json).toMatchObject({ total: 1024, reserved: 512, resource_provider_generation: 3 });
    const one = await api.req('PUT', `${inv(rp)}/MEMORY_MB`, { body: { resource_provider_generation: 3, total: 2048 } });
    expect(one.json).toMatchObject({ total: 2048, reserved: 0, resource_provider_generation: 4 });
    expect((await api.req('DELETE', `${inv(rp)}/DISK_GB`)).status).toBe(204);
    const after = (await getProvider(rp))!;
    expect(after.generation).toBe(5);
    expect(after.invVersion).toBe(5);
    expect(Object.keys(after.inventories).sort()).toEqual(['MEMORY_MB', 'VCPU']);
    // DELETE all of an already empty inventory still counts as a change
    expect((await api.req('DELETE', inv(rp), { version: '1.5' })).status).toBe(204);
    expect((await api.req('DELETE', inv(rp), { version: '1.5' })).status).toBe(204);
    expect((await api.req('GET', inv(rp))).json).toEqual({ resource_provider_generation: 7, inventories: {} });
    expect((await api.req('DELETE', inv(rp), { version: '1.4' })).status).toBe(405);
  });

  it('validates capacity per microversion and refuses unknown classes, before writing anything', async () => {
    const rp = await createProvider(api);
    const eq = { resource_provider_generation: 0, inventories: { DISK_GB: { total: 10, reserved: 10 } } };
    const old = await api.req('PUT', inv(rp), { version: '1.25', body: eq });
    expect(old.status).toBe(400);
    expect(old.json.errors[0].detail).toContain(
      `Unable to update inventory for resource provider ${rp}: Invalid inventory for 'DISK_GB' on resource provider '${rp}'. The reserved value is greater than or equal to total.`,
    );
    expect((await api.req('PUT', inv(rp), { version: '1.26', body: eq })).status).toBe(200);
    // capacity is int((total - reserved) * allocation_ratio): 0.5 truncates to 0, refused before 1.26 only
    const tiny = { resource_class: 'VCPU', total: 1, allocation_ratio: 0.5 };
    expect((await api.req('POST', inv(rp), { version: '1.25', body: tiny })).status).toBe(400);
    expect((await api.req('POST', inv(rp), { version: '1.26', body: tiny })).status).toBe(201);
    expect((await api.req('DELETE', `${inv(rp)}/VCPU`)).status).toBe(204);
    const unknown = await api.req('PUT', inv(rp), { body: { resource_provider_generation: 3, inventories: { CUSTOM_NOPE: { total: 1 } } } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors[0].detail).toContain(
      `Unknown resource class in inventory for resource provider ${rp}: No such resource class CUSTOM_NOPE.`,
    );
    const lower = await api.req('PUT', inv(rp), { body: { resource_provider_generation: 3, inventories: { bad_class: { total: 1 } } } });
    expect(lower.status).toBe(400);
    const putUnknown = await api.req('PUT', `${inv(rp)}/HOUSE`, { body: { resource_provider_generation: 3, total: 1 } });
    expect(putUnknown.status).toBe(404);
    expect(putUnknown.json.errors[0].detail).toContain('No such resource class HOUSE.');
    const putAbsent = await api.req('PUT', `${inv(rp)}/VCPU`, { body: { resource_provider_generation: 3, total: 1 } });
    expect(putAbsent.status).toBe(400);
    expect(putAbsent.json.errors[0].detail).toContain('No inventory of class VCPU found.');
    const dup = await api.req('POST', inv(rp), { body: { resource_class: 'DISK_GB', total: 1 } });
    expect(dup.status).toBe(409);
    expect(dup.json.errors[0].code).toBe('placement.concurrent_update');
    expect((await getProvider(rp))!.generation).toBe(3);
  });

  it('sends cache headers from 1.15, and no last-modified for an empty inventory', async () => {
    const rp = await createProvider(api);
    const empty = await api.req('GET', inv(rp), { version: '1.15' });
    expect(empty.headers.get('cache-control')).toBe('no-cache');
    expect(empty.headers.get('last-modified')).toBeNull();
    await api.req('PUT', inv(rp), { body: { resource_provider_generation: 0, inventories: { VCPU: { total: 2 } } } });
    const full = await api.req('GET', inv(rp), { version: '1.15' });
    const lm = Date.parse(full.headers.get('last-modified')!);
    expect(Math.abs(lm - Date.now())).toBeLessThan(60_000);
    const older = await api.req('GET', `${inv(rp)}/VCPU`, { version: '1.14' });
    expect(older.headers.get('last-modified')).toBeNull();
    expect(older.headers.get('cache-control')).toBeNull();
  });

  it('lets exactly one of many racing PUTs with the same generation win, and applies it whole', async () => {
    const rp = await createProvider(api);
    const bodies = Array.from({ length: 10 }, (_, i) => ({
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 10 + i }, MEMORY_MB: { total: 1000 + i } },
    }));
    const results = await Promise.all(bodies.map((body) => api.req('PUT', inv(rp), { body })));
    const ok = results.filter((r) => r.status === 200);
    const lost = results.filter((r) => r.status === 409);
    expect(ok).toHaveLength(1);
    expect(lost).toHaveLength(9);
    for (const r of lost) expect(r.json.errors[0].code).toBe('placement.concurrent_update');
    const got = await api.req('GET', inv(rp));
    expect(got.json.resource_provider_generation).toBe(1);
    // nothing half-applied: both classes come from the same (winning) request
    expect(got.json.inventories.VCPU.total - 10).toBe(got.json.inventories.MEMORY_MB.total - 1000);
    expect(got.json.inventories).toEqual(ok[0]!.json.inventories);
  });

  it('serialises writes without a generation (POST / DELETE one) instead of losing any', async () => {
    const rp = await createProvider(api);
    const classes = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'PCI_DEVICE', 'SRIOV_NET_VF', 'IPV4_ADDRESS'];
    const results = await Promise.all(classes.map((rc) => api.req('POST', inv(rp), { body: { resource_class: rc, total: 4 } })));
    expect(results.map((r) => r.status)).toEqual(classes.map(() => 201));
    expect(results.map((r) => r.json.resource_provider_generation).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    const got = await api.req('GET', inv(rp));
    expect(Object.keys(got.json.inventories).sort()).toEqual([...classes].sort());
    expect(got.json.resource_provider_generation).toBe(6);
    const dels = await Promise.all(classes.map((rc) => api.req('DELETE', `${inv(rp)}/${rc}`)));
    expect(dels.map((r) => r.status)).toEqual(classes.map(() => 204));
    expect((await api.req('GET', inv(rp))).json).toEqual({ resource_provider_generation: 12, inventories: {} });
  });

  it('refuses to remove inventory that has allocations, allows shrinking below usage (as upstream), keeps usage', async () => {
    const rp = await createProvider(api);
    await api.req('PUT', inv(rp), { body: { resource_provider_generation: 0, inventories: { VCPU: { total: 8 }, DISK_GB: { total: 100 } } } });
    const consumer = randomUUID();
    const alloc = await api.req('PUT', `/allocations/${consumer}`, {
      version: '1.28',
      body: { allocations: { [rp]: { resources: { VCPU: 6 } } }, project_id: randomUUID(), user_id: randomUUID(), consumer_generation: null },
    });
    expect(alloc.status).toBe(204);
    const gen = (await api.req('GET', `/resource_providers/${rp}`)).json.generation;

    const delOne = await api.req('DELETE', `${inv(rp)}/VCPU`);
    expect(delOne.status).toBe(409);
    expect(delOne.json.errors[0].detail).toContain(
      `Unable to delete inventory of class VCPU: Inventory for 'VCPU' on resource provider '${rp}' in use.`,
    );
    const putAll = await api.req('PUT', inv(rp), { body: { resource_provider_generation: gen, inventories: { DISK_GB: { total: 100 } } } });
    expect(putAll.status).toBe(409);
    expect(putAll.json.errors[0].code).toBe('placement.inventory.inuse');
    const delAll = await api.req('DELETE', inv(rp));
    expect(delAll.status).toBe(409);
    expect(delAll.json.errors[0].code).toBe('placement.inventory.inuse');
    expect((await getProvider(rp))!.generation).toBe(gen);

    const shrink = await api.req('PUT', `${inv(rp)}/VCPU`, { body: { resource_provider_generation: gen, total: 2 } });
    expect(shrink.status).toBe(200);
    const removeOther = await api.req('DELETE', `${inv(rp)}/DISK_GB`);
    expect(removeOther.status).toBe(204);
    const usages = await api.req('GET', `/resource_providers/${rp}/usages`);
    expect(usages.json.usages).toEqual({ VCPU: 6 });
    const rec = (await getProvider(rp))!;
    expect(rec.usages.VCPU).toBe(6);
    expect(rec.allocationCount).toBe(1);
    // a claim planned against the old inventory cannot land: invVer moved
    expect(rec.invVersion).toBe(3);
    expect((await api.req('DELETE', `/allocations/${consumer}`)).status).toBe(204);
    expect((await api.req('DELETE', `${inv(rp)}/VCPU`)).status).toBe(204);
  });
});

describe('custom resource classes used by inventory', () => {
  it('counts references so a class in use cannot be deleted, and releases them', async () => {
    const rp = await createProvider(api);
    const rc = `CUSTOM_GOLD_${randomUUID().slice(0, 8).toUpperCase().replace(/-/g, '')}`;
    expect((await api.req('PUT', `/resource_classes/${rc}`)).status).toBe(201);
    await api.req('PUT', inv(rp), { body: { resource_provider_generation: 0, inventories: { [rc]: { total: 5 } } } });
    const del = await api.req('DELETE', `/resource_classes/${rc}`);
    expect(del.status).toBe(409);
    expect(del.json.errors[0].detail).toContain(`Cannot delete resource class ${rc}. Class is in use in inventory.`);
    expect((await api.req('DELETE', `/resource_providers/${rp}`)).status).toBe(204);
    expect((await api.req('DELETE', `/resource_classes/${rc}`)).status).toBe(204);
  });

  it('never lets a class deletion and an inventory using it both succeed', async () => {
    for (let i = 0; i < 6; i++) {
      const rp = await createProvider(api);
      const rc = `CUSTOM_RACE_${i}_${randomUUID().slice(0, 6).toUpperCase().replace(/-/g, '')}`;
      await api.req('PUT', `/resource_classes/${rc}`);
      const [del, put] = await Promise.all([
        api.req('DELETE', `/resource_classes/${rc}`),
        api.req('PUT', inv(rp), { body: { resource_provider_generation: 0, inventories: { [rc]: { total: 1 } } } }),
      ]);
      const classExists = (await api.req('GET', `/resource_classes/${rc}`)).status === 200;
      const invHas = rc in (await api.req('GET', inv(rp))).json.inventories;
      if (del.status === 204) {
        expect(put.status).toBe(400);
        expect(classExists).toBe(false);
        expect(invHas).toBe(false);
      } else {
        expect(del.status).toBe(409);
        expect(put.status).toBe(200);
        expect(classExists).toBe(true);
        expect(invHas).toBe(true);
      }
    }
  });
});
