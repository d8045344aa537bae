/**
 * The real `baremetal` CLI (python3-ironicclient 5.0, unmodified; it negotiates the newest
 * API version both sides know, 1.78) against Berth's bare-metal handlers behind the local
 * API Gateway adapter, with the allocation state machine run locally from its ASL file.
 * Nodes go enroll → manageable → available with the client's --wait (then power off, as
 * Ironic only allocates nodes with a known power state); allocations are
 * created with --wait (the client polls until the state machine has made them active or
 * failed). Every effect is checked through the API as well.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useBaremetalTable } from '../baremetal/harness.js';
import { cli, installed, reportTimings, type Cli } from './cli.js';
import { needs } from '../../optional.js';

const ironic = needs('baremetal-cli');
const openstack = needs('openstack-cli');

let server: Server;
let url: string;
let bm: Cli;
let osc: Cli | undefined;
let idle: () => Promise<void>;

beforeAll(async () => {
  if (!ironic.available) return;
  await useBaremetalTable();
  const { serveBaremetal } = await import('../../../local/apis.js');
  const { localRunner } = await import('../../../local/state-machines.js');
  server = await serveBaremetal(0);
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const runner = localRunner();
  idle = () => runner.idle();
  bm = cli('baremetal', url, { OS_BAREMETAL_API_VERSION: 'latest' });
});

afterAll(async () => {
  reportTimings('baremetal (ironicclient)', bm);
  bm?.close();
  osc?.close();
  await idle?.();
  server?.closeAllConnections?.();
  await new Promise((r) => server?.close(r));
});

async function get(path: string): Promise<any> {
  const r = await fetch(url + path, { headers: { 'x-openstack-ironic-api-version': '1.78', 'x-auth-token': 'admin' } });
  return { status: r.status, json: await r.json().catch(() => undefined) };
}

ironic.describe('baremetal CLI (python3-ironicclient)', () => {
  const nodes: Record<string, string> = {};

  it('is installed and negotiates the newest common version', async () => {
    expect(installed('baremetal')).toBe(true);
    const r = await bm.binary('node', 'list', '-f', 'json');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  it('serves its OpenAPI document at /openapi.json (the committed file)', async () => {
    const r = await get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.json).toEqual(JSON.parse(readFileSync(join(process.cwd(), 'schemas/openapi/baremetal.json'), 'utf8')));
  });

  it('creates nodes and takes them to available with manage/provide --wait', async () => {
    for (const [name, rc] of [
      ['gold-1', 'baremetal'],
      ['plain-1', 'baremetal'],
      ['gpu-1', 'baremetal-gpu'],
    ] as const) {
      const n = await bm.json('node', 'create', '--driver', 'fake-hardware', '--resource-class', rc, '--name', name, '--property', 'cpus=8');
      expect(n).toMatchObject({ name, resource_class: rc, provision_state: 'enroll', driver: 'fake-hardware', properties: { cpus: 8 } });
      nodes[name] = n.uuid;
      // the client's --wait polls every 2 s: use it for the first node, then let the
      // local state machine settle instead
      const wait = name === 'gold-1' ? ['--wait', '60'] : [];
      await bm.ok('node', 'manage', name, ...wait);
      await idle();
      await bm.ok('node', 'provide', name, ...wait);
      await idle();
      // as in Ironic, a node without a known power state is not allocatable
      await bm.ok('node', 'power', 'off', name);
      await idle();
    }
    const out = await bm.ok('node', 'add', 'trait', 'gold-1', 'CUSTOM_GOLD');
    expect(out).toContain('CUSTOM_GOLD');
    const list = await bm.json('node', 'list', '--provision-state', 'available', '--sort', 'name');
    expect(list.map((n: any) => n.Name)).toEqual(['gold-1', 'gpu-1', 'plain-1']);
    expect((await bm.json('node', 'list', '--resource-class', 'baremetal-gpu')).map((n: any) => n.UUID)).toEqual([nodes['gpu-1']]);
    const shown = await bm.json('node', 'show', 'gold-1', '--fields', 'uuid', 'provision_state', 'traits');
    expect(shown).toEqual({ uuid: nodes['gold-1'], provision_state: 'available', traits: ['CUSTOM_GOLD'] });
  });

  it('creates allocations with --wait and lists, shows, sets and unsets them', async () => {
    const a1 = await bm.json(
      'allocation',
      'create',
      '--resource-class',
      'baremetal',
      '--trait',
      'CUSTOM_GOLD',
      '--name',
      'alloc-gold',
      '--extra',
      'team=blue',
      '--wait',
      '60',
    );
    expect(a1).toMatchObject({ name: 'alloc-gold', state: 'active', node_uuid: nodes['gold-1'], traits: ['CUSTOM_GOLD'], extra: { team: 'blue' } });
    const a2 = await bm.json(
      'allocation',
      'create',
      '--resource-class',
      'baremetal',
      '--candidate-node',
      'plain-1',
      '--name',
      'alloc-plain',
      '--wait',
      '60',
    );
    expect(a2).toMatchObject({ state: 'active', node_uuid: nodes['plain-1'], candidate_nodes: [nodes['plain-1']] });
    // the node records its allocation and instance
    const node = await get(`/v1/nodes/${nodes['gold-1']}`);
    expect(node.json.allocation_uuid).toBe(a1.uuid);
    expect(node.json.instance_uuid).toBe(a1.uuid);

    // nothing left of the class: the state machine fails it and --wait reports the error
    const none = await bm.run('allocation', 'create', '--resource-class', 'baremetal', '--name', 'alloc-none', '--wait', '60', '-f', 'json');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/failed|No available nodes/i);
    await idle();
    expect((await get('/v1/allocations/alloc-none')).json).toMatchObject({ state: 'error' });

    const list = await bm.json('allocation', 'list', '--sort', 'name');
    expect(list.map((a: any) => [a.Name, a.State])).toEqual([
      ['alloc-gold', 'active'],
      ['alloc-none', 'error'],
      ['alloc-plain', 'active'],
    ]);
    expect((await bm.json('allocation', 'list', '--state', 'active', '--node', 'plain-1')).map((a: any) => a.Name)).toEqual(['alloc-plain']);
    expect(await bm.json('allocation', 'show', 'alloc-gold', '--fields', 'uuid', 'node_uuid')).toEqual({ uuid: a1.uuid, node_uuid: nodes['gold-1'] });

    // ironicclient sends --extra values JSON-decoded (42 is a number)
    await bm.ok('allocation', 'set', 'alloc-gold', '--extra', 'ticket=42', '--name', 'alloc-gold-2');
    expect((await get(`/v1/allocations/${a1.uuid}`)).json).toMatchObject({ name: 'alloc-gold-2', extra: { team: 'blue', ticket: 42 } });
    await bm.ok('allocation', 'unset', 'alloc-gold-2', '--extra', 'team', '--name');
    expect((await get(`/v1/allocations/${a1.uuid}`)).json).toMatchObject({ name: null, extra: { ticket: 42 } });
  });

  it('lists and shows drivers, validates a node, sets its RAID target, attaches VIFs', async () => {
    const drivers = await bm.json('driver', 'list');
    expect(drivers).toEqual([{ 'Supported driver(s)': 'fake-hardware', 'Active host(s)': 'berth' }]);
    const d = await bm.json('driver', 'show', 'fake-hardware');
    expect(d).toMatchObject({ name: 'fake-hardware', default_deploy_interface: 'fake', enabled_raid_interfaces: 'fake, no-raid' });
    expect(await bm.json('driver', 'property', 'list', 'fake-hardware')).toEqual([]);
    const missing = await bm.run('driver', 'show', 'ipmi');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('Could not find the following driver(s) or hardware type(s): ipmi.');

    const validated = await bm.json('node', 'validate', 'plain-1');
    expect(validated.map((v: any) => [v.Interface, v.Result])).toEqual(
      ['bios', 'boot', 'console', 'deploy', 'inspect', 'management', 'network', 'power', 'raid', 'rescue', 'storage'].map((i) => [i, true]),
    );

    const raid = { logical_disks: [{ size_gb: 100, raid_level: '1', is_root_volume: true }] };
    await bm.ok('node', 'set', 'plain-1', '--target-raid-config', JSON.stringify(raid));
    expect((await get(`/v1/nodes/${nodes['plain-1']}`)).json.target_raid_config).toEqual(raid);
    const bad = await bm.run('node', 'set', 'plain-1', '--target-raid-config', '{"logical_disks": []}');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('RAID config validation error: [] is too short');

    await bm.ok('node', 'vif', 'attach', 'plain-1', 'vif-one');
    await bm.ok('node', 'vif', 'attach', 'plain-1', 'vif-two');
    expect(await bm.json('node', 'vif', 'list', 'plain-1')).toEqual([{ ID: 'vif-one' }, { ID: 'vif-two' }]);
    await bm.ok('node', 'vif', 'detach', 'plain-1', 'vif-one');
    expect(await bm.json('node', 'vif', 'list', 'plain-1')).toEqual([{ ID: 'vif-two' }]);
    const again = await bm.run('node', 'vif', 'detach', 'plain-1', 'vif-one');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`Unable to detach VIF vif-one from node ${nodes['plain-1']} because it is not attached to it.`);
  });

  openstack.describe('the openstackclient plugin', () => {
    it('the same through `openstack baremetal`', async () => {
      osc = cli('openstack', url, { OS_BAREMETAL_API_VERSION: 'latest' });
      expect(await osc.json('baremetal', 'driver', 'list')).toEqual([{ 'Supported driver(s)': 'fake-hardware', 'Active host(s)': 'berth' }]);
      expect(await osc.json('baremetal', 'driver', 'show', 'fake-hardware', '-c', 'name', '-c', 'hosts')).toEqual({
        name: 'fake-hardware',
        hosts: 'berth',
      });
      const v = await osc.json('baremetal', 'node', 'validate', 'gpu-1');
      expect(v.filter((x: any) => x.Result !== true)).toEqual([]);
      await osc.ok('baremetal', 'node', 'set', 'gpu-1', '--target-raid-config', '{"logical_disks": [{"size_gb": "MAX", "raid_level": "5"}]}');
      expect((await get(`/v1/nodes/${nodes['gpu-1']}`)).json.target_raid_config).toEqual({ logical_disks: [{ size_gb: 'MAX', raid_level: '5' }] });
      await osc.ok('baremetal', 'node', 'vif', 'attach', 'gpu-1', 'osc-vif');
      expect(await osc.json('baremetal', 'node', 'vif', 'list', 'gpu-1')).toEqual([{ ID: 'osc-vif' }]);
      await osc.ok('baremetal', 'node', 'vif', 'detach', 'gpu-1', 'osc-vif');
      expect(await osc.json('baremetal', 'node', 'vif', 'list', 'gpu-1')).toEqual([]);
    });
  });

  it('deletes allocations, which frees their nodes', async () => {
    const a = (await get('/v1/allocations?node=gold-1')).json.allocations[0];
    await bm.ok('allocation', 'delete', a.uuid, 'alloc-plain', 'alloc-none');
    await idle();
    expect((await get('/v1/allocations')).json.allocations).toEqual([]);
    expect((await get(`/v1/nodes/${nodes['gold-1']}`)).json).toMatchObject({ allocation_uuid: null, instance_uuid: null });
    // and the freed node can be allocated again
    const again = await bm.json('allocation', 'create', '--resource-class', 'baremetal', '--trait', 'CUSTOM_GOLD', '--wait', '60');
    expect(again).toMatchObject({ state: 'active', node_uuid: nodes['gold-1'] });
  });
});
