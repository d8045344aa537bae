import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ddbCallsDuring } from '../../../bench/kit.js';
import { startPlacement, type Api } from '../harness.js';

// races and cold snapshot loads on a busy 2-core machine need more than vitest's 5 s default
vi.setConfig({ testTimeout: 60_000 });

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

  it('keeps names and uuids unique, naming the duplicate as Placement (on SQLite) does', async () => {
    const u = randomUUID();
    expect((await api.req('POST', '/resource_providers', { body: { name: 'dup', uuid: u } })).status).toBe(200);
    const cases: Array<[Record<string, string>, string]> = [
      [{ name: 'dup', uuid: u }, 'name: dup'],
      [{ name: 'dup', uuid: randomUUID() }, 'name: dup'],
      [{ name: 'other-name', uuid: u }, `uuid: ${u}`],
    ];
    for (const [body, dup] of cases) {
      const r = await api.req('POST', '/resource_providers', { body });
      expect(r.status).toBe(409);
      expect(r.json.errors[0].code).toBe('placement.duplicate_name');
      expect(r.json.errors[0].detail).toContain(`Conflicting resource provider ${dup} already exists.`);
    }
    expect((await api.req('GET', '/resource_providers?name=other-name')).json.resource_providers).toEqual([]);
  });

  it('lets exactly one of many racing creations of the same name win', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => api.req('POST', '/resource_providers', { body: { name: 'racer' } })));
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

describe('resource provider representation', () => {
  it('links grow with the microversion', async () => {
    const u = randomUUID();
    await api.req('POST', '/resource_providers', { body: { name: `links-${u}`, uuid: u } });
    const rels = async (version: string) =>
      ((await api.req('GET', `/resource_providers/${u}`, { version })).json.links as Array<{ rel: string; href: string }>).map((l) => l.rel);
    expect(await rels('1.0')).toEqual(['self', 'inventories', 'usages']);
    expect(await rels('1.1')).toEqual(['self', 'inventories', 'usages', 'aggregates']);
    expect(await rels('1.6')).toEqual(['self', 'inventories', 'usages', 'aggregates', 'traits']);
    expect(await rels('1.11')).toEqual(['self', 'inventories', 'usages', 'aggregates', 'traits', 'allocations']);
    const v13 = await api.req('GET', `/resource_providers/${u}`, { version: '1.13' });
    expect(Object.keys(v13.json).sort()).toEqual(['generation', 'links', 'name', 'uuid']);
    expect(v13.json.links[1]).toEqual({ rel: 'inventories', href: `/resource_providers/${u}/inventories` });
  });

  it('sends last-modified and cache-control from 1.15, dated by the last change', async () => {
    const u = randomUUID();
    const created = await api.req('POST', '/resource_providers', { body: { name: `lm-${u}`, uuid: u } });
    expect(created.headers.get('cache-control')).toBe('no-cache');
    const t0 = Date.parse(created.headers.get('last-modified')!);
    expect(Math.abs(t0 - Date.now())).toBeLessThan(60_000);
    const old = await api.req('GET', `/resource_providers/${u}`, { version: '1.14' });
    expect(old.headers.get('last-modified')).toBeNull();
    expect(old.headers.get('cache-control')).toBeNull();
    await new Promise((r) => setTimeout(r, 1100));
    const renamed = await api.req('PUT', `/resource_providers/${u}`, { version: '1.15', body: { name: `lm2-${u}` } });
    const t1 = Date.parse(renamed.headers.get('last-modified')!);
    expect(t1).toBeGreaterThan(t0);
    const got = await api.req('GET', `/resource_providers/${u}`, { version: '1.15' });
    expect(Date.parse(got.headers.get('last-modified')!)).toBe(t1);
    const list = await api.req('GET', `/resource_providers?uuid=${u}`, { version: '1.15' });
    expect(Date.parse(list.headers.get('last-modified')!)).toBe(t1);
    const empty = await api.req('GET', `/resource_providers?name=${randomUUID()}`, { version: '1.15' });
    expect(empty.headers.get('last-modified')).toMatch(/GMT$/);
  });

  it('keeps unicode names, including 4-byte characters, and finds them by encoded name', async () => {
    const u1 = randomUUID();
    const u2 = randomUUID();
    const snow = `☃ snowman ${u1.slice(0, 4)}`;
    const snake = `🐍 ${u2.slice(0, 4)}`;
    expect((await api.req('POST', '/resource_providers', { body: { name: snow, uuid: u1 } })).json.name).toBe(snow);
    expect((await api.req('POST', '/resource_providers', { body: { name: snake, uuid: u2 } })).json.name).toBe(snake);
    expect((await api.req('GET', `/resource_providers/${u2}`)).json.name).toBe(snake);
    const found = await api.req('GET', `/resource_providers?name=${encodeURIComponent(snow)}`);
    expect(found.json.resource_providers.map((p: { uuid: string }) => p.uuid)).toEqual([u1]);
    const quoted = await api.req('GET', `/resource_providers?name=${encodeURIComponent(`"${snake}"`)}`);
    expect(quoted.json.resource_providers).toEqual([]);
    const dup = await api.req('POST', '/resource_providers', { body: { name: snake } });
    expect(dup.status).toBe(409);
    expect(dup.json.errors[0].detail).toContain(`Conflicting resource provider name: ${snake} already exists.`);
    // 200 code points is the limit, counted as Python counts them (not UTF-16 units)
    expect((await api.req('POST', '/resource_providers', { body: { name: '🐍'.repeat(200) } })).status).toBe(200);
    expect((await api.req('POST', '/resource_providers', { body: { name: '🐍'.repeat(201) } })).status).toBe(400);
  });

  it('refuses to delete a provider that has allocations', async () => {
    const u = randomUUID();
    await api.req('POST', '/resource_providers', { body: { name: `inuse-${u}`, uuid: u } });
    await api.req('PUT', `/resource_providers/${u}/inventories`, { body: { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } } });
    const consumer = randomUUID();
    const put = await api.req('PUT', `/allocations/${consumer}`, {
      version: '1.28',
      body: { allocations: { [u]: { resources: { VCPU: 1 } } }, project_id: randomUUID(), user_id: randomUUID(), consumer_generation: null },
    });
    expect(put.status).toBe(204);
    const del = await api.req('DELETE', `/resource_providers/${u}`);
    expect(del.status).toBe(409);
    expect(del.json.errors[0].code).toBe('placement.resource_provider.inuse');
    expect(del.json.errors[0].detail).toContain(`Unable to delete resource provider ${u}: Resource provider has allocations.`);
    await api.req('DELETE', `/allocations/${consumer}`);
    expect((await api.req('DELETE', `/resource_providers/${u}`)).status).toBe(204);
  });
});

