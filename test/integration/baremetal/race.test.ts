/**
 * Many allocations racing for few nodes: every node is reserved at most once, every
 * allocation ends active or error, and the node and allocation records agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableNode, startBaremetal, type BmApi } from './harness.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api.close());

async function makeNodes(rc: string, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, (_, j) => availableNode(api, { resource_class: rc, name: `${rc}-${i + j}` })),
    );
    out.push(...batch.map((n) => n.uuid));
  }
  return out;
}

async function race(rc: string, nodes: number, allocations: number) {
  const uuids = await makeNodes(rc, nodes);
  const t0 = performance.now();
  const created = await Promise.all(
    Array.from({ length: allocations }, (_, i) => api.req('POST', '/v1/allocations', { body: { resource_class: rc, name: `${rc}-a${i}` } })),
  );
  expect(created.map((c) => c.status)).toEqual(Array(allocations).fill(201));
  await api.settle();
  const settleMs = performance.now() - t0;
  const all = (await api.req('GET', `/v1/allocations?resource_class=${rc}`)).json.allocations as any[];
  expect(all).toHaveLength(allocations);
  const active = all.filter((a) => a.state === 'active');
  const errors = all.filter((a) => a.state === 'error');
  expect(active).toHaveLength(nodes);
  expect(errors).toHaveLength(allocations - nodes);
  // no node double-booked
  expect(new Set(active.map((a) => a.node_uuid)).size).toBe(nodes);
  expect(new Set(active.map((a) => a.node_uuid))).toEqual(new Set(uuids));
  // each node points back at exactly its allocation
  const byNode = new Map(active.map((a) => [a.node_uuid, a.uuid]));
  const listed = (await api.req('GET', `/v1/nodes?resource_class=${rc}&fields=uuid,instance_uuid,allocation_uuid`)).json.nodes as any[];
  expect(listed).toHaveLength(nodes);
  for (const n of listed) {
    expect(n.instance_uuid).toBe(byNode.get(n.uuid));
    expect(n.allocation_uuid).toBe(n.instance_uuid);
  }
  // the losers carry Ironic's texts and no node
  for (const e of errors) {
    expect(e.node_uuid).toBeNull();
    expect(e.last_error).toMatch(
      new RegExp(
        `^Failed to process allocation ${e.uuid}: (all nodes were filtered out during reservation|could not reserve any of \\d+ suitable nodes|no available nodes match the resource class ${rc})\\.$`,
      ),
    );
  }
  return settleMs;
}

describe('allocation races', () => {
  it('200 parallel allocations for 50 matching nodes: exactly 50 active, 150 error, no double booking', async () => {
    const ms = await race('race-rc', 50, 200);
    process.stdout.write(`[race] 200 allocations / 50 nodes settled in ${ms.toFixed(0)} ms\n`);
  }, 300_000);

  it("40 parallel allocations for 10 nodes settle well under Ironic's 25-34 s", async () => {
    const ms = await race('small-rc', 10, 40);
    process.stdout.write(`[race] 40 allocations / 10 nodes settled in ${ms.toFixed(0)} ms\n`);
    expect(ms).toBeLessThan(10_000);
  }, 300_000);
});
