import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { getCustomTrait } from '../../../functions/store/placement/traits.js';
import { createProvider } from '../fixtures.js';

// races and cold snapshot loads on a busy 2-core machine need more than vitest's 5 s default
vi.setConfig({ testTimeout: 60_000 });

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

const tag = () => randomUUID().slice(0, 8).toUpperCase().replace(/-/g, '');
const traitsOf = (uuid: string) => `/resource_providers/${uuid}/traits`;

describe('traits', () => {
  it('creates custom traits idempotently and lists with name / associated filters', async () => {
    const t = `CUSTOM_LIST_${tag()}`;
    const created = await api.req('PUT', `/traits/${t}`, { version: '1.15' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${api.url}/traits/${t}`);
    expect(created.headers.get('last-modified')).toMatch(/GMT$/);
    const again = await api.req('PUT', `/traits/${t}`, { version: '1.15' });
    expect(again.status).toBe(204);
    // the creation time, not now
    expect(again.headers.get('last-modified')).toBe(created.headers.get('last-modified'));
    expect((await api.req('PUT', '/traits/HW_CPU_X86_AVX')).status).toBe(400);

    const byPrefix = await api.req('GET', `/traits?name=startswith:${t}`);
    expect(byPrefix.json.traits).toEqual([t]);
    const byIn = await api.req('GET', `/traits?name=in:${t},HW_CPU_X86_AVX,CUSTOM_NOT_THERE`);
    expect(byIn.json.traits.sort()).toEqual(['HW_CPU_X86_AVX', t].sort());
    const all = await api.req('GET', '/traits');
    expect(all.json.traits).toContain('MISC_SHARES_VIA_AGGREGATE');
    expect(all.json.traits).toContain(t);
    expect(all.json.traits.length).toBeGreaterThanOrEqual(346);

    const rp = await createProvider(api);
    await api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: [t, 'HW_CPU_X86_SSE42'] } });
    const assoc = await api.req('GET', '/traits?associated=true');
    expect(assoc.json.traits).toEqual(expect.arrayContaining([t, 'HW_CPU_X86_SSE42']));
    expect(assoc.json.traits).not.toContain('HW_CPU_X86_AVX');
    const notAssoc = await api.req('GET', `/traits?associated=FALSE&name=in:${t},HW_CPU_X86_AVX`);
    expect(notAssoc.json.traits).toEqual(['HW_CPU_X86_AVX']);
    const bad = await api.req('GET', '/traits?name=nocolon');
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].detail).toContain('Badly formatted name parameter');
  });

  it('sets provider traits under the generation, without a bump when nothing changes', async () => {
    const rp = await createProvider(api);
    const t = `CUSTOM_SET_${tag()}`;
    await api.req('PUT', `/traits/${t}`);
    const set = await api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: [t, 'HW_CPU_X86_AVX', t] } });
    expect(set.status).toBe(200);
    expect(set.json.resource_provider_generation).toBe(1);
    expect(set.json.traits.sort()).toEqual(['HW_CPU_X86_AVX', t].sort());
    const same = await api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX', t] } });
    expect(same.json.resource_provider_generation).toBe(1);
    const stale = await api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: [] } });
    expect(stale.status).toBe(409);
    expect(stale.json.errors[0].code).toBe('placement.concurrent_update');
    const unknown = await api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 1, traits: ['CUSTOM_NOPE_1', t] } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors[0].detail).toContain('No such trait CUSTOM_NOPE_1');
    expect((await getCustomTrait(t))!.refs).toBe(1);

    const inUse = await api.req('DELETE', `/traits/${t}`);
    expect(inUse.status).toBe(409);
    expect(inUse.json.errors[0].detail).toContain(`The trait ${t} is in use by a resource provider.`);
    expect((await api.req('DELETE', traitsOf(rp))).status).toBe(204);
    const after = await api.req('GET', traitsOf(rp));
    expect(after.json).toEqual({ traits: [], resource_provider_generation: 2 });
    expect((await getCustomTrait(t))!.refs).toBe(0);
    expect((await api.req('DELETE', `/traits/${t}`)).status).toBe(204);
    expect((await api.req('DELETE', `/traits/${t}`)).status).toBe(404);
    expect((await api.req('DELETE', '/traits/HW_CPU_X86_AVX')).status).toBe(400);
  });

  it('releases a deleted provider’s custom traits', async () => {
    const rp = await createProvider(api);
    const t = `CUSTOM_GONE_${tag()}`;
    await api.req('PUT', `/traits/${t}`);
    await api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: [t] } });
    expect((await api.req('DELETE', `/traits/${t}`)).status).toBe(409);
    expect((await api.req('DELETE', `/resource_providers/${rp}`)).status).toBe(204);
    expect((await api.req('DELETE', `/traits/${t}`)).status).toBe(204);
  });

  it('lets exactly one of many racing trait PUTs with the same generation win', async () => {
    const rp = await createProvider(api);
    const names = Array.from({ length: 8 }, (_, i) => `CUSTOM_RACE_${i}_${tag()}`);
    for (const n of names) await api.req('PUT', `/traits/${n}`);
    const results = await Promise.all(
      names.map((n) => api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: [n, 'HW_CPU_X86_AVX'] } })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(names.length - 1);
    const got = await api.req('GET', traitsOf(rp));
    expect(got.json.resource_provider_generation).toBe(1);
    expect(got.json.traits.sort()).toEqual([...ok[0]!.json.traits].sort());
    // only the winner's custom trait is referenced
    const refs = await Promise.all(names.map(async (n) => (await getCustomTrait(n))!.refs));
    expect(refs.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('never lets a trait deletion and an assignment of it both succeed', async () => {
    for (let i = 0; i < 6; i++) {
      const rp = await createProvider(api);
      const t = `CUSTOM_DEL_RACE_${i}_${tag()}`;
      await api.req('PUT', `/traits/${t}`);
      const [del, put] = await Promise.all([
        api.req('DELETE', `/traits/${t}`),
        api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: [t] } }),
      ]);
      const exists = (await api.req('GET', `/traits/${t}`)).status === 204;
      const has = (await api.req('GET', traitsOf(rp))).json.traits.includes(t);
      if (del.status === 204) {
        expect(put.status).toBe(400);
        expect([exists, has]).toEqual([false, false]);
      } else {
        expect([del.status, put.status, exists, has]).toEqual([409, 200, true, true]);
      }
    }
  });

  it('races inventories, traits and aggregates writes on one generation: exactly one wins', async () => {
    const rp = await createProvider(api);
    const results = await Promise.all([
      api.req('PUT', `/resource_providers/${rp}/inventories`, { body: { resource_provider_generation: 0, inventories: { VCPU: { total: 1 } } } }),
      api.req('PUT', traitsOf(rp), { body: { resource_provider_generation: 0, traits: ['HW_CPU_X86_AVX'] } }),
      api.req('PUT', `/resource_providers/${rp}/aggregates`, { body: { resource_provider_generation: 0, aggregates: [randomUUID()] } }),
      api.req('PUT', `/resource_providers/${rp}/inventories`, { body: { resource_provider_generation: 0, inventories: { DISK_GB: { total: 1 } } } }),
    ]);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(3);
    const p = (await api.req('GET', `/resource_providers/${rp}`)).json;
    expect(p.generation).toBe(1);
  });
});