describe('provider list filters combined', () => {
  it('ANDs resources (capacity left), required / forbidden / any-of traits, member_of and in_tree', async () => {
    const agg = randomUUID();
    const mk = async (name: string, parent?: string) => {
      const uuid = randomUUID();
      const r = await api.req('POST', '/resource_providers', { body: { name: `${name}-${uuid}`, uuid, parent_provider_uuid: parent } });
      expect(r.status).toBe(200);
      return uuid;
    };
    const cn1 = await mk('cn1');
    const cn2 = await mk('cn2');
    const numa = await mk('numa', cn1);
    const setInv = async (u: string, inventories: Record<string, unknown>) =>
      expect((await api.req('PUT', `/resource_providers/${u}/inventories`, { body: { resource_provider_generation: 0, inventories } })).status).toBe(
        200,
      );
    await setInv(cn1, { VCPU: { total: 8 }, MEMORY_MB: { total: 4096, max_unit: 2048 } });
    await setInv(cn2, { VCPU: { total: 4, reserved: 1 }, MEMORY_MB: { total: 8192 } });
    await setInv(numa, { VCPU: { total: 16, step_size: 4 } });
    const setTraits = async (u: string, traits: string[]) => {
      const g = (await api.req('GET', `/resource_providers/${u}`)).json.generation;
      expect((await api.req('PUT', `/resource_providers/${u}/traits`, { body: { resource_provider_generation: g, traits } })).status).toBe(200);
    };
    await setTraits(cn1, ['HW_CPU_X86_AVX', 'HW_CPU_X86_SSE42']);
    await setTraits(cn2, ['HW_CPU_X86_AVX2']);
    await setTraits(numa, ['HW_NUMA_ROOT']);
    await api.req('PUT', `/resource_providers/${cn2}/aggregates`, { version: '1.1', body: [agg] });
    await api.req('PUT', `/resource_providers/${numa}/aggregates`, { version: '1.1', body: [agg] });
    // a claim lowers what is left on cn1
    await api.req('PUT', `/allocations/${randomUUID()}`, {
      version: '1.28',
      body: { allocations: { [cn1]: { resources: { VCPU: 6 } } }, project_id: randomUUID(), user_id: randomUUID(), consumer_generation: null },
    });
    const ours = new Set<string>([cn1, cn2, numa]);
    const list = async (q: string, version?: string) => {
      const r = await api.req('GET', `/resource_providers?${q}`, { version });
      expect(r.status).toBe(200);
      return (r.json.resource_providers as Array<{ uuid: string }>)
        .map((p) => p.uuid)
        .filter((u) => ours.has(u))
        .sort();
    };
    const sorted = (...u: string[]) => [...u].sort();
    expect(await list('resources=VCPU:3')).toEqual(sorted(cn2)); // cn1 has 2 left, numa's step is 4
    expect(await list('resources=VCPU:4')).toEqual(sorted(numa));
    expect(await list('resources=VCPU:2,MEMORY_MB:4096')).toEqual(sorted(cn2)); // cn1's max_unit is 2048
    expect(await list('resources=VCPU:2,MEMORY_MB:2048')).toEqual(sorted(cn1, cn2));
    expect(await list('resources=VCPU:1&required=HW_CPU_X86_AVX')).toEqual(sorted(cn1));
    expect(await list('resources=VCPU:1&required=!HW_CPU_X86_AVX')).toEqual(sorted(cn2)); // 1 is not a step of numa's 4
    expect(await list('resources=VCPU:4&required=!HW_CPU_X86_AVX')).toEqual(sorted(numa));
    expect(await list('required=in:HW_CPU_X86_AVX,HW_CPU_X86_AVX2')).toEqual(sorted(cn1, cn2));
    expect(await list('required=in:HW_CPU_X86_AVX,HW_CPU_X86_AVX2&required=!HW_CPU_X86_SSE42')).toEqual(sorted(cn2));
    expect(await list(`member_of=${agg}&resources=VCPU:4`)).toEqual(sorted(numa));
    expect(await list(`member_of=${agg}&required=!HW_NUMA_ROOT`)).toEqual(sorted(cn2));
    expect(await list(`in_tree=${numa}&resources=VCPU:1`)).toEqual(sorted(cn1));
    expect(await list(`in_tree=${cn1}`)).toEqual(sorted(cn1, numa));
    expect(await list(`in_tree=${numa}&member_of=!${agg}`)).toEqual(sorted(cn1));
    // before 1.39 only the last 'required' counts, and in: is refused
    expect(await list('required=HW_CPU_X86_AVX2&required=HW_CPU_X86_AVX', '1.38')).toEqual(sorted(cn1));
    expect((await api.req('GET', '/resource_providers?required=in:HW_CPU_X86_AVX', { version: '1.38' })).status).toBe(400);
    const badRc = await api.req('GET', '/resource_providers?resources=CUSTOM_NOPE:1');
    expect(badRc.json.errors[0].detail).toContain('Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.');
    const badTrait = await api.req('GET', '/resource_providers?required=!CUSTOM_NOPE');
    expect(badTrait.json.errors[0].detail).toContain('No such trait(s): CUSTOM_NOPE.');
  });
});

