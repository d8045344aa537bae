/**
 * A reservation holds its node first (store/baremetal/allocations.ts holdNode), as
 * Ironic's allocation takes the node's lock: of many allocations racing for a node the
 * losers lose on that one write, a node another execution holds is retried later
 * (Ironic's NodeLocked), a hold left behind expires, and none of it ever shows.
 * Runs with both schedulers (scripts/test-all.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { allocate, availableNode, startBaremetal, type BmApi } from './harness.js';
import { ddbCallStacks, tableName } from '../../../functions/store/ddb/client.js';
import { ddb } from '../../../functions/store/ddb/reads.js';
import { BK, HOLD, HOLD_UNTIL } from '../../../functions/store/baremetal/keys.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api?.close());

async function holdAs(node: string, exec: string, untilMs: number) {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: BK.node(node),
      UpdateExpression: 'SET #h = :h, #u = :u',
      ExpressionAttributeNames: { '#h': HOLD, '#u': HOLD_UNTIL },
      ExpressionAttributeValues: { ':h': exec, ':u': untilMs },
    }),
  );
}

async function holdOf(node: string): Promise<{ hold?: unknown; until?: unknown }> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: BK.node(node), ConsistentRead: true }));
  return { hold: r.Item?.[HOLD], until: r.Item?.[HOLD_UNTIL] };
}

describe('a reservation holds its node first', () => {
  it('a node another execution holds is not reserved: retried as Ironic retries a locked node, then given up with its text', async () => {
    const n = await availableNode(api, { resource_class: 'hold-live' });
    await holdAs(n.uuid, 'another-execution', Date.now() + 120_000);
    const a = await allocate(api, { resource_class: 'hold-live', candidate_nodes: [n.uuid] });
    expect(a.state).toBe('error');
    expect(a.last_error).toBe(`Failed to process allocation ${a.uuid}: could not reserve any of 1 suitable nodes.`);
    const node = (await api.req('GET', `/v1/nodes/${n.uuid}`)).json;
    expect([node.instance_uuid, node.allocation_uuid]).toEqual([null, null]);
    // the other execution's hold is left as it was, and never shown
    expect((await holdOf(n.uuid)).hold).toBe('another-execution');
    expect(Object.keys(node).filter((k) => k.startsWith('hold'))).toEqual([]);
  }, 30_000);

  it('a hold given back while the allocation waits: the node is reserved on a later pass', async () => {
    const n = await availableNode(api, { resource_class: 'hold-released' });
    await holdAs(n.uuid, 'another-execution', Date.now() + 120_000);
    const c = await api.req('POST', '/v1/allocations', { body: { resource_class: 'hold-released', candidate_nodes: [n.uuid] } });
    expect(c.status).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    await ddb().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: BK.node(n.uuid),
        UpdateExpression: 'REMOVE #h, #u',
        ExpressionAttributeNames: { '#h': HOLD, '#u': HOLD_UNTIL },
      }),
    );
    await api.settle();
    const a = (await api.req('GET', `/v1/allocations/${c.json.uuid}`)).json;
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
  }, 30_000);

  it('an expired hold (its process died) keeps nobody off the node; the reservation removes it', async () => {
    const n = await availableNode(api, { resource_class: 'hold-expired' });
    await holdAs(n.uuid, 'a-dead-execution', Date.now() - 1);
    const a = await allocate(api, { resource_class: 'hold-expired' });
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
    expect(await holdOf(n.uuid)).toEqual({ hold: undefined, until: undefined });
  });

  it('a reservation that does not happen gives its hold back', async () => {
    // the transaction loses on the allocation's own item (no such allocation): held, then given back
    const n = await availableNode(api, { resource_class: 'hold-back' });
    const { reserveNode } = await import('../../../functions/store/baremetal/reservation.js');
    const { getNode } = await import('../../../functions/store/baremetal/nodes.js');
    const { scheduler } = await import('../../../functions/bridge/scheduler.js');
    const seq = (await getNode(n.uuid))!.seq;
    const { commit } = await scheduler().source();
    const out = await reserveNode(
      { uuid: crypto.randomUUID(), seq: 1, resource_class: 'hold-back', traits: [] },
      'no-such-execution',
      {
        uuid: n.uuid,
        seq,
      },
      commit,
    );
    expect(out).toEqual({ error: 'gone' });
    expect(await holdOf(n.uuid)).toEqual({ hold: undefined, until: undefined });
    expect((await allocate(api, { resource_class: 'hold-back' })).state).toBe('active');
  });

  it("a hold of the reservation's own execution (a retried call whose answer was lost) is its own", async () => {
    const n = await availableNode(api, { resource_class: 'hold-own' });
    await holdAs(n.uuid, 'exec-E', Date.now() + 120_000);
    const { createAllocation, getAllocation } = await import('../../../functions/store/baremetal/allocations.js');
    const { reserveNode } = await import('../../../functions/store/baremetal/reservation.js');
    const { getNode } = await import('../../../functions/store/baremetal/nodes.js');
    const { allocatingRecord } = await import('./harness.js');
    const { scheduler } = await import('../../../functions/bridge/scheduler.js');
    const rec = { ...(await allocatingRecord('hold-own')), exec: 'exec-E' };
    expect(await createAllocation(rec)).toEqual({ ok: true });
    const { commit } = await scheduler().source();
    expect(await reserveNode(rec, 'exec-E', { uuid: n.uuid, seq: (await getNode(n.uuid))!.seq }, commit)).toEqual({ ok: true });
    expect((await getAllocation(rec.uuid))?.node_uuid).toBe(n.uuid);
    expect(await holdOf(n.uuid)).toEqual({ hold: undefined, until: undefined });
  });

  it('of many allocations racing for few nodes, the losers lose on the hold: one reservation transaction per node reserved', async () => {
    const nodes = await Promise.all(Array.from({ length: 5 }, () => availableNode(api, { resource_class: 'hold-race' })));
    let reservations = 0;
    const name = `count-reservations-${Math.random()}`;
    const stacks = ddbCallStacks();
    for (const s of stacks)
      s.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as { TransactItems?: Array<{ Put?: { Item?: Record<string, unknown> } }> };
          if ((context as { commandName?: string }).commandName === 'TransactWriteItemsCommand') {
            // a reservation's transaction puts the node's instance item (the key as a value, or marshalled)
            const pkOf = (it?: Record<string, unknown>) => {
              const v = it?.pk as string | { S?: string } | undefined;
              return typeof v === 'string' ? v : v?.S;
            };
            if (input.TransactItems?.some((t) => pkOf(t.Put?.Item)?.startsWith('BMNINST#'))) reservations++;
          }
          return next(args);
        },
        { step: 'initialize', name },
      );
    try {
      const created = await Promise.all(
        Array.from({ length: 25 }, () => api.req('POST', '/v1/allocations', { body: { resource_class: 'hold-race' } })),
      );
      expect(created.every((c) => c.status === 201)).toBe(true);
      await api.settle();
    } finally {
      for (const s of stacks) s.middlewareStack.remove(name);
    }
    const all = (await api.req('GET', '/v1/allocations?resource_class=hold-race')).json.allocations as Array<{ state: string; node_uuid: string }>;
    expect(
      all
        .filter((a) => a.state === 'active')
        .map((a) => a.node_uuid)
        .sort(),
    ).toEqual(nodes.map((n) => n.uuid).sort());
    expect(reservations).toBe(5);
  }, 60_000);
});
