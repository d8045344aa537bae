/**
 * GET /allocation_candidates end to end against DynamoDB Local: the handler over the
 * warm snapshot sees every acknowledged write (inventories, traits, aggregates,
 * claims), the bulk loader's providers, the global cap, headers and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';

let api: Api;

beforeAll(async () => {
  api = await startPlacement({ MAX_ALLOCATION_CANDIDATES: '-1', PLACEMENT_POLICY_MODE: 'default' });
});
afterAll(async () => api.close());

const candidates = (qs: string, version = '1.39') => api.req('GET', `/allocation_candidates?${qs}`, { version });

describe('GET /allocation_candidates over the live store', () => {
  const trait = `CUSTOM_T${randomUUID().slice(0, 8).toUpperCase()}`;
  const agg = randomUUID();
  let cn: string;
  let pf: string;
  let ss: string;

  beforeAll(async () => {
    expect((await api.req('PUT', `/traits/${trait}`)).status).toBe(201);
    cn = await createProvider(api, { inventories: { VCPU: { total: 4 }, MEMORY_MB: { total: 4096 } }, traits: [trait], aggregates: [agg] });
    pf = await createProvider(api, { inventories: { SRIOV_NET_VF: { total: 2 } }, parent: cn });
    ss = await createProvider(api, { inventories: { DISK_GB: { total: 100 } }, traits: ['MISC_SHARES_VIA_AGGREGATE'], aggregates: [agg] });
  });

  it('combines a tree and a sharing provider written through the API', async () => {
    const r = await candidates(`resources=VCPU:1,SRIOV_NET_VF:1,DISK_GB:10&required=${trait}&member_of=${agg}`);
    expect(r.status).toBe(200);
    expect(r.json.allocation_requests).toEqual([
      {
        allocations: { [cn]: { resources: { VCPU: 1 } }, [pf]: { resources: { SRIOV_NET_VF: 1 } }, [ss]: { resources: { DISK_GB: 10 } } },
        mappings: { '': [cn, ss, pf] },
      },
    ]);
    // with nested and sharing providers upstream builds the unnumbered group per class
    // id: VCPU (0), DISK_GB (2), SRIOV_NET_VF (4) — whatever the query's order
    expect(Object.keys(r.json.allocation_requests[0].allocations)).toEqual([cn, ss, pf]);
    expect(Object.keys(r.json.provider_summaries).sort()).toEqual([cn, pf, ss].sort());
    expect(r.json.provider_summaries[cn]).toEqual({
      resources: { VCPU: { capacity: 4, used: 0 }, MEMORY_MB: { capacity: 4096, used: 0 } },
      traits: [trait],
      parent_provider_uuid: null,
      root_provider_uuid: cn,
    });
  });

  it('sees a claim at once (read-your-writes): capacity and summaries follow usage', async () => {
    const consumer = randomUUID();
    const claim = await api.req('PUT', `/allocations/${consumer}`, {
      version: '1.28',
      body: { allocations: { [pf]: { resources: { SRIOV_NET_VF: 2 } } }, project_id: randomUUID(), user_id: randomUUID(), consumer_generation: null },
    });
    expect(claim.status).toBe(204);
    expect((await candidates(`resources=VCPU:1,SRIOV_NET_VF:1&in_tree=${cn}`)).json.allocation_requests).toEqual([]);
    const r = await candidates(`resources=VCPU:1&in_tree=${cn}`);
    expect(r.json.provider_summaries[pf].resources.SRIOV_NET_VF).toEqual({ capacity: 2, used: 2 });
    expect((await api.req('DELETE', `/allocations/${consumer}`)).status).toBe(204);
    expect((await candidates(`resources=VCPU:1,SRIOV_NET_VF:1&in_tree=${cn}`)).json.allocation_requests).toHaveLength(1);
  });

  it('sees trait and aggregate changes at once', async () => {
    const gen = (await api.req('GET', `/resource_providers/${cn}`)).json.generation;
    expect((await api.req('PUT', `/resource_providers/${cn}/traits`, { body: { resource_provider_generation: gen, traits: [] } })).status).toBe(200);
    expect((await candidates(`resources=VCPU:1&required=${trait}`)).json.allocation_requests).toEqual([]);
  });

  it('answers with cache headers from 1.15 and none before', async () => {
    const r = await candidates('resources=VCPU:1', '1.15');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('last-modified')).toMatch(/^\w+, \d+ \w+ \d{4} [\d:]+ GMT$/);
    expect((await candidates('resources=VCPU:1', '1.14')).headers.get('cache-control')).toBeNull();
  });

  it('refuses what Placement refuses', async () => {
    expect((await candidates('resources=VCPU:1', '1.9')).status).toBe(404);
    const unknown = await candidates(`resources=CUSTOM_NOT_A_CLASS_${randomUUID().slice(0, 4).toUpperCase()}:1`);
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors[0].detail).toContain('Invalid resource class in resources parameter: No such resource class CUSTOM_NOT_A_CLASS_');
    const badTrait = await candidates('resources=VCPU:1&required=CUSTOM_NO_SUCH_TRAIT');
    expect(badTrait.json.errors[0].detail).toContain('No such trait(s): CUSTOM_NO_SUCH_TRAIT.');
    const limit = await candidates('resources=VCPU:1&limit=0', '1.16');
    expect(limit.status).toBe(400);
    expect(limit.json.errors[0].detail).toContain("Failed validating 'pattern'");
    const key = await candidates('resources01=VCPU:1', '1.25');
    expect(key.json.errors[0].detail).toContain("'resources01' does not match any of the regexes");
    const dup = await candidates('resources=VCPU:1&root_required=HW_CPU_X86_AVX&root_required=HW_CPU_X86_SSE', '1.35');
    expect(dup.json.errors[0].code).toBe('placement.query.duplicate_key');
    expect((await api.req('GET', '/allocation_candidates?resources=VCPU:1', { headers: { accept: 'text/plain' } })).status).toBe(406);
  });

  it('is admin/service only', async () => {
    const r = await api.req('GET', '/allocation_candidates?resources=VCPU:1', { token: 'user', headers: { 'x-roles': 'member' } });
    expect(r.status).toBe(403);
  });
});

describe('bulk loader and the global cap', () => {
  it('bulk-loaded providers are candidates for the next request; MAX_ALLOCATION_CANDIDATES caps answers', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const rc = `CUSTOM_BULK${randomUUID().slice(0, 6).toUpperCase()}`;
    expect((await api.req('PUT', `/resource_classes/${rc}`, { version: '1.7' })).status).toBe(201);
    const roots = Array.from({ length: 30 }, (_, i) => ({
      uuid: randomUUID(),
      name: `bulk-${i}-${randomUUID().slice(0, 6)}`,
      inventories: { [rc]: { total: 2 } },
    }));
    const kids = roots.slice(0, 5).map((r, i) => ({
      uuid: randomUUID(),
      name: `bulk-kid-${i}-${randomUUID().slice(0, 6)}`,
      parent: r.uuid,
      inventories: { [rc]: { total: 1 } },
    }));
    const res = await bulkLoadProviders([...roots, ...kids]);
    expect(res.providers).toBe(35);
    const all = await candidates(`resources=${rc}:1`);
    expect(all.json.allocation_requests).toHaveLength(35);
    // the API sees them as ordinary providers: tree links, child counts and class refs
    const child = await api.req('GET', `/resource_providers/${kids[0]!.uuid}`);
    expect(child.json.root_provider_uuid).toBe(roots[0]!.uuid);
    const del = await api.req('DELETE', `/resource_classes/${rc}`, { version: '1.7' });
    expect(del.status).toBe(409);
    expect((await api.req('DELETE', `/resource_providers/${roots[0]!.uuid}`)).status).toBe(409);

    const { resetConfig } = await import('../../../functions/config.js');
    process.env.MAX_ALLOCATION_CANDIDATES = '7';
    resetConfig();
    try {
      expect((await candidates(`resources=${rc}:1`)).json.allocation_requests).toHaveLength(7);
      const limited = await candidates(`resources=${rc}:1&limit=3`);
      expect(limited.json.allocation_requests).toHaveLength(3);
      // breadth-first over trees in creation order: one candidate from each of the first three roots
      const used = limited.json.allocation_requests.map((a: any) => Object.keys(a.allocations)[0]);
      expect(used).toEqual([roots[0]!.uuid, roots[1]!.uuid, roots[2]!.uuid]);
      // summaries: the whole trees of those roots (each of them has one child)
      expect(Object.keys(limited.json.provider_summaries).sort()).toEqual(
        [roots[0]!.uuid, kids[0]!.uuid, roots[1]!.uuid, kids[1]!.uuid, roots[2]!.uuid, kids[2]!.uuid].sort(),
      );
    } finally {
      process.env.MAX_ALLOCATION_CANDIDATES = '-1';
      resetConfig();
    }
  });
});
