/**
 * Switching a deployment from the database scheduler to the placement scheduler
 * (store/baremetal/placement-migration.ts, the maintenance task and `npx berth
 * migrate-baremetal`): every node gets its provider, every active allocation its
 * consumer; resumable (a pass that dies is done again, nodes already done cost reads
 * only), idempotent, settle time respected, a provider that already exists adopted, a
 * double allocation from before reported and left alone. The shared check runs after
 * every test (agreement.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { servePlacementHere, type Api } from '../harness.js';
import { allocate, availableNode, startBaremetal, type BmApi } from './harness.js';

let bm: BmApi;
let pl: Api;
const before = process.env.BAREMETAL_SCHEDULER;

async function scheduler(mode: 'database' | 'placement', env: Record<string, string> = {}) {
  process.env.BAREMETAL_SCHEDULER = mode;
  Object.assign(process.env, env);
  (await import('../../../functions/config.js')).resetConfig();
  (await import('../../../functions/bridge/migration.js')).forgetSchedulerState();
}

/** A provider somebody made for a node through Placement before the switch (Nova's driver, say): the node's uuid and name, its own inventory of `rc`. */
async function providerMadeFor(node: string, rc: string, total: number) {
  expect((await pl.req('PUT', `/resource_classes/${rc}`, { version: '1.7' })).status).toBe(201);
  expect((await pl.req('POST', '/resource_providers', { body: { uuid: node, name: node } })).status).toBe(200);
  const inv = await pl.req('PUT', `/resource_providers/${node}/inventories`, {
    body: { resource_provider_generation: 0, inventories: { [rc]: { total } } },
  });
  expect(inv.status).toBe(200);
}

beforeAll(async () => {
  bm = await startBaremetal({ BAREMETAL_SCHEDULER: 'database' });
  pl = await servePlacementHere();
});
afterAll(async () => {
  await bm?.close();
  await pl?.close();
  delete process.env.BAREMETAL_MIGRATION_SETTLE_S;
  if (before === undefined) delete process.env.BAREMETAL_SCHEDULER;
  else process.env.BAREMETAL_SCHEDULER = before;
});

it('gives every node its provider and every active allocation its consumer, resumably and idempotently', async () => {
  const m = await import('../../../functions/bridge/migration.js');
  // a deployment running the database scheduler: nodes in every state, allocations
  const free = await availableNode(bm, { resource_class: 'mig-gold' }, { traits: ['CUSTOM_MIG'] });
  const held = await availableNode(bm, { resource_class: 'mig-gold' });
  const a = await allocate(bm, { resource_class: 'mig-gold', candidate_nodes: [held.uuid], owner: null });
  expect(a.state).toBe('active');
  const deployed = await availableNode(bm, { resource_class: 'mig-gold' });
  const d = await allocate(bm, { resource_class: 'mig-gold', candidate_nodes: [deployed.uuid] });
  expect((await bm.req('PUT', `/v1/nodes/${deployed.uuid}/states/provision`, { body: { target: 'active' } })).status).toBe(202);
  await bm.settle();
  const enrolled = (await bm.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: 'mig-silver' } })).json.uuid as string;
  // a provider somebody made for a node already (Nova, say), with an inventory of its own
  await providerMadeFor(free.uuid, 'CUSTOM_MIG_GOLD', 5);
  const nodes = [free.uuid, held.uuid, deployed.uuid, enrolled];

  // switched: until migrated, candidates come from the node index
  await scheduler('placement', { BAREMETAL_MIGRATION_SETTLE_S: '0' });
  expect(await m.candidatesFromForest()).toBe(false);
  // a pass that dies after two nodes...
  let seen = 0;
  await expect(
    m.migrateNodesToPlacement({
      deadline: Number.POSITIVE_INFINITY,
      onNode: () => {
        if (++seen === 2) throw new Error('the maintenance run timed out');
      },
    }),
  ).rejects.toThrow('timed out');
  expect(await m.candidatesFromForest()).toBe(false);
  // ... a pass stopped by its deadline keeps its place ...
  const partial = await m.migrateNodesToPlacement({ deadline: Date.now() - 1 });
  expect(partial).toMatchObject({ complete: false, partial: true, nodes: 0 });
  // ... and the next one finishes: the two done already are only read
  const done = await m.migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY });
  expect(done).toMatchObject({ complete: true, nodes: nodes.length, conflicts: [] });
  expect(done.synced).toBe(nodes.length - 2);
  expect(await m.candidatesFromForest()).toBe(true);
  // what it made: providers for every node (the existing one adopted, its inventory the node's), consumers
  for (const u of nodes) expect((await pl.req('GET', `/resource_providers/${u}`)).status).toBe(200);
  expect((await pl.req('GET', `/resource_providers/${free.uuid}/inventories`)).json.inventories).toEqual({
    CUSTOM_MIG_GOLD: { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0 },
  });
  expect((await pl.req('GET', `/resource_providers/${free.uuid}/traits`)).json.traits).toEqual(['CUSTOM_MIG']);
  for (const x of [a, d])
    expect((await pl.req('GET', `/allocations/${x.uuid}`, { version: '1.38' })).json).toMatchObject({ consumer_type: 'BAREMETAL' });
  // idempotent: complete stays complete; a forced new pass changes nothing
  expect(await m.migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY })).toMatchObject({ complete: true, nodes: 0 });
  const { tableName } = await import('../../../functions/store/ddb/client.js');
  const { ddb } = await import('../../../functions/store/ddb/reads.js');
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  await ddb().send(new DeleteCommand({ TableName: tableName(), Key: { pk: 'META', sk: 'baremetal-scheduler' } }));
  m.forgetSchedulerState();
  expect(await m.migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY })).toMatchObject({ complete: true, synced: 0, nodes: nodes.length });
  // the allocation made before the switch is released through both
  expect((await bm.req('DELETE', `/v1/allocations/${a.uuid}`)).status).toBe(204);
  expect((await pl.req('GET', `/allocations/${a.uuid}`)).json.allocations).toEqual({});
});

