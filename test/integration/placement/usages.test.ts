/**
 * GET /usages as Nova's quota counting uses it (seed 001), against DynamoDB Local: the
 * totals come from the usage aggregates the claims maintain — one item per user and
 * shard — read with one Query per shard (a project) or one BatchGetItem (a user) of a
 * handful of items whatever the number of consumers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ddbCallsDuring, type DdbCall } from '../../../bench/kit.js';
import { startPlacement, type Api } from '../harness.js';

let api: Api;
beforeAll(async () => {
  api = await startPlacement();
});
afterAll(async () => api.close());

/** items the calls' Queries looked at */
const scannedBy = (calls: readonly DdbCall[]) => calls.reduce((n, c) => n + Number(c.output?.ScannedCount ?? 0), 0);

describe('GET /usages', () => {
  it('counts a project and its users in O(shards) reads, by consumer type from 1.38', async () => {
    const rp = randomUUID();
    await api.req('POST', '/resource_providers', { body: { name: `rp-${rp}`, uuid: rp } });
    await api.req('PUT', `/resource_providers/${rp}/inventories`, {
      body: { resource_provider_generation: 0, inventories: { VCPU: { total: 100_000 }, MEMORY_MB: { total: 10_000_000 } } },
    });
    const project = `p-${randomUUID()}`;
    const users = ['alice', 'bob', 'carol#x'];
    const expected: Record<string, { VCPU: number; MEMORY_MB: number; n: number }> = {};
    const n = 150;
    for (let i = 0; i < n; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const user = users[(i + j) % 3]!;
          const type = (i + j) % 5 === 0 ? undefined : 'INSTANCE';
          const e = (expected[user] ??= { VCPU: 0, MEMORY_MB: 0, n: 0 });
          e.VCPU += 2;
          e.MEMORY_MB += 256;
          e.n++;
          const r = await api.req('PUT', `/allocations/${randomUUID()}`, {
            version: type ? '1.38' : '1.28',
            body: {
              allocations: { [rp]: { resources: { VCPU: 2, MEMORY_MB: 256 } } },
              project_id: project,
              user_id: user,
              consumer_generation: null,
              ...(type ? { consumer_type: type } : {}),
            },
          });
          expect(r.status).toBe(204);
        }),
      );
    }
    const { value, calls } = await ddbCallsDuring(() => api.req('GET', `/usages?project_id=${project}`, { version: '1.9' }));
    expect(value.json.usages).toEqual({ VCPU: 2 * n, MEMORY_MB: 256 * n });
    const { config } = await import('../../../functions/config.js');
    // one Query per shard, each of the project's users' items in it at most
    expect(calls.map((c) => c.command)).toEqual(Array(config().usageShards).fill('Query'));
    expect(scannedBy(calls)).toBeLessThanOrEqual(config().usageShards * users.length);
    for (const user of users) {
      const r = await ddbCallsDuring(() => api.req('GET', `/usages?project_id=${project}&user_id=${encodeURIComponent(user)}`, { version: '1.9' }));
      expect(r.value.json.usages).toEqual({ VCPU: expected[user]!.VCPU, MEMORY_MB: expected[user]!.MEMORY_MB });
      expect(r.calls.map((c) => c.command)).toEqual(['BatchGetItem']);
    }
    // 'carol#x' must not be counted as 'carol'
    expect((await api.req('GET', `/usages?project_id=${project}&user_id=carol`, { version: '1.9' })).json.usages).toEqual({});
    const typed = await api.req('GET', `/usages?project_id=${project}`, { version: '1.38' });
    expect(typed.json.usages).toEqual({
      INSTANCE: { consumer_count: 120, VCPU: 240, MEMORY_MB: 120 * 256 },
      unknown: { consumer_count: 30, VCPU: 60, MEMORY_MB: 30 * 256 },
    });
    expect((await api.req('GET', `/usages?project_id=${project}&consumer_type=all`, { version: '1.38' })).json.usages).toEqual({
      all: { consumer_count: 150, VCPU: 300, MEMORY_MB: 150 * 256 },
    });
    expect((await api.req('GET', `/usages?project_id=${project}&user_id=alice&consumer_type=unknown`, { version: '1.38' })).json.usages).toEqual({
      unknown: { consumer_count: 10, VCPU: 20, MEMORY_MB: 2560 },
    });
    expect((await api.req('GET', `/usages?project_id=${project}`, { version: '1.15' })).headers.get('cache-control')).toBe('no-cache');
  }, 120_000);

  it('lets a project reader read its own project only (policy target is the queried project)', async () => {
    const mine = await api.req('GET', '/usages?project_id=proj-a', {
      version: '1.9',
      token: 'user',
      headers: { 'x-roles': 'reader', 'x-project-id': 'proj-a' },
    });
    const other = await api.req('GET', '/usages?project_id=proj-b', {
      version: '1.9',
      token: 'user',
      headers: { 'x-roles': 'reader', 'x-project-id': 'proj-a' },
    });
    expect([mine.status, other.status]).toEqual([200, 403]);
  });
});
