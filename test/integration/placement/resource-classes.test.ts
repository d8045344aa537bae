import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';

// races and cold snapshot loads on a busy 2-core machine need more than vitest's 5 s default
vi.setConfig({ testTimeout: 60_000 });

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

const tag = () => randomUUID().slice(0, 8).toUpperCase().replace(/-/g, '');
const names = async () => ((await api.req('GET', '/resource_classes')).json.resource_classes as Array<{ name: string }>).map((c) => c.name);

describe('resource classes', () => {
  it('lists the 21 standard classes first, then custom ones in creation order (kept across renames)', async () => {
    const before = await names();
    expect(before.slice(0, 3)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB']);
    const [x, y, z] = [`CUSTOM_Z_${tag()}`, `CUSTOM_A_${tag()}`, `CUSTOM_M_${tag()}`];
    for (const n of [x, y, z]) expect((await api.req('POST', '/resource_classes', { body: { name: n } })).status).toBe(201);
    const renamed = `CUSTOM_B_${tag()}`;
    const put = await api.req('PUT', `/resource_classes/${x}`, { version: '1.6', body: { name: renamed } });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ name: renamed, links: [{ rel: 'self', href: `/resource_classes/${renamed}` }] });
    const after = await names();
    expect(after.slice(0, 21)).toHaveLength(21);
    expect(after.slice(-3)).toEqual([renamed, y, z]);
    expect((await api.req('GET', `/resource_classes/${x}`)).status).toBe(404);
    const lm = await api.req('GET', `/resource_classes/${renamed}`, { version: '1.15' });
    expect(lm.headers.get('cache-control')).toBe('no-cache');
    expect(Math.abs(Date.parse(lm.headers.get('last-modified')!) - Date.now())).toBeLessThan(60_000);
  });

  it('PUT from 1.7 creates (201) or confirms (204), refuses standard names', async () => {
    const n = `CUSTOM_PUT_${tag()}`;
    const a = await api.req('PUT', `/resource_classes/${n}`);
    expect(a.status).toBe(201);
    expect(a.headers.get('location')).toBe(`${api.url}/resource_classes/${n}`);
    expect((await api.req('PUT', `/resource_classes/${n}`)).status).toBe(204);
    expect((await api.req('PUT', '/resource_classes/VCPU')).status).toBe(400);
    const racers = await Promise.all(Array.from({ length: 6 }, () => api.req('PUT', `/resource_classes/CUSTOM_RACE_${n}`)));
    expect(racers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(racers.filter((r) => r.status === 204)).toHaveLength(5);
  });

  it('refuses to delete standard classes and classes in use; renames only unused ones', async () => {
    expect((await api.req('DELETE', '/resource_classes/VCPU')).json.errors[0].detail).toContain('Cannot delete standard resource class VCPU.');
    const n = `CUSTOM_USED_${tag()}`;
    await api.req('PUT', `/resource_classes/${n}`);
    const rp = randomUUID();
    await api.req('POST', '/resource_providers', { body: { name: `rp-${rp}`, uuid: rp } });
    await api.req('PUT', `/resource_providers/${rp}/inventories`, { body: { resource_provider_generation: 0, inventories: { [n]: { total: 3 } } } });
    const del = await api.req('DELETE', `/resource_classes/${n}`);
    expect(del.status).toBe(409);
    const rename = await api.req('PUT', `/resource_classes/${n}`, { version: '1.6', body: { name: `${n}_X` } });
    expect(rename.status).toBe(409);
    expect((await api.req('GET', `/resource_classes/${n}`)).status).toBe(200);
    expect((await api.req('GET', `/resource_classes/${n}_X`)).status).toBe(404);
    await api.req('DELETE', `/resource_providers/${rp}/inventories/${n}`);
    expect((await api.req('DELETE', `/resource_classes/${n}`)).status).toBe(204);
    expect((await api.req('DELETE', `/resource_classes/${n}`)).status).toBe(404);
  });
});
