/**
 * Fault tests for orphaned allocations (seed 003, "HA and takeover"): processing is
 * killed mid-way or never starts, the maintenance task's recovery resumes it, and the
 * allocation ends active or error — never stuck. Concurrent recoverers: exactly one
 * wins. A killed worker that wakes up after the takeover cannot reserve anything.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { availableNode, startBaremetal, waitFor, type BmApi } from './harness.js';
import { recoverOrphanAllocations, recoverStaleNodeActions } from '../../../functions/maintenance/orphans.js';
import { runMaintenance } from '../../../functions/maintenance/handler.js';
import { getAllocation } from '../../../functions/store/baremetal/allocations.js';
import { setExecutor, type Executor } from '../../../functions/conductor/executor.js';
import { resetConfig } from '../../../functions/config.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterEach(() => {
  api.runner.interceptor = undefined;
  setExecutor(api.runner);
});
afterAll(async () => api.close());

/** Hold the first execution for resource class `rc` when it reaches `state`; returns it and a release. */
function holdAt(rc: string, state: string) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const held: { execution?: string } = {};
  api.runner.interceptor = async (_m, s, input) => {
    if (s === state && (input.spec as { resource_class?: string } | undefined)?.resource_class === rc && !held.execution) {
      held.execution = String(input.execution);
      await released;
    }
  };
  return { held, release };
}

async function post(body: Record<string, unknown>): Promise<string> {
  const r = await api.req('POST', '/v1/allocations', { body });
  expect(r.status).toBe(201);
  return r.json.uuid;
}

