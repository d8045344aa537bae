/**
 * Claims under concurrency, over HTTP against DynamoDB Local: a provider is never
 * over-committed whatever the number of parallel clients, consumer generations make
 * concurrent writers of one consumer lose cleanly (409), and after any mix of
 * concurrent claims, moves and deletes every derived number (provider usage, the
 * allocation rows, consumer records, project usage aggregates, allocation counts)
 * agrees with every other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';
import { pool } from '../../../bench/kit.js';

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

describe('claims under contention', () => {
  it('1000 claims of 1 VCPU from 50 parallel clients on a provider of 100: exactly 100 succeed', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 100 } } });
    const project = `p-${randomUUID()}`;
    let sampling = true;
    let maxSeen = 0;
    const sampler = (async () => {
      while (sampling) {
        const u = await api.req('GET', `/resource_providers/${rp}/usages`);
        maxSeen = Math.max(maxSeen, u.json.usages.VCPU);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const results = await pool(1000, 50, () =>
      api.req('PUT', `/allocations/${randomUUID()}`, {
        version: '1.28',
        body: { allocations: { [rp]: { resources: { VCPU: 1 } } }, project_id: project, user_id: 'u', consumer_generation: null },
      }),
    );
    sampling = false;
    await sampler;
    const byStatus = new Map<number, number>();
    for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    expect(Object.fromEntries(byStatus)).toEqual({ 204: 100, 409: 900 });
    for (const r of results.filter((x) => x.status === 409)) {
      expect(['placement.undefined_code', 'placement.concurrent_update']).toContain(r.json.errors[0].code);
    }
    expect(maxSeen).toBeLessThanOrEqual(100);
    expect((await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages).toEqual({ VCPU: 100 });
    expect((await api.req('GET', `/usages?project_id=${project}`, { version: '1.9' })).json.usages).toEqual({ VCPU: 100 });
    expect((await api.req('GET', `/usages?project_id=${project}`, { version: '1.38' })).json.usages).toEqual({
      unknown: { consumer_count: 100, VCPU: 100 },
    });
    const listed = await api.req('GET', `/resource_providers/${rp}/allocations`);
    expect(Object.keys(listed.json.allocations)).toHaveLength(100);
    const { getProvider } = await import('../../../functions/store/placement/providers.js');
    expect((await getProvider(rp))!.allocationCount).toBe(100);
    // 100 successful claims = 100 generation bumps after the inventory write
    expect(listed.json.resource_provider_generation).toBe(101);
  }, 300_000);

  it('two writers with the same consumer generation: one wins, the other gets a 409', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 64 } } });
    const c = randomUUID();
    const body = (n: number, g: number | null) => ({
      allocations: { [rp]: { resources: { VCPU: n } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: g,
    });
    expect((await api.req('PUT', `/allocations/${c}`, { version: '1.28', body: body(1, null) })).status).toBe(204);
    for (let round = 0; round < 15; round++) {
      const g = (await api.req('GET', `/allocations/${c}`, { version: '1.28' })).json.consumer_generation as number;
      expect(g).toBe(round + 1);
      const writers = round % 3 === 0 ? 10 : 2;
      const rs = await Promise.all(
        Array.from({ length: writers }, (_, i) => api.req('PUT', `/allocations/${c}`, { version: '1.28', body: body(2 + i, g) })),
      );
      const won = rs.map((r, i) => [r.status, i] as const).filter(([s]) => s === 204);
      expect(won).toHaveLength(1);
      for (const r of rs.filter((x) => x.status !== 204)) {
        expect(r.status).toBe(409);
        expect(r.json.errors[0].code).toBe('placement.concurrent_update');
      }
      const after = await api.req('GET', `/allocations/${c}`, { version: '1.28' });
      expect(after.json.consumer_generation).toBe(g + 1);
      expect(after.json.allocations[rp].resources.VCPU).toBe(2 + won[0]![1]);
      expect((await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages.VCPU).toBe(2 + won[0]![1]);
    }
  }, 120_000);

  it('before 1.28 concurrent writers of one consumer serialise: all succeed, the generation counts them', async () => {
    const rp = await createProvider(api, { inventories: { VCPU: { total: 64 } } });
    const c = randomUUID();
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.req('PUT', `/allocations/${c}`, {
          version: '1.27',
          body: { allocations: { [rp]: { resources: { VCPU: i + 1 } } }, project_id: 'p', user_id: 'u' },
        }),
      ),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(8).fill(204));
    const after = await api.req('GET', `/allocations/${c}`, { version: '1.28' });
    expect(after.json.consumer_generation).toBe(8);
    expect((await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages.VCPU).toBe(after.json.allocations[rp].resources.VCPU);
  }, 60_000);

  it('after a random mix of concurrent claims, moves, swaps and deletes every number agrees', async () => {
    const caps = [12, 20, 7];
    const rps = await Promise.all(caps.map((t) => createProvider(api, { inventories: { VCPU: { total: t }, MEMORY_MB: { total: 4 * t } } })));
    const consumers = Array.from({ length: 24 }, () => randomUUID());
    const projects = ['pa', 'pb', 'pc'].map((p) => `${p}-${randomUUID()}`);
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const statuses = await pool(400, 20, async () => {
      const c = consumers[rnd(consumers.length)]!;
      const op = rnd(10);
      if (op === 0) return (await api.req('DELETE', `/allocations/${c}`)).status;
      const cur = await api.req('GET', `/allocations/${c}`, { version: '1.38' });
      const g = cur.json.consumer_generation ?? null;
      const allocations: Record<string, { resources: Record<string, number> }> = {};
      if (op !== 1) {
        for (const rp of rps) if (rnd(2)) allocations[rp] = { resources: { VCPU: 1 + rnd(3), ...(rnd(2) ? { MEMORY_MB: 1 + rnd(4) } : {}) } };
      }
      const owner = { project_id: projects[rnd(3)]!, user_id: `u${rnd(2)}`, consumer_type: rnd(2) ? 'INSTANCE' : 'MIGRATION' };
      if (op === 2) {
        const other = consumers[rnd(consumers.length)]!;
        if (other === c) return 0;
        const og = (await api.req('GET', `/allocations/${other}`, { version: '1.38' })).json.consumer_generation ?? null;
        return (
          await api.req('POST', '/allocations', {
            version: '1.38',
            body: {
              [c]: { allocations, ...owner, consumer_generation: g },
              [other]: { allocations: {}, ...owner, consumer_generation: og },
            },
          })
        ).status;
      }
      return (await api.req('PUT', `/allocations/${c}`, { version: '1.38', body: { allocations, ...owner, consumer_generation: g } })).status;
    });
    for (const s of statuses) expect([0, 204, 404, 409]).toContain(s);
    expect(statuses.filter((s) => s === 204).length).toBeGreaterThan(50);

    // the truth: every consumer's record
    const records = await Promise.all(
      consumers.map(async (c) => [c, (await api.req('GET', `/allocations/${c}`, { version: '1.38' })).json] as const),
    );
    const { getProvider } = await import('../../../functions/store/placement/providers.js');
    for (const [i, rp] of rps.entries()) {
      const fromConsumers: Record<string, number> = { VCPU: 0, MEMORY_MB: 0 };
      let holders = 0;
      for (const [, rec] of records) {
        const res = rec.allocations[rp]?.resources;
        if (!res) continue;
        holders++;
        for (const [rc, n] of Object.entries(res)) fromConsumers[rc]! += n as number;
      }
      const used = (await api.req('GET', `/resource_providers/${rp}/usages`)).json.usages;
      expect(used).toEqual(fromConsumers);
      expect(used.VCPU).toBeLessThanOrEqual(caps[i]!);
      const rows = (await api.req('GET', `/resource_providers/${rp}/allocations`, { version: '1.28' })).json.allocations;
      expect(Object.keys(rows).sort()).toEqual(
        records
          .filter(([, rec]) => rec.allocations[rp])
          .map(([c]) => c)
          .sort(),
      );
      for (const [c, row] of Object.entries(rows) as [string, { consumer_generation: number; resources: unknown }][]) {
        const rec = records.find(([x]) => x === c)![1];
        expect(row).toEqual({ resources: rec.allocations[rp].resources, consumer_generation: rec.consumer_generation });
      }
      expect((await getProvider(rp))!.allocationCount).toBe(holders);
    }
    for (const p of projects) {
      const expected: Record<string, Record<string, number>> = {};
      for (const [, rec] of records) {
        if (rec.project_id !== p) continue;
        const t = (expected[rec.consumer_type] ??= { consumer_count: 0 });
        t.consumer_count!++;
        for (const a of Object.values(rec.allocations) as { resources: Record<string, number> }[]) {
          for (const [rc, n] of Object.entries(a.resources)) t[rc] = (t[rc] ?? 0) + n;
        }
      }
      expect((await api.req('GET', `/usages?project_id=${p}`, { version: '1.38' })).json.usages).toEqual(expected);
    }
  }, 300_000);
});
