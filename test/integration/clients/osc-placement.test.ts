/**
 * The real OpenStack CLI with the osc-placement plugin (python3-openstackclient 6.0,
 * osc-placement 4.0), unmodified, at the plugin's newest microversion (1.39), against
 * Berth's Placement handlers in two processes (two "Lambda containers", requests spread
 * round robin: every command's effect must be seen by the next, whichever container
 * answers it) behind the local API Gateway adapter and DynamoDB Local.
 * Every command's effect is checked through the API as well.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startContainers, type Api } from '../harness.js';
import { cli, installed, reportTimings, type Cli } from './cli.js';
import { needs } from '../../optional.js';

const openstack = needs('openstack-cli');

const VERSION = '1.39';
let api: Api;
let osc: Cli;

beforeAll(async () => {
  if (!openstack.available) return;
  api = await startContainers(2);
  osc = cli('openstack', api.url, { OS_PLACEMENT_API_VERSION: VERSION });
});

afterAll(async () => {
  reportTimings('openstack (osc-placement)', osc);
  osc?.close();
  await api?.close();
});

const AGG_A = '5a3b0000-0000-4000-8000-00000000000a';
const AGG_B = '5a3b0000-0000-4000-8000-00000000000b';
const CONSUMER = 'c0de0000-0000-4000-8000-000000000001';

openstack.describe('openstack CLI + osc-placement (newest microversion)', () => {
  let compute: string;
  let numa: string;
  let other: string;

  it('is installed and talks to Berth at the newest microversion', async () => {
    expect(installed('openstack')).toBe(true);
    // the installed executable itself; --os-placement-api-version on the command line
    const r = await osc.binary('--os-placement-api-version', VERSION, 'resource', 'provider', 'list', '-f', 'json');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  it('serves its OpenAPI document at /openapi.json (the committed file; needs a token)', async () => {
    const r = await api.req('GET', '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.json).toEqual(JSON.parse(readFileSync(join(process.cwd(), 'schemas/openapi/placement.json'), 'utf8')));
    expect((await api.req('GET', '/openapi.json', { token: '' })).status).toBe(401);
    expect((await api.req('POST', '/openapi.json')).headers.get('allow')).toBe('GET');
  });

  it('creates, lists, shows, renames and re-parents resource providers', async () => {
    const c = await osc.json('resource', 'provider', 'create', 'compute-1');
    expect(c).toMatchObject({ name: 'compute-1', generation: 0, parent_provider_uuid: null });
    compute = c.uuid;
    expect(c.root_provider_uuid).toBe(compute);
    const n = await osc.json('resource', 'provider', 'create', 'numa-0', '--parent-provider', compute);
    numa = n.uuid;
    expect(n).toMatchObject({ parent_provider_uuid: compute, root_provider_uuid: compute });
    other = (await osc.json('resource', 'provider', 'create', 'spare')).uuid;

    const list = await osc.json('resource', 'provider', 'list', '--sort-column', 'name');
    expect(list.map((p: any) => p.name)).toEqual(['compute-1', 'numa-0', 'spare']);
    const tree = await osc.json('resource', 'provider', 'list', '--in-tree', numa);
    expect(tree.map((p: any) => p.uuid).sort()).toEqual([compute, numa].sort());

    const shown = await osc.json('resource', 'provider', 'show', compute, '--allocations');
    expect(shown).toMatchObject({ uuid: compute, name: 'compute-1', allocations: {} });

    // set: rename, then move `spare` under compute-1 (1.14+ re-parenting)
    const renamed = await osc.json('resource', 'provider', 'set', other, '--name', 'spare-1', '--parent-provider', compute);
    expect(renamed).toMatchObject({ name: 'spare-1', parent_provider_uuid: compute, root_provider_uuid: compute });
    const viaApi = await api.req('GET', `/resource_providers/${other}`);
    expect(viaApi.json).toMatchObject({ name: 'spare-1', parent_provider_uuid: compute });
  });

  it('manages custom resource classes and traits', async () => {
    await osc.ok('resource', 'class', 'create', 'CUSTOM_FPGA');
    expect(await osc.json('resource', 'class', 'show', 'CUSTOM_FPGA')).toEqual({ name: 'CUSTOM_FPGA' });
    const classes = (await osc.json('resource', 'class', 'list')).map((c: any) => c.name);
    expect(classes).toContain('VCPU');
    expect(classes).toContain('CUSTOM_FPGA');

    await osc.ok('trait', 'create', 'CUSTOM_GOLD');
    const custom = (await osc.json('trait', 'list', '--name', 'startswith:CUSTOM_')).map((t: any) => t.name);
    expect(custom).toEqual(['CUSTOM_GOLD']);
    const set = await osc.json('resource', 'provider', 'trait', 'set', numa, '--trait', 'CUSTOM_GOLD', '--trait', 'HW_CPU_X86_AVX2');
    expect(set.map((t: any) => t.name).sort()).toEqual(['CUSTOM_GOLD', 'HW_CPU_X86_AVX2']);
    expect((await api.req('GET', `/resource_providers/${numa}/traits`)).json.traits.sort()).toEqual(['CUSTOM_GOLD', 'HW_CPU_X86_AVX2']);
  });

  it('sets, lists, shows, amends and deletes inventories', async () => {
    const inv = await osc.json(
      'resource',
      'provider',
      'inventory',
      'set',
      numa,
      '--resource',
      'VCPU=8',
      '--resource',
      'VCPU:allocation_ratio=2.0',
      '--resource',
      'MEMORY_MB=4096',
      '--resource',
      'MEMORY_MB:max_unit=2048',
      '--resource',
      'CUSTOM_FPGA=2',
    );
    expect(Object.fromEntries(inv.map((i: any) => [i.resource_class, i.total]))).toEqual({ VCPU: 8, MEMORY_MB: 4096, CUSTOM_FPGA: 2 });
    await osc.ok('resource', 'provider', 'inventory', 'set', compute, '--resource', 'DISK_GB=500');
    // --amend keeps the other classes
    await osc.ok('resource', 'provider', 'inventory', 'set', compute, '--amend', '--resource', 'DISK_GB:reserved=20', '--resource', 'IPV4_ADDRESS=4');

    const listed = await osc.json('resource', 'provider', 'inventory', 'list', numa);
    const vcpu = listed.find((i: any) => i.resource_class === 'VCPU');
    expect(vcpu).toMatchObject({ total: 8, allocation_ratio: 2, used: 0, min_unit: 1, step_size: 1 });
    expect(await osc.json('resource', 'provider', 'inventory', 'show', compute, 'DISK_GB')).toMatchObject({ total: 500, reserved: 20, used: 0 });
    // one class, by its own URL (PUT /resource_providers/{uuid}/inventories/{rc})
    expect(await osc.json('resource', 'provider', 'inventory', 'class', 'set', compute, 'IPV4_ADDRESS', '--total', '8')).toMatchObject({ total: 8 });
    await osc.ok('resource', 'provider', 'inventory', 'delete', compute, '--resource-class', 'IPV4_ADDRESS');
    const api1 = await api.req('GET', `/resource_providers/${compute}/inventories`);
    expect(Object.keys(api1.json.inventories)).toEqual(['DISK_GB']);

    // a class in use by nobody, on a provider without allocations: delete all of it
    await osc.ok('resource', 'provider', 'inventory', 'set', other, '--resource', 'VCPU=2');
    await osc.ok('resource', 'provider', 'inventory', 'delete', other);
    expect((await api.req('GET', `/resource_providers/${other}/inventories`)).json.inventories).toEqual({});
  });

  it('sets aggregates with the provider generation and refuses a stale one', async () => {
    const gen = (await api.req('GET', `/resource_providers/${compute}`)).json.generation as number;
    const aggs = await osc.json(
      'resource',
      'provider',
      'aggregate',
      'set',
      compute,
      '--aggregate',
      AGG_A,
      '--aggregate',
      AGG_B,
      '--generation',
      String(gen),
    );
    expect(aggs.map((a: any) => a.uuid).sort()).toEqual([AGG_A, AGG_B]);
    expect((await osc.json('resource', 'provider', 'aggregate', 'list', compute)).map((a: any) => a.uuid).sort()).toEqual([AGG_A, AGG_B]);
    // the generation it just used is stale now: a conflict, reported by the client
    const stale = await osc.run('resource', 'provider', 'aggregate', 'set', compute, '--aggregate', AGG_A, '--generation', String(gen));
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain('HTTP 409');
    expect((await api.req('GET', `/resource_providers/${compute}/aggregates`)).json.aggregates.sort()).toEqual([AGG_A, AGG_B]);
    await osc.ok(
      'resource',
      'provider',
      'aggregate',
      'set',
      other,
      '--aggregate',
      AGG_A,
      '--generation',
      String((await api.req('GET', `/resource_providers/${other}`)).json.generation),
    );
  });

  // osc-placement's own functional test_success_set_large_number_aggregates, at 1.1 and at
  // 1.19: 100 aggregates in one request, more than one DynamoDB transaction holds
  for (const [version, withGeneration] of [
    ['1.1', false],
    ['1.19', true],
  ] as const) {
    // (the installed executable, a process per command: the test driver keeps parsed arguments between commands)
    it(`sets 100 aggregates on a provider and takes them away again (${version})`, async () => {
      const rp = (await osc.json('--os-placement-api-version', version, 'resource', 'provider', 'create', `aggs-${version}-${Date.now()}`))
        .uuid as string;
      const aggs = Array.from({ length: 100 }, (_, i) => `5a3b0000-0000-4000-8000-${String(i).padStart(12, '0')}`);
      // `resource provider aggregate set` as the test runs it: the aggregates given, the generation from 1.19
      const setAggregates = (list: string[], generation: number) =>
        osc.binary(
          '--os-placement-api-version',
          version,
          'resource',
          'provider',
          'aggregate',
          'set',
          rp,
          ...list.flatMap((a) => ['--aggregate', a]),
          ...(withGeneration ? ['--generation', String(generation)] : []),
          '-f',
          'json',
        );
      const set = await setAggregates(aggs, 0);
      expect(set.code, set.stderr).toBe(0);
      expect(
        JSON.parse(set.stdout)
          .map((a: any) => a.uuid)
          .sort(),
      ).toEqual(aggs);
      const cleared = await setAggregates([], 1);
      expect(cleared.code, cleared.stderr).toBe(0);
      expect(JSON.parse(cleared.stdout)).toEqual([]);
      expect((await api.req('GET', `/resource_providers/${rp}/aggregates`)).json.aggregates).toEqual([]);
      expect((await api.req('DELETE', `/resource_providers/${rp}`)).status).toBe(204);
    });
  }

  it('lists allocation candidates with required, any-of (1.39), forbidden traits and member_of', async () => {
    const c = await osc.json('allocation', 'candidate', 'list', '--resource', 'VCPU=2', '--resource', 'MEMORY_MB=1024', '--required', 'CUSTOM_GOLD');
    expect(c.length).toBe(1);
    expect(c[0]['resource provider']).toBe(numa);
    expect(c[0].allocation).toBe('VCPU=2,MEMORY_MB=1024');
    // any-of traits (1.39): the plugin turns a comma-separated --required into `required=in:A,B`
    const anyOf = await osc.json('allocation', 'candidate', 'list', '--resource', 'VCPU=1', '--required', 'CUSTOM_GOLD,HW_CPU_X86_SSE42');
    expect(anyOf.map((x: any) => x['resource provider'])).toEqual([numa]);
    expect(await osc.json('allocation', 'candidate', 'list', '--resource', 'VCPU=1', '--forbidden', 'CUSTOM_GOLD')).toEqual([]);
    // granular groups across the tree (numa's VCPU + compute's DISK_GB), limited to aggregate A
    const g = await osc.json(
      'allocation',
      'candidate',
      'list',
      '--group',
      '1',
      '--resource',
      'VCPU=1',
      '--group',
      '2',
      '--resource',
      'DISK_GB=10',
      '--group-policy',
      'none',
      '--member-of',
      AGG_A,
    );
    expect(g.map((x: any) => x['resource provider']).sort()).toEqual([compute, numa].sort());
    // more than the capacity (8 VCPU × 2.0): nothing
    expect(await osc.json('allocation', 'candidate', 'list', '--resource', 'VCPU=17')).toEqual([]);
  });

  it('sets, shows and unsets allocations; usages follow', async () => {
    const set = await osc.json(
      'resource',
      'provider',
      'allocation',
      'set',
      CONSUMER,
      '--allocation',
      `rp=${numa},VCPU=4,MEMORY_MB=1024`,
      '--allocation',
      `rp=${compute},DISK_GB=40`,
      '--project-id',
      'proj-a',
      '--user-id',
      'user-a',
      '--consumer-type',
      'INSTANCE',
    );
    expect(set.map((a: any) => a.resource_provider).sort()).toEqual([compute, numa].sort());
    const shown = await osc.json('resource', 'provider', 'allocation', 'show', CONSUMER);
    const byRp = Object.fromEntries(shown.map((a: any) => [a.resource_provider, a]));
    expect(byRp[numa]).toMatchObject({ resources: { VCPU: 4, MEMORY_MB: 1024 }, project_id: 'proj-a', user_id: 'user-a', consumer_type: 'INSTANCE' });
    expect(byRp[compute].resources).toEqual({ DISK_GB: 40 });

    const usage = await osc.json('resource', 'provider', 'usage', 'show', numa);
    expect(Object.fromEntries(usage.map((u: any) => [u.resource_class, u.usage]))).toEqual({ VCPU: 4, MEMORY_MB: 1024, CUSTOM_FPGA: 0 });
    const proj = await osc.json('resource', 'usage', 'show', 'proj-a', '--user-id', 'user-a');
    expect(proj).toEqual([{ resource_class: 'INSTANCE', usage: { VCPU: 4, MEMORY_MB: 1024, DISK_GB: 40, consumer_count: 1 } }]);
    // the provider's view of its allocations (with the consumer generation from 1.28)
    expect((await osc.json('resource', 'provider', 'show', numa, '--allocations')).allocations).toEqual({
      [CONSUMER]: { resources: { VCPU: 4, MEMORY_MB: 1024 }, consumer_generation: 1 },
    });

    // unset one class on one provider, then the whole provider (the consumer generation travels along)
    await osc.ok('resource', 'provider', 'allocation', 'unset', CONSUMER, '--provider', numa, '--resource-class', 'MEMORY_MB');
    let api1 = await api.req('GET', `/allocations/${CONSUMER}`);
    expect(api1.json.allocations[numa].resources).toEqual({ VCPU: 4 });
    await osc.ok('resource', 'provider', 'allocation', 'unset', CONSUMER, '--provider', compute);
    api1 = await api.req('GET', `/allocations/${CONSUMER}`);
    expect(Object.keys(api1.json.allocations)).toEqual([numa]);
    // capacity is enforced for the CLI too: 4 + 13 > 16
    const over = await osc.run(
      'resource',
      'provider',
      'allocation',
      'set',
      CONSUMER,
      '--allocation',
      `rp=${numa},VCPU=17`,
      '--project-id',
      'proj-a',
      '--user-id',
      'user-a',
      '--consumer-type',
      'INSTANCE',
    );
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain('HTTP 409');
    await osc.ok('resource', 'provider', 'allocation', 'delete', CONSUMER);
    expect((await api.req('GET', `/allocations/${CONSUMER}`)).json.allocations).toEqual({});
  });

  it('removes traits, classes and providers again', async () => {
    await osc.ok('resource', 'provider', 'trait', 'delete', numa);
    await osc.ok('trait', 'delete', 'CUSTOM_GOLD');
    // a class with inventory is in use
    const inUse = await osc.run('resource', 'class', 'delete', 'CUSTOM_FPGA');
    expect(inUse.code).not.toBe(0);
    expect(inUse.stderr).toContain('HTTP 409');
    await osc.ok('resource', 'provider', 'inventory', 'delete', numa, '--resource-class', 'CUSTOM_FPGA');
    await osc.ok('resource', 'class', 'delete', 'CUSTOM_FPGA');
    // a parent with children cannot go first
    const parent = await osc.run('resource', 'provider', 'delete', compute);
    expect(parent.code).not.toBe(0);
    expect(parent.stderr).toContain('HTTP 409');
    await osc.ok('resource', 'provider', 'delete', numa);
    await osc.ok('resource', 'provider', 'delete', other);
    await osc.ok('resource', 'provider', 'delete', compute);
    expect((await api.req('GET', '/resource_providers')).json.resource_providers).toEqual([]);
  });
});