describe('orphan recovery', () => {
  it('resumes an allocation whose execution was killed mid-way; the killed worker cannot write afterwards', async () => {
    const n = await availableNode(api, { resource_class: 'orph-rc' });
    const { held, release } = holdAt('orph-rc', 'ReserveNode');
    const uuid = await post({ resource_class: 'orph-rc' });
    await waitFor(async () => held.execution, 10_000, 'the execution to reach ReserveNode');
    // the worker dies: Step Functions (here: the local runner) stops the execution
    expect(api.runner.abort(held.execution!)).toBe(true);
    expect(await api.runner.status('allocation', held.execution!)).toBe('ended');
    expect((await getAllocation(uuid))?.state).toBe('allocating');
    // a fresh allocation is left alone for the grace period
    expect((await recoverOrphanAllocations({ graceMs: 60_000 })).resumed).toBe(0);
    api.runner.interceptor = undefined;
    const report = await recoverOrphanAllocations({ graceMs: 0 });
    expect(report).toMatchObject({ resumed: 1, lost: 0 });
    await api.settle();
    const a = (await api.req('GET', `/v1/allocations/${uuid}`)).json;
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
    const stored = await getAllocation(uuid);
    expect(stored!.exec).not.toBe(held.execution);
    // the killed worker's step now runs with its stale execution name: nothing happens
    release();
    await api.settle();
    expect((await api.req('GET', `/v1/nodes/${n.uuid}`)).json.instance_uuid).toBe(uuid);
    expect((await api.req('GET', `/v1/allocations/${uuid}`)).json.state).toBe('active');
  });

  it('resumes an allocation whose execution never started (StartExecution lost)', async () => {
    const n = await availableNode(api, { resource_class: 'lost-rc' });
    const failing: Executor = {
      start: async () => {
        throw new Error('StartExecution: connection reset');
      },
      status: (m, name) => api.runner.status(m, name),
    };
    setExecutor(failing);
    const uuid = await post({ resource_class: 'lost-rc' });
    setExecutor(api.runner);
    expect((await api.req('GET', `/v1/allocations/${uuid}`)).json.state).toBe('allocating');
    const stored = await getAllocation(uuid);
    expect(await api.runner.status('allocation', stored!.exec!)).toBe('unknown');
    // the scheduled maintenance function runs every task, ours included
    process.env.BAREMETAL_ORPHAN_GRACE_S = '0';
    resetConfig();
    try {
      const reports = await runMaintenance(10_000);
      expect(reports.find((r) => r.task === 'baremetal-orphan-allocations')).toMatchObject({ resumed: 1 });
    } finally {
      delete process.env.BAREMETAL_ORPHAN_GRACE_S;
      resetConfig();
    }
    await api.settle();
    expect((await api.req('GET', `/v1/allocations/${uuid}`)).json).toMatchObject({ state: 'active', node_uuid: n.uuid });
  });

  it('two recoverers racing for the same orphan: exactly one takes it over and one execution runs', async () => {
    await availableNode(api, { resource_class: 'twin-rc' });
    const { held, release } = holdAt('twin-rc', 'FindCandidates');
    const uuid = await post({ resource_class: 'twin-rc' });
    await waitFor(async () => held.execution, 10_000, 'the execution to start');
    api.runner.abort(held.execution!);
    api.runner.interceptor = undefined;
    release();
    const starts: string[] = [];
    const counting: Executor = {
      start: async (m, name, input) => {
        starts.push(name);
        return api.runner.start(m, name, input);
      },
      status: (m, name) => api.runner.status(m, name),
    };
    setExecutor(counting);
    const [r1, r2, r3] = await Promise.all([0, 1, 2].map(() => recoverOrphanAllocations({ graceMs: 0 })));
    expect(r1!.resumed + r2!.resumed + r3!.resumed).toBe(1);
    // the others either lost the conditional write or already saw the new execution
    // running (which of the two depends on timing: both may see it running)
    expect(r1!.lost + r2!.lost + r3!.lost + r1!.skipped + r2!.skipped + r3!.skipped).toBe(2);
    expect(starts).toHaveLength(1);
    await api.settle();
    const a = (await api.req('GET', `/v1/allocations/${uuid}`)).json;
    expect(a.state).toBe('active');
    expect((await getAllocation(uuid))!.exec).toBe(starts[0]);
  });

  it('a resumed allocation with nothing to take ends in error, not stuck', async () => {
    const { held, release } = holdAt('empty-rc', 'FindCandidates');
    const uuid = await post({ resource_class: 'empty-rc' });
    await waitFor(async () => held.execution, 10_000, 'the execution to start');
    api.runner.abort(held.execution!);
    api.runner.interceptor = undefined;
    release();
    expect((await recoverOrphanAllocations({ graceMs: 0 })).resumed).toBeGreaterThanOrEqual(1);
    await api.settle();
    const a = (await api.req('GET', `/v1/allocations/${uuid}`)).json;
    expect(a.state).toBe('error');
    expect(a.last_error).toBe(`Failed to process allocation ${uuid}: no available nodes match the resource class empty-rc.`);
    // nothing is left allocating
    expect((await api.req('GET', '/v1/allocations?state=allocating')).json.allocations).toEqual([]);
  });

  it('leaves running executions alone', async () => {
    await availableNode(api, { resource_class: 'busy-rc' });
    const { held, release } = holdAt('busy-rc', 'FindCandidates');
    const uuid = await post({ resource_class: 'busy-rc' });
    await waitFor(async () => held.execution, 10_000, 'the execution to start');
    const report = await recoverOrphanAllocations({ graceMs: 0 });
    expect(report.resumed).toBe(0);
    expect(report.skipped).toBeGreaterThanOrEqual(1);
    api.runner.interceptor = undefined;
    release();
    await api.settle();
    expect((await api.req('GET', `/v1/allocations/${uuid}`)).json.state).toBe('active');
    expect((await getAllocation(uuid))!.exec).toBe(held.execution);
  });

  it('resumes a node action whose execution died, so the node does not stay locked', async () => {
    const n = await availableNode(api, { resource_class: 'stuck-rc' });
    let release: () => void = () => undefined;
    let held: string | undefined;
    api.runner.interceptor = async (_m, state, input) => {
      if (state === 'AdvanceNode' && input.node === n.uuid && !held) {
        held = String(input.execution);
        await new Promise<void>((r) => (release = r));
      }
    };
    expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } })).status).toBe(202);
    await waitFor(async () => held, 10_000, 'the node action to start');
    api.runner.abort(held!);
    api.runner.interceptor = undefined;
    const stuck = (await api.req('GET', `/v1/nodes/${n.uuid}`)).json;
    expect(stuck).toMatchObject({ provision_state: 'deploying', reservation: 'berth' });
    expect((await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'add', path: '/extra/x', value: 1 }] })).status).toBe(409);
    expect((await recoverStaleNodeActions({ graceMs: 60_000 })).resumed).toBe(0);
    const report = await recoverStaleNodeActions({ graceMs: 0 });
    expect(report).toMatchObject({ resumed: 1 });
    await api.settle();
    expect((await api.req('GET', `/v1/nodes/${n.uuid}`)).json).toMatchObject({
      provision_state: 'active',
      target_provision_state: null,
      reservation: null,
    });
    // the dead worker wakes up: its lock is gone, it changes nothing
    release();
    await api.settle();
    expect((await api.req('GET', `/v1/nodes/${n.uuid}`)).json).toMatchObject({ provision_state: 'active', reservation: null });
    expect((await recoverStaleNodeActions({ graceMs: 0 })).checked).toBe(0);
  });
});
