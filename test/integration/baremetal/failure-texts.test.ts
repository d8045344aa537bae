/**
 * What an allocation's and a node's last_error tell project members when a step fails:
 * Ironic's own texts for what Ironic expects ("no available nodes match …", a driver's
 * HardwareError), and for anything else — here an AWS AccessDenied naming the account,
 * the role ARN and the table — only that it happened and the execution id under which
 * the detail was logged.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { availableNode, startBaremetal, waitFor, type BmApi } from './harness.js';
import { getAllocation } from '../../../functions/store/baremetal/allocations.js';
import { getNode } from '../../../functions/store/baremetal/nodes.js';
import { setExecutor } from '../../../functions/conductor/executor.js';
import { FAKE_HARDWARE, HardwareError, registerDriver } from '../../../functions/conductor/driver.js';
import { captureOutput, type CapturedOutput } from '../../capture-output.js';

const ARN = 'arn:aws:sts::123456789012:assumed-role/Berth-StepRole-1A2B3C/berth-reserve-node';
const DENIED = `User: ${ARN} is not authorized to perform: dynamodb:Query on resource: arn:aws:dynamodb:eu-west-1:123456789012:table/berth/index/gsi2`;
const LEAKS = ['123456789012', 'assumed-role', 'dynamodb:', 'not authorized'];

let api: BmApi;
let output: CapturedOutput;
beforeAll(async () => {
  // a driver that fails the way a real one reports to users, next to fake-hardware
  registerDriver({
    ...FAKE_HARDWARE,
    name: 'grumpy-hardware',
    verify: async () => {
      throw new HardwareError('The BMC did not answer within 60 seconds');
    },
  });
  api = await startBaremetal({ BAREMETAL_ENABLED_DRIVERS: 'fake-hardware,grumpy-hardware' });
  output = captureOutput();
});
afterEach(() => {
  api.runner.interceptor = undefined;
  setExecutor(api.runner);
});
afterAll(async () => {
  output.restore();
  await api.close();
});

/** Make one state of the executions `match` selects fail as a denied DynamoDB call would. */
function deny(state: string, match: (input: Record<string, unknown>) => boolean) {
  api.runner.interceptor = async (_m, s, input) => {
    if (s === state && match(input)) throw Object.assign(new Error(DENIED), { name: 'AccessDeniedException' });
  };
}

describe('last_error after a failed step', () => {
  it('an allocation: Ironic’s text when nothing fits, only the execution id when a step failed unexpectedly', async () => {
    const none = await api.req('POST', '/v1/allocations', { body: { resource_class: 'texts-none' } });
    await api.settle();
    expect((await api.req('GET', `/v1/allocations/${none.json.uuid}`)).json.last_error).toBe(
      `Failed to process allocation ${none.json.uuid}: no available nodes match the resource class texts-none.`,
    );

    await availableNode(api, { resource_class: 'texts-denied' });
    deny('FindCandidates', (input) => (input.spec as { resource_class?: string } | undefined)?.resource_class === 'texts-denied');
    const c = await api.req('POST', '/v1/allocations', { body: { resource_class: 'texts-denied' } });
    expect(c.status).toBe(201);
    await api.settle();
    const a = (await api.req('GET', `/v1/allocations/${c.json.uuid}`)).json;
    const exec = (await getAllocation(c.json.uuid))!.exec!;
    expect(a.state).toBe('error');
    expect(a.last_error).toBe(`Unexpected exception during allocation: An unexpected error occurred. Execution id: ${exec}`);
    for (const leak of LEAKS) expect(a.last_error).not.toContain(leak);
    // the detail is in the log, under that execution id
    const logged = output.text.split('\n').find((l) => l.includes('allocation failed unexpectedly') && l.includes(exec));
    expect(logged).toBeDefined();
    expect(logged).toContain('123456789012');
  });

  it('a node action: the driver’s HardwareError in its words, anything else only the execution id', async () => {
    const grumpy = await api.req('POST', '/v1/nodes', { body: { driver: 'grumpy-hardware', resource_class: 'texts-node' } });
    expect(grumpy.status).toBe(201);
    expect((await api.req('PUT', `/v1/nodes/${grumpy.json.uuid}/states/provision`, { body: { target: 'manage' } })).status).toBe(202);
    await api.settle();
    expect((await api.req('GET', `/v1/nodes/${grumpy.json.uuid}`)).json).toMatchObject({
      provision_state: 'enroll',
      last_error: 'The BMC did not answer within 60 seconds',
      reservation: null,
    });

    const n = await availableNode(api, { resource_class: 'texts-node' });
    let execution = '';
    api.runner.interceptor = async (_m, state, input) => {
      if (state === 'AdvanceNode' && input.node === n.uuid) {
        execution = String(input.execution);
        throw Object.assign(new Error(DENIED), { name: 'AccessDeniedException' });
      }
    };
    expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } })).status).toBe(202);
    await api.settle();
    await waitFor(async () => execution || undefined, 5_000, 'the node action');
    const node = (await api.req('GET', `/v1/nodes/${n.uuid}`)).json;
    expect(node).toMatchObject({ provision_state: 'deploy failed', reservation: null });
    expect(node.last_error).toBe(`An unexpected error occurred. Execution id: ${execution}`);
    for (const leak of LEAKS) expect(node.last_error).not.toContain(leak);
    expect(
      output.text.split('\n').some((l) => l.includes('node action failed unexpectedly') && l.includes(execution) && l.includes('123456789012')),
    ).toBe(true);
  });

  it('a node action run in-line (its execution could not start) reports the same way', async () => {
    const n = await availableNode(api, { resource_class: 'texts-inline' });
    setExecutor({
      start: async () => {
        throw new Error('StartExecution: connection reset');
      },
      status: (m, name) => api.runner.status(m, name),
    });
    // the in-line run meets the same denied call (the store, not the step, fails here)
    registerDriver({
      ...FAKE_HARDWARE,
      name: 'fake-hardware',
      deploy: async () => {
        throw Object.assign(new Error(DENIED), { name: 'AccessDeniedException' });
      },
    });
    try {
      expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } })).status).toBe(202);
    } finally {
      registerDriver(FAKE_HARDWARE);
    }
    const node = await getNode(n.uuid);
    expect(node?.provision_state).toBe('deploy failed');
    expect(node?.last_error).toMatch(/^An unexpected error occurred\. Execution id: n-[0-9a-f-]+$/);
    for (const leak of LEAKS) expect(node?.last_error).not.toContain(leak);
  });
});
