/**
 * A deploy from aea5993 to this release, as CloudFormation does it: for a while both
 * releases serve one table (docs/items.md, "Layout versions and upgrades"). The old
 * release — its own code, a worktree of that commit (test/fixtures/layout-v1/old-release.ts)
 * — keeps writing layout 1; this release waits (503, nothing read or written) and its bare
 * metal serves; once the old release is gone the migration opens and this release serves
 * every write the old one made, while its own writes go on.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../../../local/ddb-local.js';
import type { RunningStack } from '../../../local/start.js';
import { oldCheckout, type OldRelease, startOldRelease } from '../../fixtures/layout-v1/old-release.js';
import { startLocalStack } from '../harness.js';
import { placementCall } from './fixture.js';

let old: OldRelease | undefined;
let stack: RunningStack | undefined;
let table: string;

beforeAll(async () => {
  table = `t_${randomUUID().replace(/-/g, '')}`;
  // the old release creates the table it serves (as it did), writing layout 1
  old = await startOldRelease({
    checkout: oldCheckout(),
    ddbEndpoint: inject('ddbEndpoint'),
    table,
    placementPort: await freePort(),
    baremetalPort: await freePort(),
    quiet: true,
  });
}, 600_000);

afterAll(async () => {
  await old?.stop();
  await stack?.stop();
});

const call = async (base: string, method: string, path: string, body?: unknown, version = '1.39') => {
  const r = await placementCall(base, method, path, body, version);
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : undefined, retry: r.headers.get('retry-after') };
};

it('two releases on one table: the old one writes layout 1, the new one waits, then serves all of it', async () => {
  const o = old!;
  const host = randomUUID();
  const vm = (n: number) => `0000000a-0000-4000-8000-${String(n).padStart(12, '0')}`;
  // the old release serves the table: a host with inventory, an instance on it
  expect((await call(o.placement, 'POST', '/resource_providers', { uuid: host, name: `sbs-${host}` })).status).toBe(200);
  const inv = { resource_provider_generation: 0, inventories: { VCPU: { total: 16 }, MEMORY_MB: { total: 8192 } } };
  expect((await call(o.placement, 'PUT', `/resource_providers/${host}/inventories`, inv)).status).toBe(200);
  const claim = (n: number, base: string) =>
    call(base, 'PUT', `/allocations/${vm(n)}`, {
      allocations: { [host]: { resources: { VCPU: 2, MEMORY_MB: 1024 } } },
      project_id: 'p-sbs',
      user_id: 'u-sbs',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
  expect((await claim(1, o.placement)).status).toBe(204);

  // the deploy begins: this release's functions come up beside the old ones
  stack = await startLocalStack({ layoutMigration: 'manual' }, { table });
  const n = stack.placementUrl;
  const { readLayoutRecord, forgetLayout } = await import('../../../functions/store/layout/state.js');
  expect(await readLayoutRecord()).toMatchObject({ version: 1, phase: 'waiting' });
  // this release waits: a 503 that says why, nothing written
  const waiting = await call(n, 'GET', `/resource_providers/${host}`);
  expect(waiting.status).toBe(503);
  expect(waiting.retry).toBe('10');
  const refused = await claim(2, n);
  expect(refused.status).toBe(503);
  // the old release goes on serving, its writes land
  expect((await claim(3, o.placement)).status).toBe(204);
  const oldView = (await call(o.placement, 'GET', `/resource_providers/${host}`)).json;
  const oldUsage = (await call(o.placement, 'GET', '/usages?project_id=p-sbs', undefined, '1.38')).json;
  expect(oldUsage.usages.INSTANCE).toEqual({ consumer_count: 2, VCPU: 4, MEMORY_MB: 2048 });
  // bare metal (its items the same in both layouts) is served by this release already
  expect((await fetch(`${stack.baremetalUrl}/v1/nodes`, { headers: { 'x-openstack-ironic-api-version': '1.80' } })).status).toBe(200);

  // the deploy ends: the old release is gone, the migration opens
  await o.stop();
  old = undefined;
  const { migrateLayout, openMigration } = await import('../../../functions/store/layout/migrate.js');
  expect(await openMigration('deploy')).toBe(true);
  await migrateLayout({ deadline: Date.now() });
  forgetLayout();
  // every write of the old release, as it answered it
  const view = (await call(n, 'GET', `/resource_providers/${host}`)).json;
  expect(view).toEqual(oldView);
  expect((await call(n, 'GET', '/usages?project_id=p-sbs', undefined, '1.38')).json).toEqual(oldUsage);
  expect((await call(n, 'GET', `/allocations/${vm(2)}`, undefined, '1.38')).json).toEqual({ allocations: {} });
  // its own writes go on while the rest converts, with the generations the old release gave out
  expect((await claim(4, n)).status).toBe(204);
  let r = await migrateLayout({ deadline: Date.now() + 30_000 });
  while (!r.done) r = await migrateLayout({ deadline: Date.now() + 30_000 });
  const after = (await call(n, 'GET', `/resource_providers/${host}`)).json;
  expect(after.generation).toBe(oldView.generation + 1);
  expect((await call(n, 'GET', '/usages?project_id=p-sbs', undefined, '1.38')).json.usages.INSTANCE).toEqual({
    consumer_count: 3,
    VCPU: 6,
    MEMORY_MB: 3072,
  });
  expect(await readLayoutRecord()).toMatchObject({ version: 2, phase: 'complete' });
});
