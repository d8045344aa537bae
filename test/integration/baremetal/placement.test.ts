/**
 * Bare metal through Placement (BAREMETAL_SCHEDULER=placement, issue 25), through both
 * HTTP APIs on one table: every node is a resource provider as Nova's ironic driver
 * reports one, written with every node change; every allocation is a Placement consumer,
 * written with the reservation and removed with every release; candidates come from
 * the forest; a Placement client claiming a node's unit and a bare-metal allocation
 * racing for it: exactly one wins, in every interleaving; what follows the node is
 * refused to Placement writers. The shared check (agreement.ts) runs after every test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { servePlacementHere, type Api } from '../harness.js';
import { allocate, allocatingRecord, availableNode, startBaremetal, type BmApi } from './harness.js';
import { projectAggregate } from '../../../functions/bridge/shape.js';

let bm: BmApi;
let pl: Api;

beforeAll(async () => {
  bm = await startBaremetal({ BAREMETAL_SCHEDULER: 'placement' });
  pl = await servePlacementHere();
});
afterAll(async () => {
  await bm?.close();
  await pl?.close();
});

const inventory = async (rp: string) => (await pl.req('GET', `/resource_providers/${rp}/inventories`)).json;
const reservedOf = async (rp: string, rc: string) => (await inventory(rp)).inventories[rc]?.reserved;
const candidates = async (q: string) => Object.keys((await pl.req('GET', `/allocation_candidates?${q}`)).json.provider_summaries ?? {});
const claimBody = (rp: string, rc: string, project = 'nova-project') => ({
  allocations: { [rp]: { resources: { [rc]: 1 } } },
  project_id: project,
  user_id: 'nova-user',
  consumer_generation: null,
  consumer_type: 'INSTANCE',
});
async function provision(node: string, target: string) {
  const r = await bm.req('PUT', `/v1/nodes/${node}/states/provision`, { body: { target } });
  expect(r.status, r.text).toBe(202);
  await bm.settle();
}

describe('every node is a resource provider, written with every node change', () => {
  it("as Nova's ironic driver reports it: uuid and name the node's, one unit of CUSTOM_<CLASS>, reserved while it cannot be allocated", async () => {
    const c = await bm.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: 'bare-metal.gold', name: 'pl-n1' } });
    expect(c.status).toBe(201);
    const uuid = c.json.uuid as string;
    const rp = await pl.req('GET', `/resource_providers/${uuid}`);
    expect(rp.status).toBe(200);
    expect(rp.json).toMatchObject({ uuid, name: uuid, parent_provider_uuid: null, root_provider_uuid: uuid });
    expect((await inventory(uuid)).inventories).toEqual({
      CUSTOM_BARE_METAL_GOLD: { total: 1, reserved: 1, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0 },
    });
    const gen0 = rp.json.generation as number;
    // enroll -> manageable -> available, powered: allocatable, the unit free
    await provision(uuid, 'manage');
    expect(await reservedOf(uuid, 'CUSTOM_BARE_METAL_GOLD')).toBe(1);
    await provision(uuid, 'provide');
    expect(await reservedOf(uuid, 'CUSTOM_BARE_METAL_GOLD')).toBe(1); // power state unknown yet
    expect((await bm.req('PUT', `/v1/nodes/${uuid}/states/power`, { body: { target: 'power off' } })).status).toBe(202);
    await bm.settle();
    expect(await reservedOf(uuid, 'CUSTOM_BARE_METAL_GOLD')).toBe(0);
    expect(await candidates('resources=CUSTOM_BARE_METAL_GOLD:1')).toEqual([uuid]);
    // maintenance reserves it, and gives it back
    expect((await bm.req('PUT', `/v1/nodes/${uuid}/maintenance`, { body: { reason: 'fan' } })).status).toBe(202);
    expect(await reservedOf(uuid, 'CUSTOM_BARE_METAL_GOLD')).toBe(1);
    expect(await candidates('resources=CUSTOM_BARE_METAL_GOLD:1')).toEqual([]);
    expect((await bm.req('DELETE', `/v1/nodes/${uuid}/maintenance`)).status).toBe(202);
    expect(await reservedOf(uuid, 'CUSTOM_BARE_METAL_GOLD')).toBe(0);
    // the node's traits are the provider's; owner and lessee its project aggregates
    expect((await bm.req('PUT', `/v1/nodes/${uuid}/traits`, { body: { traits: ['CUSTOM_RAID5', 'HW_CPU_X86_AVX2'] } })).status).toBe(204);
    expect((await pl.req('GET', `/resource_providers/${uuid}/traits`)).json.traits.sort()).toEqual(['CUSTOM_RAID5', 'HW_CPU_X86_AVX2']);
    expect(await candidates('resources=CUSTOM_BARE_METAL_GOLD:1&required=CUSTOM_RAID5')).toEqual([uuid]);
    const patch = await bm.req('PATCH', `/v1/nodes/${uuid}`, {
      body: [
        { op: 'add', path: '/owner', value: 'proj-owner' },
        { op: 'add', path: '/lessee', value: 'proj-lessee' },
      ],
    });
    expect(patch.status).toBe(200);
    expect((await pl.req('GET', `/resource_providers/${uuid}/aggregates`)).json.aggregates.sort()).toEqual(
      [projectAggregate('proj-owner'), projectAggregate('proj-lessee')].sort(),
    );
    // a change Placement does not see writes nothing there
    const gen = (await pl.req('GET', `/resource_providers/${uuid}`)).json.generation as number;
    expect(gen).toBeGreaterThan(gen0);
    expect((await bm.req('PATCH', `/v1/nodes/${uuid}`, { body: [{ op: 'add', path: '/extra/k', value: 'v' }] })).status).toBe(200);
    expect((await pl.req('GET', `/resource_providers/${uuid}`)).json.generation).toBe(gen);
    // its class changes: so does its inventory; deleted, the provider goes too
    await provision(uuid, 'manage');
    expect((await bm.req('PATCH', `/v1/nodes/${uuid}`, { body: [{ op: 'replace', path: '/resource_class', value: 'silver' }] })).status).toBe(200);
    expect(Object.keys((await inventory(uuid)).inventories)).toEqual(['CUSTOM_SILVER']);
    expect((await bm.req('DELETE', `/v1/nodes/${uuid}`)).status).toBe(204);
    expect((await pl.req('GET', `/resource_providers/${uuid}`)).status).toBe(404);
  });
});

describe('every allocation is a Placement consumer, written with the reservation', () => {
  it('holds CUSTOM_<CLASS>: 1 on its node, in its owner project, type BAREMETAL; counted in /usages; released with the allocation', async () => {
    const n = await availableNode(bm, { resource_class: 'pl-gold' });
    expect((await bm.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'add', path: '/owner', value: 'proj-a' }] })).status).toBe(200);
    const counted = (await import('../../../functions/observability/counters.js')).listen();
    const a = await allocate(bm, { resource_class: 'pl-gold', owner: 'proj-a' });
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
    // the candidates came from the forest
    expect(counted.get('reserve.fromForest')).toBeGreaterThan(0);
    counted.stop();
    const cons = await pl.req('GET', `/allocations/${a.uuid}`, { version: '1.38' });
    expect(cons.json).toMatchObject({
      allocations: { [n.uuid]: { resources: { CUSTOM_PL_GOLD: 1 } } },
      project_id: 'proj-a',
      consumer_generation: 1,
      consumer_type: 'BAREMETAL',
    });
    const usages = await pl.req('GET', '/usages?project_id=proj-a', { version: '1.38' });
    expect(usages.json.usages).toEqual({ BAREMETAL: { consumer_count: 1, CUSTOM_PL_GOLD: 1 } });
    expect((await pl.req('GET', `/resource_providers/${n.uuid}/usages`)).json.usages).toEqual({ CUSTOM_PL_GOLD: 1 });
    // used by the allocation's consumer, not reserved as well (capacity 0 either way)
    expect(await reservedOf(n.uuid, 'CUSTOM_PL_GOLD')).toBe(0);
    expect(await candidates('resources=CUSTOM_PL_GOLD:1')).toEqual([]);
    // released: consumer, usage and reservation go in the same write
    expect((await bm.req('DELETE', `/v1/allocations/${a.uuid}`)).status).toBe(204);
    expect((await pl.req('GET', `/allocations/${a.uuid}`)).json.allocations).toEqual({});
    expect((await pl.req('GET', '/usages?project_id=proj-a', { version: '1.38' })).json.usages).toEqual({});
    expect(await reservedOf(n.uuid, 'CUSTOM_PL_GOLD')).toBe(0);
    expect(await candidates('resources=CUSTOM_PL_GOLD:1')).toEqual([n.uuid]);
  });

  it("a reservation planned on the forest's record carries its usage change in the change log: no process reads the provider again", async () => {
    const n = await availableNode(bm, { resource_class: 'pl-delta' });
    const since = Date.now() - 1;
    const a = await allocate(bm, { resource_class: 'pl-delta' });
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
    const naming = await logEntriesNaming(n.uuid, since);
    expect(naming).toEqual([{ reread: false, delta: { used: { CUSTOM_PL_DELTA: 1 }, generation: 1, allocations: 1 } }]);
  });

  it('a provider not marked as its node’s (as the forest cannot tell) fails the plan, is read again and marked with the reservation', async () => {
    const n = await availableNode(bm, { resource_class: 'pl-unmarked' });
    const { tableName } = await import('../../../functions/store/ddb/client.js');
    const { ddb } = await import('../../../functions/store/ddb/reads.js');
    const { UpdateCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { K } = await import('../../../functions/store/placement/keys.js');
    const { MANAGED_BY: NODE_ATTR } = await import('../../../functions/store/placement/provider-items.js');
    await ddb().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: K.providerState(n.uuid),
        UpdateExpression: 'REMOVE #bm',
        ExpressionAttributeNames: { '#bm': NODE_ATTR },
      }),
    );
    const a = await allocate(bm, { resource_class: 'pl-unmarked' });
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
    const state = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.providerState(n.uuid), ConsistentRead: true }));
    expect(state.Item?.[NODE_ATTR]).toBe(n.uuid);
    expect((await pl.req('GET', `/resource_providers/${n.uuid}/usages`)).json.usages).toEqual({ CUSTOM_PL_UNMARKED: 1 });
  });

  it("without an owner the consumer is the creating project's and user's", async () => {
    await availableNode(bm, { resource_class: 'pl-noowner' });
    const c = await bm.req('POST', '/v1/allocations', {
      body: { resource_class: 'pl-noowner' },
      headers: { 'X-Project-Id': 'proj-c', 'X-User-Id': 'user-c' },
    });
    expect(c.status).toBe(201);
    await bm.settle();
    const cons = (await pl.req('GET', `/allocations/${c.json.uuid}`, { version: '1.38' })).json;
    expect([cons.project_id, cons.user_id]).toEqual(['proj-c', 'user-c']);
  });

  it('a teardown, removing instance_uuid, deleting a node in maintenance: each releases the consumer with the node', async () => {
    // undeploy
    const n1 = await availableNode(bm, { resource_class: 'pl-rel' });
    const a1 = await allocate(bm, { resource_class: 'pl-rel', candidate_nodes: [n1.uuid] });
    await provision(n1.uuid, 'active');
    expect(await reservedOf(n1.uuid, 'CUSTOM_PL_REL')).toBe(1);
    await provision(n1.uuid, 'deleted');
    expect((await bm.req('GET', `/v1/allocations/${a1.uuid}`)).status).toBe(404);
    expect((await pl.req('GET', `/allocations/${a1.uuid}`)).json.allocations).toEqual({});
    expect(await reservedOf(n1.uuid, 'CUSTOM_PL_REL')).toBe(0);
    // instance_uuid removed
    const a2 = await allocate(bm, { resource_class: 'pl-rel', candidate_nodes: [n1.uuid] });
    expect(a2.state).toBe('active');
    expect((await bm.req('PATCH', `/v1/nodes/${n1.uuid}`, { body: [{ op: 'remove', path: '/instance_uuid' }] })).status).toBe(200);
    expect((await pl.req('GET', `/allocations/${a2.uuid}`)).json.allocations).toEqual({});
    // deleted in maintenance
    const a3 = await allocate(bm, { resource_class: 'pl-rel', candidate_nodes: [n1.uuid] });
    expect(a3.state).toBe('active');
    expect((await bm.req('PUT', `/v1/nodes/${n1.uuid}/maintenance`, { body: {} })).status).toBe(202);
    expect((await bm.req('DELETE', `/v1/nodes/${n1.uuid}`)).status).toBe(204);
    expect((await pl.req('GET', `/allocations/${a3.uuid}`)).json.allocations).toEqual({});
    expect((await pl.req('GET', `/resource_providers/${n1.uuid}`)).status).toBe(404);
  });

  it("a backfill is a consumer too; a backfill of Nova's instance takes over the instance's own consumer", async () => {
    const n = await availableNode(bm, { resource_class: 'pl-bf', name: 'pl-bf-node' });
    await provision(n.uuid, 'active');
    const r = await bm.req('POST', '/v1/allocations', { body: { node: 'pl-bf-node', owner: 'proj-bf' } });
    expect(r.status, r.text).toBe(201);
    expect((await pl.req('GET', `/allocations/${r.json.uuid}`)).json).toMatchObject({
      allocations: { [n.uuid]: { resources: { CUSTOM_PL_BF: 1 } } },
      project_id: 'proj-bf',
    });
    expect((await bm.req('DELETE', `/v1/allocations/${r.json.uuid}`)).status).toBe(409); // active node: Ironic's rule
    // as Nova deploys: claim the unit in Placement, set instance_uuid, deploy; then backfill
    const m = await availableNode(bm, { resource_class: 'pl-bf', name: 'pl-bf-nova' });
    const inst = randomUUID();
    expect((await pl.req('PUT', `/allocations/${inst}`, { body: claimBody(m.uuid, 'CUSTOM_PL_BF'), version: '1.38' })).status).toBe(204);
    expect((await bm.req('PATCH', `/v1/nodes/${m.uuid}`, { body: [{ op: 'add', path: '/instance_uuid', value: inst }] })).status).toBe(200);
    await provision(m.uuid, 'active');
    const b = await bm.req('POST', '/v1/allocations', { body: { node: 'pl-bf-nova' } });
    expect(b.status, b.text).toBe(201);
    expect(b.json.uuid).toBe(inst);
    expect((await pl.req('GET', `/allocations/${inst}`, { version: '1.38' })).json).toMatchObject({
      project_id: 'nova-project',
      consumer_type: 'INSTANCE',
    });
  });
});

describe('a Placement client and a bare-metal allocation racing for one node: exactly one wins', () => {
  async function freshNode(rc: string) {
    return (await availableNode(bm, { resource_class: rc })).uuid;
  }
  const RC = 'pl-race';
  const PRC = 'CUSTOM_PL_RACE';

  it('the Placement claim first, then the allocation (its candidates come from a forest that already shows the claim)', async () => {
    const node = await freshNode(RC);
    expect((await pl.req('PUT', `/allocations/${randomUUID()}`, { body: claimBody(node, PRC), version: '1.38' })).status).toBe(204);
    const a = await allocate(bm, { resource_class: RC, candidate_nodes: [node] });
    expect(a.state).toBe('error');
    expect(a.last_error).toBe(
      `Failed to process allocation ${a.uuid}: none of the requested nodes are available and match the resource class ${RC}.`,
    );
  });

  it('the allocation first, then the Placement claim (the unit is reserved and held)', async () => {
    const node = await freshNode(RC);
    expect((await allocate(bm, { resource_class: RC, candidate_nodes: [node] })).state).toBe('active');
    const c = await pl.req('PUT', `/allocations/${randomUUID()}`, { body: claimBody(node, PRC), version: '1.38' });
    expect(c.status).toBe(409);
    expect(c.json.errors[0].detail).toMatch(/exceed the capacity/);
  });

  it('the Placement claim lands between FindCandidates and ReserveNode (a stale candidate: the reservation loses)', async () => {
    const node = await freshNode(RC);
    const { findCandidates, reserve } = await import('../../../functions/conductor/allocate.js');
    const c = await bm.req('POST', '/v1/allocations', { body: { resource_class: RC, candidate_nodes: [node] } });
    await bm.settle(); // its own execution may have won already: use a fresh allocation's spec instead
    expect((await bm.req('DELETE', `/v1/allocations/${c.json.uuid}`)).status).toBe(204);
    const { executionInput } = await import('../../../functions/conductor/allocate.js');
    const { getAllocation, createAllocation } = await import('../../../functions/store/baremetal/allocations.js');
    const uuid = randomUUID();
    const exec = `manual-${uuid}`;
    const rec = await allocatingRecord(RC, { uuid, exec, candidate_nodes: [node] });
    expect(await createAllocation(rec)).toEqual({ ok: true });
    const found = await findCandidates(executionInput(rec, exec) as never);
    expect(found.candidates?.map(([u]) => u)).toEqual([node]);
    expect((await pl.req('PUT', `/allocations/${randomUUID()}`, { body: claimBody(node, PRC), version: '1.38' })).status).toBe(204);
    const out = await reserve(found);
    expect(out.outcome).toBe('failed');
    expect((await getAllocation(uuid))?.state).toBe('allocating');
    // the execution would now record the failure
    const { fail } = await import('../../../functions/conductor/allocate.js');
    await fail(out);
    expect((await getAllocation(uuid))?.state).toBe('error');
  });

  it('the reservation lands between the Placement claim’s read and its write (the claim is planned again, and refused)', async () => {
    const node = await freshNode(RC);
    const { readClaimState, writePlan } = await import('../../../functions/store/placement/allocations.js');
    const { claimAllocations } = await import('../../../functions/usecases/placement/allocations.js');
    const { planAllocations } = await import('../../../functions/core/placement/claim.js');
    const consumer = randomUUID();
    const req = {
      uuid: consumer,
      allocations: { [node]: { [PRC]: 1 } },
      project: 'p',
      user: 'u',
      type: 'INSTANCE',
      generation: { check: true as const, expected: null },
    };
    const st = await readClaimState([req]);
    const now = new Date().toISOString();
    const plan = planAllocations([req], st.states, st.providers, { missingClasses: new Set(), now });
    if ('error' in plan) throw new Error(plan.detail);
    expect((await allocate(bm, { resource_class: RC, candidate_nodes: [node] })).state).toBe('active');
    const { RETRY } = await import('../../../functions/store/ddb/retry.js');
    expect(await writePlan(plan, { now })).toBe(RETRY);
    const again = await claimAllocations([req]);
    expect(again).toMatchObject({ error: 'invalid_inventory' });
  });

  it('at the same time, many rounds: never both, never neither', async () => {
    let placementWins = 0;
    let allocationWins = 0;
    for (let round = 0; round < 8; round++) {
      const node = await freshNode(RC);
      const consumer = randomUUID();
      const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const [claim, created] = await Promise.all([
        delay(round % 4 === 0 ? 0 : Math.random() * 15).then(() =>
          pl.req('PUT', `/allocations/${consumer}`, { body: claimBody(node, PRC), version: '1.38' }),
        ),
        delay(round % 4 === 1 ? 0 : Math.random() * 15).then(() =>
          bm.req('POST', '/v1/allocations', { body: { resource_class: RC, candidate_nodes: [node] } }),
        ),
      ]);
      await bm.settle();
      const a = (await bm.req('GET', `/v1/allocations/${created.json.uuid}`)).json;
      const won = [claim.status === 204, a.state === 'active'];
      expect(won.filter(Boolean), `round ${round}: claim ${claim.status}, allocation ${a.state} ${a.last_error}`).toHaveLength(1);
      if (won[0]) placementWins++;
      else allocationWins++;
    }
    expect(placementWins + allocationWins).toBe(8);
  });
});

describe('the node named like an allocation (tried first)', () => {
  it('is looked up by concurrent allocations of one process together: a few reads, each answer its own', async () => {
    const named = await Promise.all(Array.from({ length: 4 }, (_, i) => availableNode(bm, { resource_class: 'pl-named', name: `pl-named-${i}` })));
    const { nodeUuidByNameShared } = await import('../../../functions/store/baremetal/nodes.js');
    const { ddbCallStacks } = await import('../../../functions/store/ddb/client.js');
    const commands: string[] = [];
    const name = `count-${Math.random()}`;
    const stacks = ddbCallStacks();
    for (const st of stacks)
      st.middlewareStack.add(
        (next, context) => async (args) => {
          commands.push(String((context as { commandName?: string }).commandName));
          return next(args);
        },
        { step: 'initialize', name },
      );
    let answers: Array<string | undefined>;
    try {
      const asked = [...named.map((n) => n.name!), ...Array.from({ length: 16 }, (_, i) => `pl-nameless-${i}`), named[0]!.name!];
      answers = await Promise.all(asked.map((n) => nodeUuidByNameShared(n)));
    } finally {
      for (const st of stacks) st.middlewareStack.remove(name);
    }
    expect(answers).toEqual([...named.map((n) => n.uuid), ...Array(16).fill(undefined), named[0]!.uuid]);
    // 21 questions: the first call, then one for all who asked while it was out
    expect(commands.filter((c) => c === 'BatchGetItemCommand').length).toBeLessThanOrEqual(2);
    expect(commands.filter((c) => c === 'GetItemCommand')).toEqual([]);
  });
});

describe('the forest every process keeps', () => {
  it('agrees with the table after all of the above (reservations and releases reach it as usage changes in the change log)', async () => {
    const { snapshot } = await import('../../../functions/store/placement/snapshot.js');
    const { scanAllProviders, readProviders } = await import('../../../functions/store/placement/providers.js');
    const { changelogEntries } = await logShape();
    const forest = await snapshot().fresh();
    const table = await readProviders((await scanAllProviders()).map((p) => p.record.uuid));
    expect(table.size).toBeGreaterThan(10);
    for (const [uuid, { record }] of table) {
      const f = forest.get(uuid);
      expect(f, uuid).toBeDefined();
      expect({ generation: f!.generation, usages: f!.usages, allocationCount: f!.allocationCount, inventories: f!.inventories }, uuid).toEqual({
        generation: record.generation,
        usages: record.usages,
        allocationCount: record.allocationCount,
        inventories: record.inventories,
      });
    }
    // a reservation of an available node, and its release, are carried as usage changes, not re-reads
    expect(changelogEntries.withDeltas).toBeGreaterThan(0);
  });
});

/** how many change-log entries carry usage changes (`d`), read straight from the log */
async function logShape() {
  const { readLogSince } = await import('../../../functions/store/placement/changelog.js');
  const { entries } = await readLogSince(Date.now() - 3_600_000);
  return { changelogEntries: { withDeltas: entries.filter((e) => e.deltas.length).length } };
}

