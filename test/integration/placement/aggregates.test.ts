import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';

// races and cold snapshot loads on a busy 2-core machine need more than vitest's 5 s default
vi.setConfig({ testTimeout: 60_000 });

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

const aggs = (uuid: string) => `/resource_providers/${uuid}/aggregates`;
const gen = async (uuid: string) => (await api.req('GET', `/resource_providers/${uuid}`)).json.generation as number;

describe('provider aggregates', () => {
  it('1.1-1.18: a bare list, the generation untouched; 1.19: generation checked and bumped', async () => {
    const rp = await createProvider(api);
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const old = await api.req('PUT', aggs(rp), { version: '1.18', body: [a, b] });
    expect(old.status).toBe(200);
    expect(old.json).toEqual({ aggregates: [a, b] });
    expect(old.headers.get('last-modified')).toMatch(/GMT$/);
    expect(await gen(rp)).toBe(0);
    expect((await api.req('GET', aggs(rp), { version: '1.14' })).headers.get('last-modified')).toBeNull();

    const got = await api.req('GET', aggs(rp));
    expect(got.json).toEqual({ aggregates: [a, b], resource_provider_generation: 0 });
    const bare = await api.req('PUT', aggs(rp), { body: [c] });
    expect(bare.status).toBe(400);
    const stale = await api.req('PUT', aggs(rp), { body: { resource_provider_generation: 5, aggregates: [c] } });
    expect(stale.status).toBe(409);
    expect(stale.json.errors[0].code).toBe('placement.concurrent_update');
    const ok = await api.req('PUT', aggs(rp), { body: { resource_provider_generation: 0, aggregates: [c, a] } });
    expect(ok.json).toEqual({ aggregates: [c, a], resource_provider_generation: 1 });
    // setting the same list again at 1.19 still bumps (upstream always increments)
    const again = await api.req('PUT', aggs(rp), { body: { resource_provider_generation: 1, aggregates: [c, a] } });
    expect(again.json.resource_provider_generation).toBe(2);
    const dup = await api.req('PUT', aggs(rp), { body: { resource_provider_generation: 2, aggregates: [c, c] } });
    expect(dup.status).toBe(400);
    expect(dup.json.errors[0].detail).toContain('has non-unique elements');
    expect((await api.req('GET', aggs(randomUUID()))).status).toBe(404);
  });

  it('lets exactly one of many racing 1.19 PUTs with the same generation win', async () => {
    const rp = await createProvider(api);
    const lists = Array.from({ length: 8 }, () => [randomUUID(), randomUUID()]);
    const results = await Promise.all(lists.map((l) => api.req('PUT', aggs(rp), { body: { resource_provider_generation: 0, aggregates: l } })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
    const got = await api.req('GET', aggs(rp));
    expect(got.json).toEqual({ aggregates: ok[0]!.json.aggregates, resource_provider_generation: 1 });
  });

  it('filters the provider list by member_of: any-of, all-of, forbidden', async () => {
    const [r1, r2, r3] = [await createProvider(api), await createProvider(api), await createProvider(api)];
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await api.req('PUT', aggs(r1), { body: { resource_provider_generation: 0, aggregates: [a, b] } });
    await api.req('PUT', aggs(r2), { body: { resource_provider_generation: 0, aggregates: [b, c] } });
    await api.req('PUT', aggs(r3), { version: '1.1', body: [c] });
    const list = async (q: string, version?: string) => {
      const r = await api.req('GET', `/resource_providers?${q}`, { version });
      expect(r.status).toBe(200);
      return (r.json.resource_providers as Array<{ uuid: string }>)
        .map((p) => p.uuid)
        .filter((u) => [r1, r2, r3].includes(u))
        .sort();
    };
    expect(await list(`member_of=${b}`)).toEqual([r1, r2].sort());
    expect(await list(`member_of=in:${a},${c}`)).toEqual([r1, r2, r3].sort());
    expect(await list(`member_of=${b}&member_of=${c}`)).toEqual([r2]);
    expect(await list(`member_of=!${a}&member_of=in:${b},${c}`)).toEqual([r2, r3].sort());
    expect(await list(`member_of=!in:${a},${c}`)).toEqual([]);
    const old = await api.req('GET', `/resource_providers?member_of=!${a}`, { version: '1.31' });
    expect(old.status).toBe(400);
    const multi = await api.req('GET', `/resource_providers?member_of=${b}&member_of=${c}`, { version: '1.23' });
    expect(multi.json.errors[0].detail).toContain('Multiple member_of parameters are not supported');
  });
});
