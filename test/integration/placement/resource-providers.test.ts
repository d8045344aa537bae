import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

describe('resource providers', () => {
  it('creates (201 before 1.20, 200 with body after), reads and lists', async () => {
    const u1 = randomUUID();
    const a = await api.req('POST', '/resource_providers', { version: '1.19', body: { name: 'rp-a', uuid: u1 } });
    expect(a.status).toBe(201);
    expect(a.headers.get('location')).toBe(`${api.url}/resource_providers/${u1}`);
    expect(a.text).toBe('');
    const b = await api.req('POST', '/resource_providers', { version: '1.20', body: { name: 'rp-b' } });
    expect(b.status).toBe(200);
    expect(b.json).toMatchObject({ name: 'rp-b', generation: 0 });
    const got = await api.req('GET', `/resource_providers/${u1}`, { version: '1.14' });
    expect(got.json).toMatchObject({ uuid: u1, name: 'rp-a', generation: 0, parent_provider_uuid: null, root_provider_uuid: u1 });
    expect(got.json.links.map((l: { rel: string }) => l.rel)).toEqual(['self', 'inventories', 'usages', 'aggregates', 'traits', 'allocations']);
    const list = await api.req('GET', '/resource_providers');
    expect(list.json.resource_providers.map((p: { name: string }) => p.name)).toEqual(['rp-a', 'rp-b']);
    const byName = await api.req('GET', '/resource_providers?name=rp-b');
    expect(byName.json.resource_providers).toHaveLength(1);
  });

  it('keeps names unique and reports both duplicates', async () => {
    const u = randomUUID();
    expect((await api.req('POST', '/resource_providers', { body: { name: 'dup', uuid: u } })).status).toBe(200);
    const r = await api.req('POST', '/resource_providers', { body: { name: 'dup', uuid: u } });
    expect(r.status).toBe(409);
    expect(r.json.errors[0].code).toBe('placement.duplicate_name');
    expect(r.json.errors[0].detail).toContain(`Conflicting resource provider uuid: ${u}, name: dup already exists.`);
  });

  it('lets exactly one of many racing creations of the same name win', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, () => api.req('POST', '/resource_providers', { body: { name: 'racer' } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(11);
    const list = await api.req('GET', '/resource_providers?name=racer');
    expect(list.json.resource_providers).toHaveLength(1);
  });

  it('builds trees, refuses to delete parents, renames and re-parents at 1.37', async () => {
    const root = randomUUID();
    const child = randomUUID();
    const other = randomUUID();
    await api.req('POST', '/resource_providers', { body: { name: 'tree-root', uuid: root } });
    await api.req('POST', '/resource_providers', { body: { name: 'tree-other', uuid: other } });
    const c = await api.req('POST', '/resource_providers', { body: { name: 'tree-child', uuid: child, parent_provider_uuid: root } });
    expect(c.json).toMatchObject({ parent_provider_uuid: root, root_provider_uuid: root });
    const del = await api.req('DELETE', `/resource_providers/${root}`);
    expect(del.status).toBe(409);
    expect(del.json.errors[0].code).toBe('placement.resource_provider.cannot_delete_parent');
    const inTree = await api.req('GET', `/resource_providers?in_tree=${child}`);
    expect(inTree.json.resource_providers.map((p: { uuid: string }) => p.uuid).sort()).toEqual([root, child].sort());
    const old = await api.req('PUT', `/resource_providers/${child}`, { version: '1.36', body: { name: 'tree-child', parent_provider_uuid: other } });
    expect(old.status).toBe(400);
    expect(old.json.errors[0].detail).toContain('re-parenting a provider is not currently allowed');
    const moved = await api.req('PUT', `/resource_providers/${child}`, { body: { name: 'tree-child2', parent_provider_uuid: other } });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({ name: 'tree-child2', parent_provider_uuid: other, root_provider_uuid: other });
    const loop = await api.req('PUT', `/resource_providers/${other}`, { body: { name: 'tree-other', parent_provider_uuid: child } });
    expect(loop.status).toBe(400);
    expect(loop.json.errors[0].detail).toContain('creating loop in the provider tree is not allowed.');
    expect((await api.req('DELETE', `/resource_providers/${root}`)).status).toBe(204);
    expect((await api.req('DELETE', `/resource_providers/${root}`)).status).toBe(404);
  });
});
