/**
 * Bounded work in the allocation state machine: a request's candidate_nodes, traits
 * and owner are bounded (a 400 in Ironic's format beyond, nothing stored), an execution
 * carrying only the first MAX_CANDIDATES fitting nodes still reaches the others, and
 * orphan recovery resumes an allocation or a node action at most BAREMETAL_MAX_RESUMES
 * times, then fails it with a last_error that says so.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { allocatingRecord, availableNode, startBaremetal, waitFor, type BmApi } from './harness.js';
import { ALLOCATION_LIMITS } from '../../../functions/core/baremetal/allocations.js';
import { createAllocation, getAllocation } from '../../../functions/store/baremetal/allocations.js';
import { MAX_ITEM_BYTES } from '../../../functions/store/baremetal/keys.js';
import { reserve, type Candidate } from '../../../functions/conductor/allocate.js';
import { recoverOrphanAllocations, recoverStaleNodeActions } from '../../../functions/maintenance/orphans.js';
import { setExecutor, type Executor } from '../../../functions/conductor/executor.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal({ BAREMETAL_MAX_RESUMES: '2' });
});
afterEach(() => {
  api.runner.interceptor = undefined;
  setExecutor(api.runner);
});
afterAll(async () => api.close());

const listAll = async () => (await api.req('GET', '/v1/allocations')).json.allocations.map((a: { uuid: string }) => a.uuid).sort();

describe('allocation request bounds', () => {
  it('candidate_nodes, traits and owner beyond their bounds: 400 in Ironic’s format, nothing stored', async () => {
    const n = await availableNode(api, { resource_class: 'bounds-rc' });
    const before = await listAll();
    // ~4 MB of one node named again and again: accepted before, pushing the execution past 256 KB
    const huge = Array(100_000).fill(n.uuid);
    const r1 = await api.req('POST', '/v1/allocations', { body: { resource_class: 'bounds-rc', candidate_nodes: huge } });
    expect(r1.status, r1.text.slice(0, 300)).toBe(400);
    expect(r1.fault).toBe(
      `Invalid input for field/attribute candidate_nodes. 100000 nodes given, at most ${ALLOCATION_LIMITS.candidateNodes} are allowed.`,
    );
    expect(r1.text.length).toBeLessThan(500);
    const over = Array(ALLOCATION_LIMITS.candidateNodes + 1).fill(n.uuid);
    expect((await api.req('POST', '/v1/allocations', { body: { resource_class: 'bounds-rc', candidate_nodes: over } })).status).toBe(400);
    const traits = Array.from({ length: ALLOCATION_LIMITS.traits + 1 }, (_, i) => `CUSTOM_T${i}`);
    const r2 = await api.req('POST', '/v1/allocations', { body: { resource_class: 'bounds-rc', traits } });
    expect(r2.status).toBe(400);
    expect(r2.fault).toContain('field/attribute traits');
    const r3 = await api.req('POST', '/v1/allocations', { body: { resource_class: 'bounds-rc', owner: 'o'.repeat(ALLOCATION_LIMITS.owner + 1) } });
    expect(r3.status).toBe(400);
    expect(r3.fault).toContain('field/attribute owner');
    expect(await listAll()).toEqual(before);
    // at the bounds: accepted, and it works
    const at = Array(ALLOCATION_LIMITS.candidateNodes).fill(n.uuid);
    const ok = await api.req('POST', '/v1/allocations', { body: { resource_class: 'bounds-rc', candidate_nodes: at } });
    expect(ok.status, ok.text.slice(0, 300)).toBe(201);
    await api.settle();
    expect((await api.req('GET', `/v1/allocations/${ok.json.uuid}`)).json).toMatchObject({ state: 'active', node_uuid: n.uuid });
    const owned = await api.req('POST', '/v1/allocations', { body: { resource_class: 'bounds-rc', owner: 'o'.repeat(ALLOCATION_LIMITS.owner) } });
    expect(owned.status, owned.text.slice(0, 300)).toBe(201);
    await api.settle();
  });

  it('an execution that carries only some of the fitting nodes still reaches the others', async () => {
    const rc = 'topup-rc';
    const nodes = [];
    for (let i = 0; i < 4; i++) nodes.push(await availableNode(api, { resource_class: rc }));
    // three of them are taken by others meanwhile
    for (let i = 0; i < 3; i++) {
      const c = await api.req('POST', '/v1/allocations', { body: { resource_class: rc, candidate_nodes: [nodes[i]!.uuid] } });
      expect(c.status).toBe(201);
    }
    await api.settle();
    const seqOf = async (u: string) => Number((await import('../../../functions/store/baremetal/nodes.js').then((m) => m.getNode(u)))!.seq);
    const carried: Candidate[] = [];
    for (const n of nodes.slice(0, 3)) carried.push([n.uuid, await seqOf(n.uuid)]);
    // an allocation whose execution carried the three taken nodes only, more fitting ones left behind
    const a = await allocatingRecord(rc, { exec: `a-topup-${randomUUID().slice(0, 8)}` });
    expect(await createAllocation(a)).toEqual({ ok: true });
    const spec = { uuid: a.uuid, name: null, resource_class: rc, traits: [], candidate_nodes: [], owner: null, seq: a.seq };
    const without = await reserve({ allocation: a.uuid, execution: a.exec!, spec, candidates: carried });
    expect(without.outcome).toBe('failed');
    const topped = await reserve({ allocation: a.uuid, execution: a.exec!, spec, candidates: carried, more: true });
    expect(topped).toMatchObject({ outcome: 'reserved', node: nodes[3]!.uuid });
    expect((await getAllocation(a.uuid))?.node_uuid).toBe(nodes[3]!.uuid);
  });
});

describe('records too large to store', () => {
  it('a node or allocation DynamoDB could not hold is a 400, nothing stored (was a 500)', async () => {
    const big = 'x'.repeat(MAX_ITEM_BYTES + 1);
    const before = (await api.req('GET', '/v1/nodes')).json.nodes.length;
    const n = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', extra: { a: big } } });
    expect(n.status, n.text.slice(0, 300)).toBe(400);
    expect(n.fault).toMatch(/^The node [0-9a-f-]+ would take \d+ bytes to store, more than the 358400 a node may take/);
    expect((await api.req('GET', '/v1/nodes')).json.nodes.length).toBe(before);
    const a = await api.req('POST', '/v1/allocations', { body: { resource_class: 'big-rc', extra: { a: big } } });
    expect(a.status, a.text.slice(0, 300)).toBe(400);
    expect(a.fault).toContain('more than the 358400 an allocation may take');
    // an existing node: a patch, and a deploy's config drive, that would not fit change nothing
    const ok = await availableNode(api, { resource_class: 'big-rc', name: 'big-node' });
    const patch = await api.req('PATCH', '/v1/nodes/big-node', { body: [{ op: 'add', path: '/instance_info/image', value: big }] });
    expect(patch.status).toBe(400);
    const deploy = await api.req('PUT', '/v1/nodes/big-node/states/provision', { body: { target: 'active', configdrive: big } });
    expect(deploy.status).toBe(400);
    const node = (await api.req('GET', `/v1/nodes/${ok.uuid}`)).json;
    expect(node).toMatchObject({ provision_state: 'available', reservation: null, instance_info: {} });
  });
});

describe('orphan recovery gives up after BAREMETAL_MAX_RESUMES resumes', () => {
  it('an allocation whose executions never run: resumed twice, then error with a clear last_error', async () => {
    await availableNode(api, { resource_class: 'resume-rc' });
    const lost: Executor = {
      start: async () => {
        throw new Error('StartExecution: input too large');
      },
      status: (m, name) => api.runner.status(m, name),
    };
    setExecutor(lost);
    const c = await api.req('POST', '/v1/allocations', { body: { resource_class: 'resume-rc' } });
    expect(c.status).toBe(201);
    const reports = [];
    for (let i = 0; i < 3; i++) reports.push(await recoverOrphanAllocations({ graceMs: 0 }));
    expect(reports.map((r) => [r.failedStarts, r.abandoned])).toEqual([
      [1, 0],
      [1, 0],
      [0, 1],
    ]);
    const a = (await api.req('GET', `/v1/allocations/${c.json.uuid}`)).json;
    expect(a).toMatchObject({ state: 'error', node_uuid: null });
    expect(a.last_error).toBe(
      `Failed to process allocation ${c.json.uuid}: its processing stopped before it finished 3 times (resumed 2 times by orphan recovery); giving up.`,
    );
    expect((await recoverOrphanAllocations({ graceMs: 0 })).checked).toBe(0);
  });

  it('a node action whose executions keep dying: resumed twice, then the failure transition, unlocked', async () => {
    const n = await availableNode(api, { resource_class: 'resume-node-rc' });
    const started: string[] = [];
    const hangs: Array<() => void> = [];
    api.runner.interceptor = async (_m, state, input) => {
      if (state === 'AdvanceNode' && input.node === n.uuid) {
        started.push(String(input.execution));
        await new Promise<void>((r) => hangs.push(r));
      }
    };
    /** the worker of the n-th execution dies */
    const dies = async (nth: number) => {
      await waitFor(async () => (started.length === nth ? true : undefined), 5_000, `execution ${nth}`);
      expect(api.runner.abort(started[nth - 1]!)).toBe(true);
    };
    expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } })).status).toBe(202);
    await dies(1);
    expect(await recoverStaleNodeActions({ graceMs: 0 })).toMatchObject({ resumed: 1 });
    await dies(2);
    expect(await recoverStaleNodeActions({ graceMs: 0 })).toMatchObject({ resumed: 1 });
    await dies(3);
    expect(await recoverStaleNodeActions({ graceMs: 0 })).toMatchObject({ resumed: 0, abandoned: 1 });
    // the dead workers wake up: none of them holds the lock any more
    for (const h of hangs) h();
    await api.settle();
    const node = (await api.req('GET', `/v1/nodes/${n.uuid}`)).json;
    expect(node).toMatchObject({ provision_state: 'deploy failed', reservation: null });
    expect(node.last_error).toBe('its processing stopped before it finished 3 times (resumed 2 times by orphan recovery); giving up');
    expect((await recoverStaleNodeActions({ graceMs: 0 })).checked).toBe(0);
  });
});