/** the change-log entries since `since` that name provider `rp`: read again, or carrying its usage change */
async function logEntriesNaming(rp: string, since: number) {
  const { readLogSince } = await import('../../../functions/store/placement/changelog.js');
  const { entries } = await readLogSince(since);
  return entries
    .filter((e) => e.rps.includes(rp) || e.deltas.some(([u]) => u === rp))
    .map((e) => {
      const d = e.deltas.find(([u]) => u === rp)?.[1];
      return { reread: e.rps.includes(rp), delta: d ? { used: d.used, generation: d.generation, allocations: d.allocations } : undefined };
    });
}

describe('what follows a node is refused to Placement writers; claims are not', () => {
  it('inventory, traits, aggregates and deletion of a node provider: 409; a write that changes nothing passes', async () => {
    const n = await availableNode(bm, { resource_class: 'pl-guard' }, { traits: ['CUSTOM_G'] });
    const inv = await inventory(n.uuid);
    const put = (inventories: unknown) =>
      pl.req('PUT', `/resource_providers/${n.uuid}/inventories`, {
        body: { resource_provider_generation: inv.resource_provider_generation, inventories },
      });
    const bigger = await put({ CUSTOM_PL_GUARD: { ...inv.inventories.CUSTOM_PL_GUARD, total: 2 } });
    expect(bigger.status).toBe(409);
    expect(bigger.json.errors[0].detail).toContain(`it is bare-metal node ${n.uuid}`);
    expect((await put(inv.inventories)).status).toBe(200);
    const g = (await pl.req('GET', `/resource_providers/${n.uuid}`)).json.generation;
    expect(
      (
        await pl.req('PUT', `/resource_providers/${n.uuid}/traits`, {
          body: { resource_provider_generation: g, traits: ['CUSTOM_G', 'COMPUTE_NODE'] },
        })
      ).status,
    ).toBe(409);
    expect(
      (await pl.req('PUT', `/resource_providers/${n.uuid}/traits`, { body: { resource_provider_generation: g, traits: ['CUSTOM_G'] } })).status,
    ).toBe(200);
    expect((await pl.req('DELETE', `/resource_providers/${n.uuid}/traits`)).status).toBe(409);
    expect((await pl.req('DELETE', `/resource_providers/${n.uuid}/inventories`)).status).toBe(409);
    expect((await pl.req('DELETE', `/resource_providers/${n.uuid}/inventories/CUSTOM_PL_GUARD`)).status).toBe(409);
    expect((await pl.req('POST', `/resource_providers/${n.uuid}/inventories`, { body: { resource_class: 'VCPU', total: 4 } })).status).toBe(409);
    const g2 = (await pl.req('GET', `/resource_providers/${n.uuid}`)).json.generation;
    expect(
      (await pl.req('PUT', `/resource_providers/${n.uuid}/aggregates`, { body: { resource_provider_generation: g2, aggregates: [randomUUID()] } }))
        .status,
    ).toBe(409);
    expect((await pl.req('DELETE', `/resource_providers/${n.uuid}`)).status).toBe(409);
    // the node is unchanged in Placement: the shared check after this test says so too
    expect((await inventory(n.uuid)).inventories.CUSTOM_PL_GUARD.total).toBe(1);
  });

  it("a bare-metal allocation's consumer: its deletion, a change of it, giving another consumer its type: 409", async () => {
    const n = await availableNode(bm, { resource_class: 'pl-cons' });
    const a = await allocate(bm, { resource_class: 'pl-cons' });
    expect((await pl.req('DELETE', `/allocations/${a.uuid}`)).status).toBe(409);
    const cur = (await pl.req('GET', `/allocations/${a.uuid}`, { version: '1.38' })).json;
    const move = await pl.req('PUT', `/allocations/${a.uuid}`, {
      version: '1.38',
      body: {
        allocations: {},
        project_id: cur.project_id,
        user_id: cur.user_id,
        consumer_generation: cur.consumer_generation,
        consumer_type: 'BAREMETAL',
      },
    });
    expect(move.status).toBe(409);
    const other = await pl.req('PUT', `/allocations/${randomUUID()}`, {
      version: '1.38',
      body: { ...claimBody(n.uuid, 'CUSTOM_PL_CONS'), consumer_type: 'BAREMETAL' },
    });
    expect(other.status).toBe(409);
  });

  it('a node whose provider holds a Placement allocation is not deleted, as a provider with allocations is not', async () => {
    const n = await availableNode(bm, { resource_class: 'pl-del' });
    const consumer = randomUUID();
    expect((await pl.req('PUT', `/allocations/${consumer}`, { body: claimBody(n.uuid, 'CUSTOM_PL_DEL'), version: '1.38' })).status).toBe(204);
    const d = await bm.req('DELETE', `/v1/nodes/${n.uuid}`);
    expect(d.status).toBe(409);
    expect(d.fault).toBe(`Node ${n.uuid} is in use in Placement: its resource provider holds allocations of other consumers.`);
    expect((await pl.req('DELETE', `/allocations/${consumer}`)).status).toBe(204);
    expect((await bm.req('DELETE', `/v1/nodes/${n.uuid}`)).status).toBe(204);
  });
});
