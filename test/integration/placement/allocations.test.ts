/**
 * Allocations against DynamoDB Local through the HTTP API: the consumer-generation
 * rules of seed 000 for every case (no allocations, legacy allocations without a
 * consumer record, existing consumer) in every microversion band, the capacity rules,
 * and what a claim does to providers, consumers and usages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';

let api: Api;
const INCOMPLETE = '00000000-0000-0000-0000-000000000000';

beforeAll(async () => {
  api = await startPlacement({ LEGACY_FLAG_TTL_MS: '0' });
});
afterAll(async () => api.close());

const gen = async (rp: string) => (await api.req('GET', `/resource_providers/${rp}`)).json.generation as number;
const usage = async (rp: string) => (await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages as Record<string, number>;
const consumer = async (c: string, version = '1.38') => (await api.req('GET', `/allocations/${c}`, { version })).json;

function put(c: string, version: string, body: unknown) {
  return api.req('PUT', `/allocations/${c}`, { version, body });
}
const dict = (rp: string, resources: Record<string, number>) => ({ [rp]: { resources } });

async function importLegacy(c: string, allocations: Record<string, Record<string, number>>) {
  const { importLegacyAllocations } = await import('../../../functions/store/placement/allocations.js');
  await importLegacyAllocations([{ uuid: c, allocations }]);
}

describe('consumer generations (seed 000)', () => {
  describe('no existing allocations', () => {
    it('< 1.8: always succeeds, the consumer gets the incomplete project and user, generation 1', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      const r = await put(c, '1.7', { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 1 } }] });
      expect(r.status).toBe(204);
      expect(await consumer(c, '1.28')).toEqual({
        allocations: { [rp]: { generation: 2, resources: { VCPU: 1 } } },
        project_id: INCOMPLETE,
        user_id: INCOMPLETE,
        consumer_generation: 1,
      });
    });

    it('1.8 - 1.27: always succeeds with the payload project and user', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      for (const [v, body] of [
        ['1.8', { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 1 } }], project_id: 'p8', user_id: 'u8' }],
        ['1.27', { allocations: dict(rp, { VCPU: 1 }), project_id: 'p27', user_id: 'u27' }],
      ] as const) {
        const c = randomUUID();
        expect((await put(c, v, body)).status).toBe(204);
        expect(await consumer(c, '1.28')).toMatchObject({ project_id: body.project_id, user_id: body.user_id, consumer_generation: 1 });
      }
    });

    it('>= 1.28: consumer_generation is required and must be null', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      const base = { allocations: dict(rp, { VCPU: 1 }), project_id: 'p', user_id: 'u' };
      const missing = await put(c, '1.28', base);
      expect(missing.status).toBe(400);
      expect(missing.text).toContain("'consumer_generation' is a required property");
      const five = await put(c, '1.28', { ...base, consumer_generation: 5 });
      expect(five.status).toBe(409);
      expect(five.json.errors[0].code).toBe('placement.concurrent_update');
      expect(five.json.errors[0].detail).toContain('consumer generation conflict - expected null but got 5');
      expect(await consumer(c)).toEqual({ allocations: {} });
      expect((await put(c, '1.28', { ...base, consumer_generation: null })).status).toBe(204);
      expect((await consumer(c)).consumer_generation).toBe(1);
    });

    it('a failed first claim leaves no consumer behind (bug 1778591): null still works afterwards', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 2 } } });
      const c = randomUUID();
      const over = await put(c, '1.28', { allocations: dict(rp, { VCPU: 3 }), project_id: 'p', user_id: 'u', consumer_generation: null });
      expect(over.status).toBe(409);
      expect((await put(c, '1.28', { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(
        204,
      );
    });
  });

  describe('allocations without a consumer record (legacy rows)', () => {
    it('are counted in provider usage but invisible as consumers, and cannot be DELETEd', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 }, DISK_GB: { total: 100 } } });
      const c = randomUUID();
      await importLegacy(c, { [rp]: { VCPU: 2, DISK_GB: 10 } });
      expect(await usage(rp)).toEqual({ VCPU: 2, DISK_GB: 10 });
      expect(await consumer(c)).toEqual({ allocations: {} });
      const listed = await api.req('GET', `/resource_providers/${rp}/allocations`);
      expect(listed.json.allocations).toEqual({});
      expect((await api.req('DELETE', `/allocations/${c}`)).status).toBe(404);
      // the provider cannot be deleted while they exist
      expect((await api.req('DELETE', `/resource_providers/${rp}`)).status).toBe(409);
    });

    it('< 1.8: PUT replaces them and creates the consumer with the incomplete owner', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const rp2 = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      await importLegacy(c, { [rp]: { VCPU: 3 }, [rp2]: { VCPU: 1 } });
      expect((await put(c, '1.7', { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 1 } }] })).status).toBe(204);
      expect(await usage(rp)).toEqual({ VCPU: 1 });
      expect(await usage(rp2)).toEqual({ VCPU: 0 });
      expect(await consumer(c, '1.28')).toMatchObject({ project_id: INCOMPLETE, user_id: INCOMPLETE, consumer_generation: 1 });
      // every row of the consumer is now a normal one
      expect((await api.req('GET', `/resource_providers/${rp}/allocations`, { version: '1.28' })).json.allocations).toEqual({
        [c]: { resources: { VCPU: 1 }, consumer_generation: 1 },
      });
    });

    it('1.8 - 1.27: PUT succeeds with the payload owner', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      await importLegacy(c, { [rp]: { VCPU: 3 } });
      expect((await put(c, '1.12', { allocations: dict(rp, { VCPU: 2 }), project_id: 'p12', user_id: 'u12' })).status).toBe(204);
      expect(await usage(rp)).toEqual({ VCPU: 2 });
      expect(await consumer(c, '1.28')).toMatchObject({ project_id: 'p12', consumer_generation: 1 });
    });

    it('>= 1.28: the generation must be null ("I know these predate consumer records")', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      await importLegacy(c, { [rp]: { VCPU: 3 } });
      const one = await put(c, '1.28', { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u', consumer_generation: 0 });
      expect(one.status).toBe(409);
      expect(one.json.errors[0].detail).toContain('expected null but got 0');
      expect(await usage(rp)).toEqual({ VCPU: 3 });
      const project = `p-${randomUUID()}`;
      expect(
        (await put(c, '1.28', { allocations: dict(rp, { VCPU: 2 }), project_id: project, user_id: 'u', consumer_generation: null })).status,
      ).toBe(204);
      expect(await usage(rp)).toEqual({ VCPU: 2 });
      expect((await api.req('GET', `/usages?project_id=${project}`, { version: '1.9' })).json.usages).toEqual({ VCPU: 2 });
    });

    it('>= 1.28: an empty PUT with null removes them and leaves no consumer', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      await importLegacy(c, { [rp]: { VCPU: 3 } });
      expect((await put(c, '1.28', { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(204);
      expect(await usage(rp)).toEqual({ VCPU: 0 });
      expect(await consumer(c)).toEqual({ allocations: {} });
      expect((await api.req('DELETE', `/resource_providers/${rp}`)).status).toBe(204);
    });

    it('POST 1.13 - 1.27 and >= 1.28 (null) replace them too', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const [a, b] = [randomUUID(), randomUUID()];
      await importLegacy(a, { [rp]: { VCPU: 1 } });
      await importLegacy(b, { [rp]: { VCPU: 1 } });
      const r13 = await api.req('POST', '/allocations', {
        version: '1.13',
        body: { [a]: { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u' } },
      });
      expect(r13.status).toBe(204);
      const bad = await api.req('POST', '/allocations', {
        version: '1.28',
        body: { [b]: { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u', consumer_generation: 1 } },
      });
      expect(bad.status).toBe(409);
      const r28 = await api.req('POST', '/allocations', {
        version: '1.28',
        body: { [b]: { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u', consumer_generation: null } },
      });
      expect(r28.status).toBe(204);
      expect(await usage(rp)).toEqual({ VCPU: 4 });
    });
  });

  describe('existing consumer', () => {
    it('< 1.28: always overwrites; the generation goes up by one each time', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      expect(
        (await put(c, '1.8', { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 1 } }], project_id: 'p', user_id: 'u' })).status,
      ).toBe(204);
      expect((await put(c, '1.27', { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u' })).status).toBe(204);
      expect((await put(c, '1.7', { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 3 } }] })).status).toBe(204);
      // below 1.8 the incomplete owner replaces the consumer's (as upstream)
      expect(await consumer(c, '1.28')).toMatchObject({
        consumer_generation: 3,
        project_id: INCOMPLETE,
        allocations: { [rp]: { resources: { VCPU: 3 } } },
      });
      const post = await api.req('POST', '/allocations', {
        version: '1.27',
        body: { [c]: { allocations: dict(rp, { VCPU: 4 }), project_id: 'p', user_id: 'u' } },
      });
      expect(post.status).toBe(204);
      expect((await consumer(c)).consumer_generation).toBe(4);
    });

    it('>= 1.28: null, a stale or a future generation is a 409; the current one succeeds', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const c = randomUUID();
      const body = (g: number | null, n = 1) => ({ allocations: dict(rp, { VCPU: n }), project_id: 'p', user_id: 'u', consumer_generation: g });
      expect((await put(c, '1.28', body(null))).status).toBe(204);
      for (const [g, text] of [
        [null, 'expected 1 but got None'],
        [0, 'expected 1 but got 0'],
        [2, 'expected 1 but got 2'],
      ] as const) {
        const r = await put(c, '1.28', body(g));
        expect(r.status).toBe(409);
        expect(r.json.errors[0]).toMatchObject({ code: 'placement.concurrent_update' });
        expect(r.json.errors[0].detail).toContain(`consumer generation conflict - ${text}`);
      }
      expect((await put(c, '1.28', body(1, 2))).status).toBe(204);
      expect((await put(c, '1.28', body(2, 2))).status).toBe(204); // same allocation: still a change, still bumped
      expect((await consumer(c)).consumer_generation).toBe(3);
      const post = await api.req('POST', '/allocations', { version: '1.28', body: { [c]: body(2) } });
      expect(post.status).toBe(409);
      expect(post.json.errors[0].detail).toContain('expected 3 but got 2');
    });

    it('removing the last allocation (empty PUT, POST or DELETE) removes the consumer', async () => {
      const rp = await createProvider(api, { inventories: { VCPU: { total: 8 } } });
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      for (const x of [a, b, c])
        expect((await put(x, '1.28', { allocations: dict(rp, { VCPU: 1 }), project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(
          204,
        );
      expect((await put(a, '1.28', { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: 1 })).status).toBe(204);
      expect(
        (
          await api.req('POST', '/allocations', {
            version: '1.28',
            body: { [b]: { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: 1 } },
          })
        ).status,
      ).toBe(204);
      expect((await api.req('DELETE', `/allocations/${c}`)).status).toBe(204);
      for (const x of [a, b, c]) {
        expect(await consumer(x)).toEqual({ allocations: {} });
        // no record left: "new consumer" again
        expect((await put(x, '1.28', { allocations: dict(rp, { VCPU: 1 }), project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(
          204,
        );
      }
    });
  });
});

describe('claims', () => {
  it('checks (total - reserved) * allocation_ratio, min_unit, max_unit and step_size', async () => {
    const rp = await createProvider(api, {
      inventories: {
        VCPU: { total: 10, reserved: 2, allocation_ratio: 1.5 },
        MEMORY_MB: { total: 1024, min_unit: 64, max_unit: 512, step_size: 64 },
      },
    });
    const c = () => randomUUID();
    const claim = (res: Record<string, number>) =>
      put(c(), '1.28', { allocations: dict(rp, res), project_id: 'p', user_id: 'u', consumer_generation: null });
    const constraint = `Unable to allocate inventory: Unable to create allocation for 'MEMORY_MB' on resource provider '${rp}'. The requested amount would violate inventory constraints.`;
    for (const n of [32, 576, 100]) {
      const r = await claim({ MEMORY_MB: n });
      expect(r.status).toBe(409);
      expect(r.json.errors[0].detail).toContain(constraint);
      expect(r.json.errors[0].code).toBe('placement.undefined_code');
    }
    expect((await claim({ VCPU: 12 })).status).toBe(204);
    const over = await claim({ VCPU: 1 });
    expect(over.status).toBe(409);
    expect(over.json.errors[0].detail).toContain(
      `Unable to allocate inventory: Unable to create allocation for 'VCPU' on resource provider '${rp}'. The requested amount would exceed the capacity.`,
    );
    expect(await usage(rp)).toEqual({ VCPU: 12, MEMORY_MB: 0 });
  });

  it('answers a provider without such inventory and an unknown class as upstream', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 4 } } });
    const empty = await createProvider(api, { inventories: { DISK_GB: { total: 4 } } });
    const claim = (allocations: unknown) => put(randomUUID(), '1.28', { allocations, project_id: 'p', user_id: 'u', consumer_generation: null });
    const none = await claim({ [empty]: { resources: { VCPU: 1, MEMORY_MB: 1 } } });
    expect(none.status).toBe(409);
    expect(none.json.errors[0].detail).toContain(
      `Unable to allocate inventory: Inventory for 'VCPU, MEMORY_MB' on resource provider '${empty}' invalid.`,
    );
    const notThis = await claim({ [rp]: { resources: { VCPU: 1, DISK_GB: 1 } } });
    expect(notThis.status).toBe(409);
    expect(notThis.json.errors[0].detail).toContain(`Inventory for 'DISK_GB' on resource provider '${rp}' invalid.`);
    const unknown = await claim({ [rp]: { resources: { CUSTOM_NOPE: 1 } } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors[0].detail).toMatch(/Unable to allocate inventory for consumer [-0-9a-f]+: No such resource class CUSTOM_NOPE\./);
    const missing = randomUUID();
    const noRp = await claim({ [missing]: { resources: { VCPU: 1 } } });
    expect(noRp.status).toBe(400);
    expect(noRp.json.errors[0].detail).toContain(`Allocation for resource provider '${missing}' that does not exist.`);
  });

  it('POST checks the sum of every consumer on a provider', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 4 } } });
    const [a, b] = [randomUUID(), randomUUID()];
    const body = (na: number, nb: number) => ({
      [a]: { allocations: dict(rp, { VCPU: na }), project_id: 'p', user_id: 'u' },
      [b]: { allocations: dict(rp, { VCPU: nb }), project_id: 'p', user_id: 'u' },
    });
    expect((await api.req('POST', '/allocations', { version: '1.13', body: body(2, 3) })).status).toBe(409);
    expect(await usage(rp)).toEqual({ VCPU: 0 });
    expect((await api.req('POST', '/allocations', { version: '1.13', body: body(2, 2) })).status).toBe(204);
    // replacing both at once: the old amounts do not count
    expect((await api.req('POST', '/allocations', { version: '1.13', body: body(1, 3) })).status).toBe(204);
    expect(await usage(rp)).toEqual({ VCPU: 4 });
  });

  it('bumps the generation of providers it allocates on, not of those it leaves, nor on DELETE (as upstream)', async () => {
    const [x, y] = [
      await createProvider(api, { inventories: { VCPU: { total: 8 } } }),
      await createProvider(api, { inventories: { VCPU: { total: 8 } } }),
    ];
    const c = randomUUID();
    const [gx, gy] = [await gen(x), await gen(y)];
    expect((await put(c, '1.28', { allocations: dict(x, { VCPU: 1 }), project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(204);
    expect(await gen(x)).toBe(gx + 1);
    expect((await put(c, '1.28', { allocations: dict(y, { VCPU: 1 }), project_id: 'p', user_id: 'u', consumer_generation: 1 })).status).toBe(204);
    expect([await gen(x), await gen(y)]).toEqual([gx + 1, gy + 1]);
    expect(await usage(x)).toEqual({ VCPU: 0 });
    expect((await api.req('DELETE', `/allocations/${c}`)).status).toBe(204);
    expect(await gen(y)).toBe(gy + 1);
    expect(await usage(y)).toEqual({ VCPU: 0 });
    expect((await api.req('DELETE', `/resource_providers/${x}`)).status).toBe(204);
  });

  it('moves usage between projects, users and consumer types when a consumer changes owner or type', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 16 }, MEMORY_MB: { total: 4096 } } });
    const c = randomUUID();
    const [p1, p2] = [`p-${randomUUID()}`, `p-${randomUUID()}`];
    expect(
      (
        await put(c, '1.38', {
          allocations: dict(rp, { VCPU: 2, MEMORY_MB: 512 }),
          project_id: p1,
          user_id: 'u1',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        })
      ).status,
    ).toBe(204);
    const totals = async (q: string, v = '1.38') => (await api.req('GET', `/usages?${q}`, { version: v })).json.usages;
    expect(await totals(`project_id=${p1}`)).toEqual({ INSTANCE: { consumer_count: 1, VCPU: 2, MEMORY_MB: 512 } });
    expect(
      (
        await put(c, '1.38', {
          allocations: dict(rp, { VCPU: 3 }),
          project_id: p1,
          user_id: 'u2',
          consumer_generation: 1,
          consumer_type: 'MIGRATION',
        })
      ).status,
    ).toBe(204);
    expect(await totals(`project_id=${p1}`)).toEqual({ MIGRATION: { consumer_count: 1, VCPU: 3 } });
    expect(await totals(`project_id=${p1}&user_id=u1`)).toEqual({});
    expect(await totals(`project_id=${p1}&user_id=u2`, '1.9')).toEqual({ VCPU: 3 });
    // < 1.38 keeps the type
    expect((await put(c, '1.28', { allocations: dict(rp, { VCPU: 4 }), project_id: p2, user_id: 'u2', consumer_generation: 2 })).status).toBe(204);
    expect(await totals(`project_id=${p1}`)).toEqual({});
    expect(await totals(`project_id=${p2}`)).toEqual({ MIGRATION: { consumer_count: 1, VCPU: 4 } });
    expect((await consumer(c)).consumer_type).toBe('MIGRATION');
  });

  it('GET /resource_providers/{uuid}/allocations lists consumers with their generations (1.28)', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 16 } } });
    const [a, b] = [randomUUID(), randomUUID()];
    await put(a, '1.28', { allocations: dict(rp, { VCPU: 1 }), project_id: 'p', user_id: 'u', consumer_generation: null });
    await put(b, '1.28', { allocations: dict(rp, { VCPU: 2 }), project_id: 'p', user_id: 'u', consumer_generation: null });
    await put(b, '1.28', { allocations: dict(rp, { VCPU: 3 }), project_id: 'p', user_id: 'u', consumer_generation: 1 });
    const r = await api.req('GET', `/resource_providers/${rp}/allocations`, { version: '1.28' });
    expect(r.json).toEqual({
      resource_provider_generation: 4,
      allocations: { [a]: { resources: { VCPU: 1 }, consumer_generation: 1 }, [b]: { resources: { VCPU: 3 }, consumer_generation: 2 } },
    });
    const old = await api.req('GET', `/resource_providers/${rp}/allocations`, { version: '1.27' });
    expect(old.json.allocations[a]).toEqual({ resources: { VCPU: 1 } });
    expect((await api.req('GET', `/resource_providers/${randomUUID()}/allocations`)).status).toBe(404);
  });

  it('writes a claim on more providers than one transaction holds, all or nothing', async () => {
    const rps: string[] = [];
    for (let i = 0; i < 60; i++) rps.push(await createProvider(api, { inventories: { VCPU: { total: 2 } } }));
    const c = randomUUID();
    // one provider has no room: nothing of the claim is written
    const full = await createProvider(api, { inventories: { VCPU: { total: 1 } } });
    const refused = Object.fromEntries([...rps, full].map((rp) => [rp, { resources: { VCPU: rp === full ? 2 : 1 } }]));
    const no = await put(c, '1.28', { allocations: refused, project_id: 'p', user_id: 'u', consumer_generation: null });
    expect(no.status).toBe(409);
    expect(no.json.errors[0].detail).toContain('would exceed the capacity');
    expect(await consumer(c)).toEqual({ allocations: {} });
    for (const rp of rps) expect(await usage(rp)).toEqual({ VCPU: 0 });
    // 60 providers: 123 actions, more than one transaction holds
    const allocations = Object.fromEntries(rps.map((rp) => [rp, { resources: { VCPU: 1 } }]));
    expect((await put(c, '1.28', { allocations, project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(204);
    expect(Object.keys((await consumer(c)).allocations).sort()).toEqual([...rps].sort());
    for (const rp of rps) expect(await usage(rp)).toEqual({ VCPU: 1 });
  }, 120_000);
});