describe('lists narrowed to a provider, a name or a tree', () => {
  it("takes upstream's empty-answer short-cuts over every provider, not only the ones named (an unknown class still a 400)", async () => {
    const agg = randomUUID();
    const lonelyTrait = `CUSTOM_LONELY_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
    expect((await api.req('PUT', `/traits/${lonelyTrait}`, { version: '1.6' })).status).toBe(201);
    const mk = async (name: string) => {
      const uuid = randomUUID();
      expect((await api.req('POST', '/resource_providers', { body: { name: `${name}-${uuid}`, uuid } })).status).toBe(200);
      return uuid;
    };
    const member = await mk('member');
    const outsider = await mk('outsider');
    await api.req('PUT', `/resource_providers/${member}/aggregates`, { version: '1.1', body: [agg] });
    const g = (await api.req('GET', `/resource_providers/${member}`)).json.generation;
    expect(
      (await api.req('PUT', `/resource_providers/${member}/traits`, { body: { resource_provider_generation: g, traits: ['HW_CPU_X86_AVX2'] } }))
        .status,
    ).toBe(200);
    const get = (q: string) => api.req('GET', `/resource_providers?${q}`, { version: '1.39' });
    const name = (await api.req('GET', `/resource_providers/${outsider}`)).json.name as string;
    // some provider is in the aggregate / has the trait, though not the one named: on to the unknown class
    for (const narrow of [`uuid=${outsider}`, `name=${encodeURIComponent(name)}`, `in_tree=${outsider}`]) {
      const byAgg = await get(`${narrow}&member_of=${agg}&resources=CUSTOM_NOPE_RC:1`);
      expect(byAgg.status, narrow).toBe(400);
      expect(byAgg.json.errors[0].detail).toContain('No such resource class CUSTOM_NOPE_RC.');
      expect((await get(`${narrow}&required=HW_CPU_X86_AVX2&resources=CUSTOM_NOPE_RC:1`)).status, narrow).toBe(400);
      const forbidden = await get(`${narrow}&required=HW_CPU_X86_AVX2&required=!CUSTOM_NOPE_TRAIT`);
      expect(forbidden.status, narrow).toBe(400);
      expect(forbidden.json.errors[0].detail).toContain('No such trait(s): CUSTOM_NOPE_TRAIT.');
      // no provider anywhere in the aggregate / with the trait: the empty answer comes first
      expect((await get(`${narrow}&member_of=${randomUUID()}&resources=CUSTOM_NOPE_RC:1`)).json).toEqual({ resource_providers: [] });
      expect((await get(`${narrow}&required=${lonelyTrait}&resources=CUSTOM_NOPE_RC:1`)).json).toEqual({ resource_providers: [] });
    }
  });

  /** the DynamoDB partitions the process reads during fn */
  async function partitionsRead<T>(fn: () => Promise<T>): Promise<{ value: T; pks: string[] }> {
    const { value, calls } = await ddbCallsDuring(fn);
    const pks: string[] = [];
    for (const { input } of calls) {
      const pk = input.ExpressionAttributeValues?.[':pk'];
      if (typeof pk === 'string') pks.push(pk);
      for (const r of Object.values(input.RequestItems ?? {}) as Array<{ Keys?: Array<{ pk: string }> }>)
        for (const k of r.Keys ?? []) pks.push(k.pk);
    }
    return { value, pks };
  }

  const uuidsOf = (r: { json: { resource_providers: Array<{ uuid: string }> } }) => r.json.resource_providers.map((p) => p.uuid);

  it('answer from the providers’ own items what the whole forest answers, through creations, moves and deletions', async () => {
    const v = '1.37';
    const made: string[] = [];
    const create = async (parent?: string) => {
      const u = randomUUID();
      const r = await api.req('POST', '/resource_providers', {
        version: v,
        body: { name: `t-${u}`, uuid: u, ...(parent ? { parent_provider_uuid: parent } : {}) },
      });
      expect(r.status).toBe(200);
      made.push(u);
      return u;
    };
    const reparent = async (u: string, parent: string | null) => {
      const r = await api.req('PUT', `/resource_providers/${u}`, { version: v, body: { name: `t-${u}`, parent_provider_uuid: parent } });
      expect(r.status).toBe(200);
    };
    const check = async () => {
      const all = (await api.req('GET', '/resource_providers', { version: v })).json.resource_providers as Array<{
        uuid: string;
        root_provider_uuid: string;
        name: string;
      }>;
      for (const u of made) {
        const me = all.find((p) => p.uuid === u);
        const { value, pks } = await partitionsRead(() => api.req('GET', `/resource_providers?in_tree=${u}`, { version: v }));
        expect(uuidsOf(value)).toEqual(me ? all.filter((p) => p.root_provider_uuid === me.root_provider_uuid).map((p) => p.uuid) : []);
        // no change-log poll, no index: only providers' partitions
        expect(pks.every((pk) => pk.startsWith('RP#'))).toBe(true);
        const byUuid = await api.req('GET', `/resource_providers?uuid=${u}`, { version: v });
        expect(uuidsOf(byUuid)).toEqual(me ? [u] : []);
        const byName = await api.req('GET', `/resource_providers?name=t-${u}&in_tree=${u}`, { version: v });
        expect(uuidsOf(byName)).toEqual(me ? [u] : []);
      }
    };
    const a = await create();
    const a1 = await create(a);
    const a11 = await create(a1);
    const b = await create();
    await check();
    // a subtree moves to another tree, then becomes a tree of its own, then moves back
    await reparent(a1, b);
    await check();
    await reparent(a1, null);
    await check();
    const a12 = await create(a1);
    await reparent(a1, a);
    await check();
    // leaves and roots go
    expect((await api.req('DELETE', `/resource_providers/${a11}`)).status).toBe(204);
    expect((await api.req('DELETE', `/resource_providers/${a12}`)).status).toBe(204);
    await check();
    expect((await api.req('DELETE', `/resource_providers/${a1}`)).status).toBe(204);
    expect((await api.req('DELETE', `/resource_providers/${b}`)).status).toBe(204);
    await check();
    const c = await create(a);
    await check();
    expect(uuidsOf(await api.req('GET', `/resource_providers?in_tree=${c}`, { version: v }))).toEqual([a, c]);
  });

  it("answer Nova's sharing-providers question from the aggregates' lists what the whole forest answers", async () => {
    const v = '1.18';
    const [aggA, aggB] = [randomUUID(), randomUUID()];
    const mk = async (traits: string[], aggs: string[]) => {
      const u = randomUUID();
      expect((await api.req('POST', '/resource_providers', { version: v, body: { name: `s-${u}`, uuid: u } })).status).toBe(201);
      let g = 0;
      if (traits.length)
        g = (await api.req('PUT', `/resource_providers/${u}/traits`, { version: v, body: { traits, resource_provider_generation: g } })).json
          .resource_provider_generation;
      if (aggs.length)
        await api.req('PUT', `/resource_providers/${u}/aggregates`, { version: '1.19', body: { aggregates: aggs, resource_provider_generation: g } });
      return u;
    };
    const shared = await mk(['MISC_SHARES_VIA_AGGREGATE'], [aggA]);
    const both = await mk(['MISC_SHARES_VIA_AGGREGATE', 'HW_CPU_X86_AVX2'], [aggA, aggB]);
    await mk(['HW_CPU_X86_AVX2'], [aggA]); // in the aggregate, not sharing
    await mk(['MISC_SHARES_VIA_AGGREGATE'], []); // sharing, in no aggregate
    const sharingQ = (aggs: string[]) => `/resource_providers?member_of=in:${aggs.join(',')}&required=MISC_SHARES_VIA_AGGREGATE`;
    // the same question with one more filter the forest answers: the two must agree
    const viaForest = (aggs: string[]) =>
      `/resource_providers?member_of=in:${aggs.join(',')}&required=MISC_SHARES_VIA_AGGREGATE,!CUSTOM_NOT_THERE_${aggs.length}`;
    const check = async () => {
      for (const aggs of [[aggA], [aggB], [aggA, aggB]]) {
        const { value, pks } = await partitionsRead(() => api.req('GET', sharingQ(aggs), { version: '1.22' }));
        expect(pks.every((pk) => pk.startsWith('RP#') || pk.startsWith('AGG#'))).toBe(true);
        expect(uuidsOf(value).sort()).toEqual(uuidsOf(await api.req('GET', viaForest(aggs), { version: '1.22' })).sort());
      }
    };
    await api.req('PUT', '/traits/CUSTOM_NOT_THERE_1', { version: v });
    await api.req('PUT', '/traits/CUSTOM_NOT_THERE_2', { version: v });
    await check();
    expect(uuidsOf(await api.req('GET', sharingQ([aggA]), { version: '1.22' })).sort()).toEqual([shared, both].sort());
    // stops sharing, leaves an aggregate, goes away
    const g1 = (await api.req('GET', `/resource_providers/${shared}`, { version: v })).json.generation;
    await api.req('PUT', `/resource_providers/${shared}/traits`, { version: v, body: { traits: [], resource_provider_generation: g1 } });
    const g2 = (await api.req('GET', `/resource_providers/${both}`, { version: v })).json.generation;
    await api.req('PUT', `/resource_providers/${both}/aggregates`, {
      version: '1.19',
      body: { aggregates: [aggB], resource_provider_generation: g2 },
    });
    await check();
    expect(uuidsOf(await api.req('GET', sharingQ([aggA]), { version: '1.22' }))).toEqual([]);
    expect((await api.req('DELETE', `/resource_providers/${both}`)).status).toBe(204);
    await check();
    expect(uuidsOf(await api.req('GET', sharingQ([aggB]), { version: '1.22' }))).toEqual([]);
  });
});
