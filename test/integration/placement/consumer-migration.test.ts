/**
 * The incomplete-consumer online migration (seed 000) against DynamoDB Local:
 * allocation rows imported without consumer records (the store's legacy import, as
 * the operators' import tool writes them) get records owned by the configured
 * incomplete project and user, in batches, resumably, idempotently, from the
 * maintenance function and from `npm run migrate-consumers`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startPlacement, type Api } from '../harness.js';
import { createProvider } from '../fixtures.js';

let api: Api;
const P = 'incomplete-project';
const U = 'incomplete-user';

beforeAll(async () => {
  api = await startPlacement({
    LEGACY_FLAG_TTL_MS: '0',
    INCOMPLETE_CONSUMER_PROJECT_ID: P,
    INCOMPLETE_CONSUMER_USER_ID: U,
  });
});
afterAll(async () => api.close());

const store = () => import('../../../functions/store/placement/allocations.js');
const migration = () => import('../../../functions/maintenance/consumers.js');

describe('incomplete consumer migration', () => {
  it('creates the missing records in resumable batches, then has nothing left to do', async () => {
    const [a, b] = [
      await createProvider(api, { inventories: { VCPU: { total: 10_000 }, DISK_GB: { total: 10_000 } } }),
      await createProvider(api, { inventories: { VCPU: { total: 10_000 }, DISK_GB: { total: 10_000 } } }),
    ];
    const legacy = Array.from({ length: 120 }, (_, i) => ({
      uuid: randomUUID(),
      allocations: (i % 3 === 0 ? { [a]: { VCPU: 1, DISK_GB: 2 }, [b]: { VCPU: 1 } } : { [a]: { VCPU: 1 } }) as Record<
        string,
        Record<string, number>
      >,
    }));
    await (await store()).importLegacyAllocations(legacy);
    expect((await api.req('GET', `/resource_providers/${a}/usages`)).json.usages).toEqual({ VCPU: 120, DISK_GB: 80 });
    expect((await api.req('GET', `/usages?project_id=${P}`, { version: '1.9' })).json.usages).toEqual({});

    const { migrateIncompleteConsumers, readProgress } = await migration();
    // a run that stops after its first batch (deadline passed): resumable
    const first = await migrateIncompleteConsumers({ batchSize: 50, deadline: Date.now() + 1 });
    expect(first).toMatchObject({ created: 50, batches: 1, done: false });
    expect((await readProgress()).created).toBe(50);

    const reports: number[] = [];
    const rest = await migrateIncompleteConsumers({ batchSize: 50, onBatch: (r) => reports.push(r.progress.created) });
    expect(rest).toMatchObject({ created: 70, done: true });
    expect(reports).toEqual([100, 120]);
    expect(rest.progress).toMatchObject({ created: 120 });
    expect(rest.progress.completedAt).toBeTruthy();

    // every consumer is now a complete one: owner, generation 0, no type
    for (const c of [legacy[0]!, legacy[1]!]) {
      const got = await api.req('GET', `/allocations/${c.uuid}`, { version: '1.38' });
      expect(got.json).toMatchObject({ project_id: P, user_id: U, consumer_generation: 0, consumer_type: 'unknown' });
      expect(Object.keys(got.json.allocations).sort()).toEqual(Object.keys(c.allocations).sort());
    }
    expect((await api.req('GET', `/usages?project_id=${P}`, { version: '1.38' })).json.usages).toEqual({
      unknown: { consumer_count: 120, VCPU: 160, DISK_GB: 80 },
    });
    expect((await api.req('GET', `/usages?project_id=${P}&user_id=${U}`, { version: '1.9' })).json.usages).toEqual({ VCPU: 160, DISK_GB: 80 });
    // provider usage did not change; the rows are listed now, with their consumer's generation
    expect((await api.req('GET', `/resource_providers/${a}/usages`)).json.usages).toEqual({ VCPU: 120, DISK_GB: 80 });
    const rows = (await api.req('GET', `/resource_providers/${b}/allocations`, { version: '1.28' })).json.allocations;
    expect(Object.keys(rows)).toHaveLength(40);
    expect(Object.values(rows).every((r) => (r as { consumer_generation: number }).consumer_generation === 0)).toBe(true);

    // idempotent: nothing left, the flag is down, a run costs nothing
    const again = await migrateIncompleteConsumers({ batchSize: 50 });
    expect(again).toMatchObject({ created: 0, batches: 0, done: true });
    const forced = await migrateIncompleteConsumers({ batchSize: 50, force: true });
    expect(forced).toMatchObject({ created: 0, done: true });
    const { migrateConsumer } = await migration();
    expect(await migrateConsumer(legacy[0]!.uuid, [a, b])).toBe('nothing');
    const { readLegacyFlag } = await import('../../../functions/store/placement/consumers.js');
    expect((await readLegacyFlag()).pending).toBe(false);

    // the migrated consumers follow the >= 1.28 rules with generation 0
    const c = legacy[1]!.uuid;
    const stale = await api.req('PUT', `/allocations/${c}`, {
      version: '1.28',
      body: { allocations: { [a]: { resources: { VCPU: 2 } } }, project_id: 'p', user_id: 'u', consumer_generation: null },
    });
    expect(stale.status).toBe(409);
    const ok = await api.req('PUT', `/allocations/${c}`, {
      version: '1.28',
      body: { allocations: { [a]: { resources: { VCPU: 2 } } }, project_id: 'p', user_id: 'u', consumer_generation: 0 },
    });
    expect(ok.status).toBe(204);
    expect((await api.req('GET', `/usages?project_id=${P}`, { version: '1.9' })).json.usages).toEqual({ VCPU: 159, DISK_GB: 80 });
  }, 120_000);

  it('runs from the maintenance function and leaves consumers a claim already completed alone', async () => {
    const a = await createProvider(api, { inventories: { VCPU: { total: 100 }, DISK_GB: { total: 100 } } });
    const [x, y] = [randomUUID(), randomUUID()];
    await (await store()).importLegacyAllocations([
      { uuid: x, allocations: { [a]: { VCPU: 3 } } },
      { uuid: y, allocations: { [a]: { VCPU: 4 } } },
    ]);
    // y is claimed (replaced) through the API before the migration runs
    const put = await api.req('PUT', `/allocations/${y}`, {
      version: '1.28',
      body: { allocations: { [a]: { resources: { VCPU: 1 } } }, project_id: 'py', user_id: 'uy', consumer_generation: null },
    });
    expect(put.status).toBe(204);
    const { runMaintenance } = await import('../../../functions/maintenance/handler.js');
    const reports = await runMaintenance(20_000);
    const mine = reports.find((r) => r.task === 'incomplete-consumers')!;
    expect(mine).toMatchObject({ created: 1, done: true });
    expect((await api.req('GET', `/allocations/${x}`, { version: '1.28' })).json).toMatchObject({ project_id: P, consumer_generation: 0 });
    expect((await api.req('GET', `/allocations/${y}`, { version: '1.28' })).json).toMatchObject({ project_id: 'py', consumer_generation: 1 });
    expect((await api.req('GET', `/resource_providers/${a}/usages`)).json.usages.VCPU).toBe(4);
  }, 60_000);

  it('`npm run migrate-consumers` migrates and reports progress', async () => {
    const a = await createProvider(api, { inventories: { VCPU: { total: 100 }, DISK_GB: { total: 100 } } });
    const ids = Array.from({ length: 7 }, () => randomUUID());
    await (await store()).importLegacyAllocations(ids.map((uuid) => ({ uuid, allocations: { [a]: { VCPU: 1 } } })));
    const { stdout } = await promisify(execFile)('node_modules/.bin/tsx', ['cli/migrate-consumers.ts', '--batch-size', '3'], {
      env: { ...process.env },
      cwd: new URL('../../../', import.meta.url).pathname,
    });
    expect(stdout).toContain('batch 1: 3 created this run');
    expect(stdout).toContain('batch 3: 7 created this run');
    expect(stdout).toMatch(/done: 7 consumer records created in 3 batch\(es\)/);
    for (const c of ids) expect((await api.req('GET', `/allocations/${c}`, { version: '1.28' })).json.consumer_generation).toBe(0);
  }, 60_000);
});