it('completes only once the switch has settled; meanwhile allocations still work (and create what they need)', async () => {
  const m = await import('../../../functions/bridge/migration.js');
  await scheduler('database');
  const n = await availableNode(bm, { resource_class: 'mig-settle' });
  const { tableName } = await import('../../../functions/store/ddb/client.js');
  const { ddb } = await import('../../../functions/store/ddb/reads.js');
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  await ddb().send(new DeleteCommand({ TableName: tableName(), Key: { pk: 'META', sk: 'baremetal-scheduler' } }));
  await scheduler('placement', { BAREMETAL_MIGRATION_SETTLE_S: '3600' });
  // the node has no provider yet: the reservation creates it in its own transaction
  const a = await allocate(bm, { resource_class: 'mig-settle' });
  expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
  const r = await m.migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY });
  expect(r).toMatchObject({ complete: false, settling: true });
  expect(await m.candidatesFromForest()).toBe(false);
  await scheduler('placement', { BAREMETAL_MIGRATION_SETTLE_S: '0' });
  expect(await m.migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY })).toMatchObject({ complete: true });
  expect((await bm.req('DELETE', `/v1/allocations/${a.uuid}`)).status).toBe(204);
});

it('`npx berth migrate-baremetal`: a double allocation from before the switch is reported and left as it is', async () => {
  await scheduler('database');
  const { tableName } = await import('../../../functions/store/ddb/client.js');
  const { ddb } = await import('../../../functions/store/ddb/reads.js');
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  await ddb().send(new DeleteCommand({ TableName: tableName(), Key: { pk: 'META', sk: 'baremetal-scheduler' } }));
  // Nova claimed a node's provider while the bare-metal API allocated the node too (two databases, before the switch)
  const n = await availableNode(bm, { resource_class: 'mig-double' });
  await providerMadeFor(n.uuid, 'CUSTOM_MIG_DOUBLE', 1);
  const nova = randomUUID();
  const claim = { allocations: { [n.uuid]: { resources: { CUSTOM_MIG_DOUBLE: 1 } } }, project_id: 'p', user_id: 'u', consumer_generation: null };
  expect((await pl.req('PUT', `/allocations/${nova}`, { body: claim, version: '1.28' })).status).toBe(204);
  const a = await allocate(bm, { resource_class: 'mig-double' });
  expect(a.state).toBe('active');
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((s: string) => {
    lines.push(String(s));
    return true;
  }) as typeof process.stdout.write;
  let code: number;
  try {
    code = await (await import('../../../cli/migrate-baremetal.js')).migrateBaremetalCommand(['--settle', '0']);
  } finally {
    process.stdout.write = write;
  }
  expect(code).toBe(0);
  const out = lines.join('');
  expect(out).toContain(`1 node(s) hold a bare-metal allocation while another Placement consumer holds their provider (left as they are): ${n.uuid}`);
  expect(out).toMatch(/done in .* s: \d+ node\(s\) brought into agreement/);
  // left as it was: the allocation has no consumer, Nova's consumer holds the unit
  expect((await pl.req('GET', `/allocations/${a.uuid}`)).json.allocations).toEqual({});
  // resolved by hand (the operator deletes one side), the node agrees again
  expect((await bm.req('PUT', `/v1/nodes/${n.uuid}/maintenance`, { body: {} })).status).toBe(202);
  expect((await bm.req('DELETE', `/v1/allocations/${a.uuid}`)).status).toBe(204);
  expect((await pl.req('DELETE', `/allocations/${nova}`)).status).toBe(204);
  expect((await bm.req('DELETE', `/v1/nodes/${n.uuid}/maintenance`)).status).toBe(202);
});
