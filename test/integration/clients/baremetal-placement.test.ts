/**
 * Operators see bare metal in Placement (BAREMETAL_SCHEDULER=placement, issue 25), with
 * the unmodified CLIs: nodes made with `baremetal` are resource providers
 * `openstack resource provider …` shows, `openstack allocation candidate list
 * --resource CUSTOM_BAREMETAL_GOLD=1` offers the free ones, an allocation made with
 * `baremetal allocation create` is a consumer `openstack resource usage show <project>`
 * counts — and the allocated node is no candidate any more.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useBaremetalTable, activeBaremetal } from '../baremetal/harness.js';
import { cli, reportTimings, type Cli } from './cli.js';
import { needs } from '../../optional.js';

const clis = needs('baremetal-cli', 'openstack-cli');
let servers: Server[] = [];
let bm: Cli;
let osc: Cli;
let osc19: Cli;
let idle: () => Promise<void>;

beforeAll(async () => {
  if (!clis.available) return;
  await useBaremetalTable({ BAREMETAL_SCHEDULER: 'placement' });
  const { serveBaremetal, servePlacement } = await import('../../../local/apis.js');
  const { localRunner } = await import('../../../local/state-machines.js');
  servers = [await serveBaremetal(0), await servePlacement(0)];
  const [b, p] = servers.map((s) => `http://127.0.0.1:${(s.address() as { port: number }).port}`);
  const runner = localRunner();
  idle = () => runner.idle();
  activeBaremetal.api = { settle: idle } as never;
  bm = cli('baremetal', b!, { OS_BAREMETAL_API_VERSION: 'latest' });
  osc = cli('openstack', p!, { OS_PLACEMENT_API_VERSION: '1.39' });
  osc19 = cli('openstack', p!, { OS_PLACEMENT_API_VERSION: '1.9' });
});

afterAll(async () => {
  reportTimings('baremetal through Placement (baremetal, openstack)', bm);
  bm?.close();
  osc?.close();
  osc19?.close();
  await idle?.();
  for (const s of servers) {
    s.closeAllConnections?.();
    await new Promise((r) => s.close(r));
  }
});

clis.describe('bare metal through Placement, as operators see it with the OpenStack CLIs', () => {
  it('nodes are providers, allocations are consumers: candidates and usage show them', async () => {
    const uuids: string[] = [];
    for (const name of ['gold-a', 'gold-b']) {
      const n = await bm.json('node', 'create', '--driver', 'fake-hardware', '--resource-class', 'baremetal-gold', '--name', name);
      uuids.push(n.uuid);
      await bm.ok('node', 'manage', name);
      await idle();
      await bm.ok('node', 'provide', name);
      await idle();
      await bm.ok('node', 'power', 'off', name);
      await idle();
    }
    await bm.ok('node', 'set', 'gold-a', '--owner', 'ops-project');
    const providers = await osc.json('resource', 'provider', 'list');
    expect(providers.map((p: any) => [p.uuid, p.name]).sort()).toEqual(uuids.map((u) => [u, u]).sort());
    const inv = await osc.json('resource', 'provider', 'inventory', 'list', uuids[0]!);
    expect(inv).toEqual(
      [
        { resource_class: 'CUSTOM_BAREMETAL_GOLD', total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1.0, used: 0 },
      ].map((x) => expect.objectContaining({ resource_class: x.resource_class, total: x.total, reserved: x.reserved })),
    );
    const before = await osc.json('allocation', 'candidate', 'list', '--resource', 'CUSTOM_BAREMETAL_GOLD=1');
    expect(new Set(before.map((c: any) => c['resource provider']))).toEqual(new Set(uuids));

    const a = await bm.json('allocation', 'create', '--resource-class', 'baremetal-gold', '--owner', 'ops-project', '--wait', '60');
    expect(a).toMatchObject({ state: 'active', node_uuid: uuids[0] });
    const after = await osc.json('allocation', 'candidate', 'list', '--resource', 'CUSTOM_BAREMETAL_GOLD=1');
    expect(after.map((c: any) => c['resource provider'])).toEqual([uuids[1]]);
    // by class (before 1.38), and by consumer type (1.38+, as osc-placement prints Placement's answer)
    expect(await osc19.json('resource', 'usage', 'show', 'ops-project')).toEqual([{ resource_class: 'CUSTOM_BAREMETAL_GOLD', usage: 1 }]);
    expect(await osc.json('resource', 'usage', 'show', 'ops-project')).toEqual([
      { resource_class: 'BAREMETAL', usage: { CUSTOM_BAREMETAL_GOLD: 1, consumer_count: 1 } },
    ]);
    const consumer = await osc.json('resource', 'provider', 'allocation', 'show', a.uuid);
    expect(consumer).toEqual([expect.objectContaining({ resource_provider: uuids[0], resources: { CUSTOM_BAREMETAL_GOLD: 1 } })]);

    await bm.ok('allocation', 'delete', a.uuid);
    expect(await osc19.json('resource', 'usage', 'show', 'ops-project')).toEqual([]);
    expect((await osc.json('allocation', 'candidate', 'list', '--resource', 'CUSTOM_BAREMETAL_GOLD=1')).length).toBe(2);
  });
});
