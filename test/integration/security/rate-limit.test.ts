/**
 * Limits per client (`npm start -- --rate-limit RATE:BURST`, `-c projectRateLimit` in
 * AWS; functions/store/ratelimit.ts): each project's token bucket per API, shared by
 * every container, answered in each API's own format with Retry-After — through HTTP,
 * on two containers behind the round-robin front as Lambda spreads requests.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startLocalStack, type Api } from '../harness.js';

let stack: { placement: Api; baremetalUrl: string; stop: () => Promise<void> };

beforeAll(async () => {
  const s = await startLocalStack({
    containers: 2,
    containerEnv: { RATE_LIMIT_EXEMPT_ROLES: 'service' },
    // one request every 5 s per project, 3 at once: slow enough that a loaded machine
    // cannot refill a token between the requests of one test
    rateLimit: '0.2:3',
  });
  stack = { placement: client(s.placementUrl, async () => {}), baremetalUrl: s.baremetalUrl, stop: () => s.stop() };
}, 120_000);
afterAll(async () => stack?.stop());

const bm = (path: string, headers: Record<string, string>) =>
  fetch(stack.baremetalUrl + path, { headers: { 'x-openstack-ironic-api-version': '1.80', accept: 'application/json', ...headers } });

describe('the per-project limit, through HTTP', () => {
  it('Placement: a project past its burst gets Placement’s 429 with Retry-After; another project and the version document are not held up', async () => {
    const project = `p-${randomUUID()}`;
    const token = `admin:${project}`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await stack.placement.req('GET', '/resource_providers', { token })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await stack.placement.req('GET', '/resource_providers', { token });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(5);
    expect(refused.headers.get('openstack-api-version')).toMatch(/^placement 1\.\d+$/);
    expect(refused.json).toEqual({
      errors: [
        {
          status: 429,
          title: 'Too Many Requests',
          detail: expect.stringContaining(`Too many requests for ${project}: at most 0.2 a second (3 at once). Retry after ${retryAfter} s.`),
          code: 'placement.undefined_code',
          request_id: refused.headers.get('x-openstack-request-id'),
        },
      ],
    });
    expect(refused.json.errors[0].detail).toMatch(/^The client has sent too many requests/);
    // the neighbour is served; the version document needs no token and counts nothing
    expect((await stack.placement.req('GET', '/resource_providers', { token: `admin:other-${project}` })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await stack.placement.req('GET', '/', { token: '' })).status).toBe(200);
    // after Retry-After the bucket admits again
    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await stack.placement.req('GET', '/resource_providers', { token })).status).toBe(200);
  }, 60_000);

  it('bare metal: Ironic’s fault body in error_message, with Retry-After; /v1 is not counted; each API has its own bucket', async () => {
    const project = `p-${randomUUID()}`;
    const h = { 'x-project-id': project, 'x-roles': 'admin' };
    for (let i = 0; i < 3; i++) expect((await bm('/v1/nodes', h)).status).toBe(200);
    const refused = await bm('/v1/nodes', h);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-openstack-ironic-api-version')).toBe('1.80');
    const body = (await refused.json()) as { error_message: string };
    expect(Object.keys(body)).toEqual(['error_message']);
    expect(JSON.parse(body.error_message)).toEqual({
      faultcode: 'Client',
      faultstring: expect.stringMatching(
        new RegExp(`^Too many requests for ${project}: at most 0\\.2 a second \\(3 at once\\)\\. Retry after \\d+ s\\.$`),
      ),
      debuginfo: null,
    });
    for (let i = 0; i < 5; i++) expect((await bm('/v1', {})).status).toBe(200);
    // the same project still has its Placement budget
    expect((await stack.placement.req('GET', '/traits', { token: `admin:${project}` })).status).toBe(200);
  }, 60_000);

  it('lets an exempt role through (RATE_LIMIT_EXEMPT_ROLES)', async () => {
    const project = `svc-${randomUUID()}`;
    for (let i = 0; i < 6; i++) {
      const r = await stack.placement.req('GET', '/resource_providers', { token: `nova:${project}`, headers: { 'x-roles': 'service' } });
      expect(r.status, `request ${i}`).toBe(200);
    }
  }, 60_000);
});

describe('the bucket itself (functions/store/ratelimit.ts)', () => {
  it('admits the burst, then one per interval, sharing the bucket between callers that race; and answers unavailable, not ok, when it cannot be read', async () => {
    const { useTable } = await import('../harness.js');
    await useTable();
    const { takeToken, resetRateMemory, checkLimit } = await import('../../../functions/store/ratelimit.js');
    const limit = { rate: 10, burst: 5 };
    const bucket = `race-${randomUUID()}`;
    const t0 = Date.now();
    // 20 concurrent requests at one moment: exactly the burst is admitted
    const results = await Promise.all(Array.from({ length: 20 }, () => takeToken('placement', bucket, limit, t0)));
    expect(results.filter((r) => 'ok' in r)).toHaveLength(5);
    // 100 ms later (one interval at 10/s) exactly one more, in a container that knows nothing yet
    resetRateMemory();
    const later = await Promise.all(Array.from({ length: 5 }, () => takeToken('placement', bucket, limit, t0 + 100)));
    expect(later.filter((r) => 'ok' in r)).toHaveLength(1);
    // a refusal is remembered: the next request of that bucket costs no write
    const again = await takeToken('placement', bucket, limit, t0 + 101);
    expect(again).toMatchObject({ error: 'limited', writes: 0 });
    // the buckets are transient: an export leaves them behind, and they do not make a table non-empty
    const { exportItems, tableIsEmpty } = await import('../../../functions/store/placement/dump.js');
    const exported: string[] = [];
    for await (const page of exportItems()) exported.push(...page.map((i) => String(i.pk?.S)));
    expect(exported.filter((pk) => pk.startsWith('RATE#'))).toEqual([]);
    expect(await tableIsEmpty()).toBe(true);
    // the table unreachable: unavailable (503), never let through
    process.env.DDB_ENDPOINT = 'http://127.0.0.1:9';
    const { resetConfig } = await import('../../../functions/config.js');
    resetConfig();
    const down = await checkLimit('placement', { projectId: `p-${randomUUID()}`, roles: [] }, limit, []);
    expect(down).toMatchObject({ error: 'unavailable', retryAfterS: 1 });
  }, 60_000);
});
