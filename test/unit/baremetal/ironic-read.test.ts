/**
 * Reading an Ironic-compatible API for the import (cli/ironic-api.ts) and
 * planning what to write (cli/import-ironic.ts planImport), against a stubbed
 * API: the microversion agreed (the source's newest up to 1.80, none older than 1.75),
 * lists paged by marker to the end, VIFs asked only of nodes whose network interface
 * keeps them (the reference Ironic enables only `noop`, so the integration test cannot
 * show this), and carried onto the node.
 */
import { describe, expect, it } from 'vitest';
import { connectIronic, PAGE_SIZE, readContents } from '../../../cli/ironic-api.js';
import { completeNode } from '../../../functions/store/baremetal/nodes.js';
import { planImport } from '../../../cli/import-ironic.js';

const hex = (i: number) => i.toString(16).padStart(12, '0');
const uuid = (i: number) => `00000000-0000-4000-8000-${hex(i)}`;

/** a node as Ironic shows it: Berth's fields (the store's defaults) and Ironic's own */
function node(i: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  const {
    ver: _ver,
    seq: _seq,
    lock: _lock,
    lock_action: _la,
    vifs: _vifs,
    ...fields
  } = completeNode({
    uuid: uuid(i),
    driver: 'fake-hardware',
    created_at: `2026-11-28T09:30:${String(i % 60).padStart(2, '0')}.000001+00:00`,
    seq: 0,
  });
  const n: Record<string, unknown> = {
    ...fields,
    name: `n${i}`,
    resource_class: 'gold',
    provision_state: 'available',
    power_state: 'power off',
    reservation: null,
    chassis_uuid: null,
    conductor: 'c1',
    links: [],
  };
  for (const i of ['bios', 'boot', 'console', 'deploy', 'inspect', 'management', 'network', 'power', 'raid', 'rescue', 'storage', 'vendor'])
    n[`${i}_interface`] = 'fake';
  n.network_interface = 'noop';
  return { ...n, ...over };
}

/** an Ironic that serves `nodes` and answers VIF lists, recording the paths asked */
function ironic(nodes: Record<string, unknown>[], opts: { max?: string; vifs?: Record<string, string[]> } = {}) {
  const asked: string[] = [];
  const doFetch = (async (input: string, init?: RequestInit) => {
    const url = new URL(input);
    asked.push(`${url.pathname}${url.search}`);
    const version = new Headers(init?.headers).get('x-openstack-ironic-api-version');
    if (url.pathname === '/') return Response.json({ default_version: { version: opts.max ?? '1.82' }, versions: [{ version: opts.max ?? '1.82' }] });
    if (version !== '1.80' && !(opts.max && version === opts.max)) return new Response('wrong version', { status: 406 });
    const page = (all: Record<string, unknown>[], key: string) => {
      const limit = Number(url.searchParams.get('limit'));
      const marker = url.searchParams.get('marker');
      const from = marker ? all.findIndex((x) => x.uuid === marker) + 1 : 0;
      const items = all.slice(from, from + limit);
      return Response.json({ [key]: items, ...(items.length === limit ? { next: `http://elsewhere/v1/${key}?marker=${items.at(-1)!.uuid}` } : {}) });
    };
    if (url.pathname === '/v1/nodes/detail') return page(nodes, 'nodes');
    if (url.pathname === '/v1/allocations') return page([], 'allocations');
    const vif = /^\/v1\/nodes\/([^/]+)\/vifs$/.exec(url.pathname);
    if (vif) return Response.json({ vifs: (opts.vifs?.[vif[1]!] ?? []).map((id) => ({ id })) });
    return new Response('not found', { status: 404 });
  }) as unknown as typeof fetch;
  return { doFetch, asked };
}

describe('reading Ironic for the import', () => {
  it('reads at min(newest, 1.80) and refuses an Ironic older than 1.75', async () => {
    const a = ironic([]);
    expect((await connectIronic({ endpoint: 'http://ironic:6385/v1/', headers: {}, describe: '' }, { doFetch: a.doFetch })).minor).toBe(80);
    const old = ironic([], { max: '1.74' });
    await expect(connectIronic({ endpoint: 'http://ironic:6385', headers: {}, describe: '' }, { doFetch: old.doFetch })).rejects.toThrow(
      /serves microversions up to 1\.74; reading every field Berth keeps needs 1\.75/,
    );
    const xena = ironic([], { max: '1.78' });
    expect((await connectIronic({ endpoint: 'http://ironic:6385', headers: {}, describe: '' }, { doFetch: xena.doFetch })).minor).toBe(78);
  });

  it('pages every list to its end by marker, and asks VIFs only of nodes whose network interface keeps them', async () => {
    const n = PAGE_SIZE + 3;
    const nodes = Array.from({ length: n }, (_, i) => node(i, i % 100 === 1 ? { network_interface: 'neutron' } : {}));
    const a = ironic(nodes, { vifs: { [uuid(101)]: ['vif-b', 'vif-a'] } });
    const api = await connectIronic({ endpoint: 'http://ironic:6385', headers: {}, describe: '' }, { doFetch: a.doFetch });
    const c = await readContents(api, { askVifs: (x) => x.network_interface !== 'noop' });
    expect(c.nodes.map((x) => x.uuid)).toEqual(nodes.map((x) => x.uuid));
    expect(a.asked.filter((p) => p.startsWith('/v1/nodes/detail'))).toEqual([
      `/v1/nodes/detail?limit=${PAGE_SIZE}`,
      `/v1/nodes/detail?limit=${PAGE_SIZE}&marker=${uuid(PAGE_SIZE - 1)}`,
    ]);
    expect([...c.vifs.keys()]).toEqual([1, 101, 201, 301, 401, 501].map(uuid));
    expect(c.vifs.get(uuid(101))).toEqual(['vif-b', 'vif-a']);

    // planned: each node with its VIFs, creation order kept as Berth's sequence
    const plan = await planImport(c);
    expect(plan.blockers).toEqual([]);
    expect(plan.nodes.find((x) => x.uuid === uuid(101))!.vifs).toEqual(['vif-b', 'vif-a']);
    expect(plan.nodes.find((x) => x.uuid === uuid(0))!.vifs).toEqual([]);
    const seqs = plan.nodes.map((x) => x.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(n);
  });

  it('plans nothing while anything blocks, and says what is not carried', async () => {
    const nodes = [
      node(1, { provision_state: 'cleaning', target_provision_state: 'available' }),
      node(2, { driver: 'ipmi', chassis_uuid: uuid(99), driver_info: { ipmi_password: '******' } }),
      node(3, { allocation_uuid: uuid(50), instance_uuid: uuid(50) }),
    ];
    const plan = await planImport({ nodes, allocations: [], vifs: new Map() });
    expect(plan.blockers).toEqual([
      `node ${uuid(1)} (n1): provision state "cleaning": an action is in progress (wait until it ends, or abort it)`,
      `node ${uuid(3)} (n3): its allocation ${uuid(50)} is not in Ironic's allocation list`,
    ]);
    expect([...plan.notCarried.keys()]).toEqual([
      'secrets Ironic showed masked (stored as ******: set them again in Berth): driver_info.ipmi_password',
      'chassis_uuid (Berth does not keep it)',
      'driver ipmi, which Berth does not enable (its power and provisioning actions are bookkeeping)',
    ]);
  });
});
