/**
 * The invariant every bare-metal test shares (test/setup/baremetal-agreement.ts runs it
 * after each test of a file that started the bare-metal harness): a node, its
 * resource provider and its allocations agree. It reads the table itself (a Scan of
 * the test's table on DynamoDB Local, past any fault injector) and derives nothing from
 * the code under test except how a node looks as a provider (functions/bridge/shape.ts,
 * itself unit-tested against Nova's rules).
 *
 * Both schedulers:
 *  - a node's allocation_uuid names an active allocation bound to that node, whose uuid
 *    is the node's instance_uuid; an active allocation's node points back at it;
 *  - no node is held by two allocations.
 * BAREMETAL_SCHEDULER=database: nothing of bare metal is in Placement (no provider
 * marked as a node's, no BAREMETAL consumer).
 * BAREMETAL_SCHEDULER=placement:
 *  - every node is a provider (uuid and name = the node's uuid, marked as the node's) with
 *    the node's inventory, traits and aggregates; no marked provider without its node;
 *  - every active allocation is a consumer holding exactly `CUSTOM_<RC>: 1` on its node's
 *    provider, with its row; every BAREMETAL consumer is an active allocation;
 *  - the provider's usage and allocation count equal its rows; a node with a bare-metal
 *    allocation holds no other consumer's allocation (no double allocation);
 *  - the usage items add up to the consumers ("Placement usage == active allocations").
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { nodeProviderShape, placementResourceClass } from '../../../functions/bridge/shape.js';
import { MANAGED_CONSUMER_TYPE as BAREMETAL_CONSUMER_TYPE, sameInventories, sameSet } from '../../../functions/core/placement/managed.js';
import type { NodeRecord } from '../../../functions/core/baremetal/records.js';

type Item = Record<string, any>;

export async function scanTable(endpoint: string, table: string): Promise<Item[]> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
  const out: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
    out.push(...(r.Items ?? []));
    start = r.LastEvaluatedKey;
  } while (start);
  client.destroy();
  return out;
}

/** Everything that disagrees, in words (empty: all agree). */
export function disagreements(items: Item[], scheduler: 'database' | 'placement'): string[] {
  const problems: string[] = [];
  const nodes = new Map<string, Item>();
  const allocations = new Map<string, Item>();
  const defs = new Map<string, Item>();
  const states = new Map<string, Item>();
  const consumers = new Map<string, Item>();
  const rows: Item[] = [];
  const usage: Item[] = [];
  for (const it of items) {
    const pk = String(it.pk);
    if (pk.startsWith('BMN#') && it.sk === 'BMN') nodes.set(pk.slice(4), it);
    else if (pk.startsWith('BMA#') && it.sk === 'BMA') allocations.set(pk.slice(4), it);
    else if (pk.startsWith('RP#') && it.sk === 'RP') defs.set(pk.slice(3), it);
    else if (pk.startsWith('RP#') && it.sk === 'RPU') states.set(pk.slice(3), it);
    else if (pk.startsWith('RP#') && String(it.sk).startsWith('ALLOC#')) rows.push(it);
    else if (pk.startsWith('CONS#')) consumers.set(pk.slice(5), it);
    else if (pk.startsWith('USAGE#')) usage.push(it);
  }
  // ---- bare metal, both schedulers
  const holders = new Map<string, string[]>();
  for (const [uuid, a] of allocations) {
    if (a.state !== 'active') continue;
    const n = nodes.get(String(a.node_uuid));
    if (!n) {
      problems.push(`allocation ${uuid} is active on node ${a.node_uuid}, which does not exist`);
      continue;
    }
    holders.set(String(a.node_uuid), [...(holders.get(String(a.node_uuid)) ?? []), uuid]);
    if (n.allocation_uuid !== uuid || n.instance_uuid !== uuid) {
      problems.push(
        `allocation ${uuid} is active on node ${a.node_uuid}, whose allocation_uuid/instance_uuid are ${n.allocation_uuid}/${n.instance_uuid}`,
      );
    }
  }
  for (const [node, hs] of holders) if (hs.length > 1) problems.push(`node ${node} is held by allocations ${hs.join(', ')}`);
  for (const [uuid, n] of nodes) {
    if (n.allocation_uuid && !holders.get(uuid)?.includes(String(n.allocation_uuid))) {
      problems.push(`node ${uuid} names allocation ${n.allocation_uuid}, which is not active on it`);
    }
  }
  const marked = [...states].filter(([, s]) => s.bm !== undefined);
  const bmConsumers = [...consumers].filter(([, c]) => c.ctype === BAREMETAL_CONSUMER_TYPE);
  if (scheduler === 'database') {
    for (const [rp] of marked) problems.push(`database scheduler, yet provider ${rp} is marked as a node's`);
    for (const [c] of bmConsumers) problems.push(`database scheduler, yet consumer ${c} is a bare-metal allocation's`);
    return problems;
  }
  // ---- placement: providers
  for (const [uuid, it] of nodes) {
    const def = defs.get(uuid);
    const st = states.get(uuid);
    if (!def || !st) {
      problems.push(`node ${uuid} has no resource provider`);
      continue;
    }
    if (st.bm !== uuid) problems.push(`provider ${uuid} is not marked as node ${uuid}'s (bm=${st.bm})`);
    if (def.name !== uuid) problems.push(`provider ${uuid} is named ${def.name}`);
    const node = {
      ...it,
      traits: it.traits ?? [],
      owner: it.owner ?? null,
      lessee: it.lessee ?? null,
      power_state: it.power_state ?? null,
      instance_uuid: it.instance_uuid ?? null,
      resource_class: it.resource_class ?? null,
      retired: !!it.retired,
    } as NodeRecord;
    const want = nodeProviderShape(node, { inventories: st.inv ?? {}, usages: st.used ?? {} });
    if (!sameInventories(st.inv ?? {}, want.inventories))
      problems.push(`provider ${uuid}: inventory ${JSON.stringify(st.inv)}, node says ${JSON.stringify(want.inventories)}`);
    if (!sameSet(def.traits ?? [], want.traits))
      problems.push(`provider ${uuid}: traits ${JSON.stringify(def.traits)}, node has ${JSON.stringify(want.traits)}`);
    if (!sameSet(def.aggs ?? [], want.aggregates))
      problems.push(`provider ${uuid}: aggregates ${JSON.stringify(def.aggs)}, node says ${JSON.stringify(want.aggregates)}`);
  }
  for (const [rp, s] of marked) if (!nodes.has(String(s.bm))) problems.push(`provider ${rp} is marked as node ${s.bm}'s, which does not exist`);
  // ---- placement: usage = rows, per provider
  const byProvider = new Map<string, Item[]>();
  for (const r of rows) {
    if (r.legacy) continue;
    byProvider.set(String(r.provider), [...(byProvider.get(String(r.provider)) ?? []), r]);
  }
  for (const [rp, st] of states) {
    const rs = byProvider.get(rp) ?? [];
    const sum: Record<string, number> = {};
    for (const r of rs) for (const [rc, n] of Object.entries(r.resources as Record<string, number>)) sum[rc] = (sum[rc] ?? 0) + n;
    for (const rc of new Set([...Object.keys(sum), ...Object.keys(st.used ?? {})])) {
      if ((st.used?.[rc] ?? 0) !== (sum[rc] ?? 0)) problems.push(`provider ${rp}: used ${rc} = ${st.used?.[rc] ?? 0}, rows say ${sum[rc] ?? 0}`);
    }
    if (Number(st.allocs ?? 0) !== rs.length) problems.push(`provider ${rp}: allocs = ${st.allocs}, ${rs.length} rows`);
  }
  // ---- placement: allocations = consumers
  for (const [uuid, a] of allocations) {
    const c = consumers.get(uuid);
    if (a.state !== 'active') {
      if (c?.ctype === BAREMETAL_CONSUMER_TYPE) problems.push(`allocation ${uuid} is ${a.state}, yet its consumer exists`);
      continue;
    }
    const n = nodes.get(String(a.node_uuid));
    const rc = placementResourceClass(n?.resource_class);
    if (!c) {
      problems.push(`active allocation ${uuid} has no Placement consumer`);
      continue;
    }
    const held = c.allocs as Record<string, Record<string, number>>;
    const mine = held?.[String(a.node_uuid)];
    if (Object.keys(held ?? {}).length !== 1 || !mine || Object.keys(mine).length !== 1 || !rc || mine[rc] !== 1) {
      problems.push(`allocation ${uuid} on node ${a.node_uuid}: its consumer holds ${JSON.stringify(held)}, not ${rc}: 1 on the node`);
    }
    if (!rows.some((r) => r.provider === a.node_uuid && r.consumer === uuid))
      problems.push(`allocation ${uuid}: no allocation row on its node's provider`);
  }
  for (const [c] of bmConsumers) {
    const a = allocations.get(c);
    if (a?.state !== 'active') problems.push(`consumer ${c} is a bare-metal allocation's, but allocation ${c} is ${a ? a.state : 'gone'}`);
  }
  // ---- placement: no node holds a foreign allocation next to a bare-metal one
  for (const [node, hs] of holders) {
    const others = (byProvider.get(node) ?? []).filter((r) => !hs.includes(String(r.consumer)));
    if (others.length)
      problems.push(`node ${node} is held by allocation ${hs[0]} and by Placement consumer(s) ${others.map((r) => r.consumer).join(', ')}`);
  }
  // ---- placement: usage items add up to the consumers
  const fromConsumers = new Map<string, number>();
  const fromUsage = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
  for (const [, c] of consumers) {
    const type = c.ctype ?? '';
    add(fromConsumers, `${c.project}|n:${type}`, 1);
    for (const res of Object.values(c.allocs as Record<string, Record<string, number>>)) {
      for (const [rc, n] of Object.entries(res)) add(fromConsumers, `${c.project}|r:${type}:${rc}`, n);
    }
  }
  for (const u of usage) {
    for (const [k, v] of Object.entries(u)) if (k.startsWith('n:') || k.startsWith('r:')) add(fromUsage, `${u.project}|${k}`, Number(v));
  }
  for (const k of new Set([...fromConsumers.keys(), ...fromUsage.keys()])) {
    if ((fromConsumers.get(k) ?? 0) !== (fromUsage.get(k) ?? 0))
      problems.push(`usage ${k}: usage items say ${fromUsage.get(k) ?? 0}, consumers ${fromConsumers.get(k) ?? 0}`);
  }
  return problems;
}
