/**
 * openstacksdk's allocation tests make a node allocatable by powering it off and then,
 * without waiting, create allocations for it. Ironic 21.4 passes every run: the power
 * action's result is there when the allocation looks for nodes. Here the pattern is
 * repeated many times (a fresh node whose power state is unknown each round, the power
 * request, then allocations at once); no allocation may fail for want of a node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableNode, startBaremetal, type BmApi } from './harness.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api.close());

const ROUNDS = 40;

describe('a power action, then allocations at once', () => {
  it(`${ROUNDS} rounds: the allocation always finds the node the power action made allocatable`, async () => {
    const failures: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const rc = `power-race-${i}`;
      // available, but power state unknown: not allocatable until the power action lands
      const node = await availableNode(api, { resource_class: rc }, { power: false });
      const power = await api.req('PUT', `/v1/nodes/${node.uuid}/states/power`, { body: { target: 'power off' } });
      expect(power.status, power.text).toBe(202);
      // at once, as the SDK's test does: one allocation that must get the node, one that cannot
      const [ok, none] = await Promise.all([
        api.req('POST', '/v1/allocations', { body: { resource_class: rc } }),
        api.req('POST', '/v1/allocations', { body: { resource_class: `${rc}-none` } }),
      ]);
      expect([ok.status, none.status], ok.text + none.text).toEqual([201, 201]);
      await api.settle();
      const a = (await api.req('GET', `/v1/allocations/${ok.json.uuid}`)).json;
      if (a.state !== 'active' || a.node_uuid !== node.uuid) failures.push(`round ${i}: ${a.state} ${a.last_error}`);
      const b = (await api.req('GET', `/v1/allocations/${none.json.uuid}`)).json;
      expect(b.state).toBe('error');
      expect(b.last_error).toBe(`Failed to process allocation ${b.uuid}: no available nodes match the resource class ${rc}-none.`);
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
