/**
 * The endpoints bare-metal clients call besides nodes and allocations: drivers
 * (`openstack baremetal driver list/show`), node validation, the target RAID
 * configuration and VIF attachments. Statuses, bodies, microversion gates and error
 * texts are those the real Ironic 21.4 answers (shared/reference/serve-ironic.sh, asked
 * where shared/spec/ironic is silent); where Berth differs on purpose (VIFs are kept on
 * the node: Berth has no ports) the test says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableNode, startBaremetal, type BmApi } from './harness.js';
import { MAX_VIFS_PER_NODE } from '../../../functions/core/baremetal/interfaces.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api.close());

const link = (path: string) => [
  { href: `${api.url}/v1/${path}`, rel: 'self' },
  { href: `${api.url}/${path}`, rel: 'bookmark' },
];

async function node(body: Record<string, unknown> = {}): Promise<string> {
  const c = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', ...body } });
  expect(c.status, c.text).toBe(201);
  return c.json.uuid as string;
}

describe('GET /v1/drivers, /v1/drivers/{name}', () => {
  it('lists the enabled hardware type as Ironic renders it, by version', async () => {
    const base = { name: 'fake-hardware', hosts: ['berth'], links: link('drivers/fake-hardware') };
    expect((await api.req('GET', '/v1/drivers', { version: '1.1' })).json).toEqual({ drivers: [base] });
    const withProps = { ...base, properties: link('drivers/fake-hardware/properties') };
    expect((await api.req('GET', '/v1/drivers', { version: '1.29' })).json).toEqual({ drivers: [withProps] });
    expect((await api.req('GET', '/v1/drivers')).json).toEqual({ drivers: [{ ...withProps, type: 'dynamic' }] });
    const detail = (await api.req('GET', '/v1/drivers?detail=true')).json.drivers[0];
    expect(detail).toMatchObject({ type: 'dynamic', default_power_interface: 'fake', enabled_power_interfaces: ['fake'] });
    expect(detail.enabled_raid_interfaces).toEqual(['fake', 'no-raid']);
    expect(detail.default_storage_interface).toBe('noop');
    // interfaces a version does not know are not shown
    const old = (await api.req('GET', '/v1/drivers?detail=true', { version: '1.30' })).json.drivers[0];
    for (const k of ['default_storage_interface', 'default_rescue_interface', 'default_bios_interface']) expect(old).not.toHaveProperty(k);
    expect(old).toHaveProperty('default_raid_interface', 'fake');
    expect((await api.req('GET', '/v1/drivers?detail=false')).json.drivers[0]).not.toHaveProperty('default_power_interface');
    expect((await api.req('GET', '/v1/drivers?type=classic')).json).toEqual({ drivers: [] });
    expect((await api.req('GET', '/v1/drivers?type=dynamic')).json.drivers).toHaveLength(1);
    expect((await api.req('GET', '/v1/drivers?fields=Name,hosts')).json).toEqual({
      drivers: [{ name: 'fake-hardware', hosts: ['berth'], links: base.links }],
    });
  });

  it('refuses what Ironic refuses, with its texts', async () => {
    const fault = async (path: string, version?: string) => {
      const r = await api.req('GET', path, { version });
      return [r.status, r.fault];
    };
    expect(await fault('/v1/drivers?detail=True&fields=name')).toEqual([400, 'Can not specify ?detail=True and fields in the same request.']);
    expect(await fault('/v1/drivers?type=foo')).toEqual([400, '"type" filter must be one of "classic" or "dynamic", if specified.']);
    expect((await fault('/v1/drivers?detail=xyz'))[1]).toMatch(/^Invalid detail: Unrecognized value 'xyz', acceptable values are: '0', '1'/);
    expect(await fault('/v1/drivers?foo=1')).toEqual([400, 'Unexpected arguments: foo']);
    expect(await fault('/v1/drivers?detail=true', '1.29')).toEqual([406, 'Request not acceptable. The minimal required API version should be 1.30']);
    expect(await fault('/v1/drivers?type=dynamic', '1.1')).toEqual([406, 'Request not acceptable. The minimal required API version should be 1.30']);
    expect(await fault('/v1/drivers?fields=name', '1.76')).toEqual([406, 'Request not acceptable.']);
    expect(await fault('/v1/drivers/ipmi')).toEqual([404, 'Could not find the following driver(s) or hardware type(s): ipmi.']);
    expect(await fault('/v1/drivers/fake-hardware?detail=true')).toEqual([400, 'Unexpected arguments: detail']);
    expect(await fault('/v1/drivers/fake-hardware?fields=name,bogus')).toEqual([400, 'Field(s) "bogus" are not valid']);
    expect(await fault('/v1/drivers/ipmi/properties')).toEqual([404, "The driver 'ipmi' is unknown."]);
    expect((await api.req('POST', '/v1/drivers')).status).toBe(405);
  });

  it('shows one hardware type with its interfaces; its properties (none: nothing to reach)', async () => {
    const d = (await api.req('GET', '/v1/drivers/fake-hardware')).json;
    expect(d).toMatchObject({ name: 'fake-hardware', hosts: ['berth'], type: 'dynamic', default_deploy_interface: 'fake' });
    expect((await api.req('GET', '/v1/drivers/fake-hardware', { version: '1.1' })).json).toEqual({
      name: 'fake-hardware',
      hosts: ['berth'],
      links: link('drivers/fake-hardware'),
    });
    expect((await api.req('GET', '/v1/drivers/fake-hardware?fields=name,default_power_interface')).json).toEqual({
      name: 'fake-hardware',
      links: link('drivers/fake-hardware'),
      default_power_interface: 'fake',
    });
    expect((await api.req('GET', '/v1/drivers/fake-hardware/properties')).json).toEqual({});
  });

  it('the v1 document advertises drivers, and nothing Berth does not serve', async () => {
    const v1 = (await api.req('GET', '/v1')).json;
    expect(v1.drivers).toBeDefined();
    for (const absent of ['chassis', 'ports', 'portgroups', 'volume', 'deploy_templates', 'lookup', 'heartbeat', 'conductors', 'events']) {
      expect(v1, absent).not.toHaveProperty(absent);
    }
    for (const path of ['/v1/ports', '/v1/portgroups', '/v1/chassis', '/v1/volume', '/v1/deploy_templates']) {
      expect((await api.req('GET', path)).status, path).toBe(404);
    }
  });
});

describe('GET /v1/nodes/{node}/validate', () => {
  it('every interface passes on a fake-hardware node; no-* interfaces and missing instance traits do not', async () => {
    const uuid = await node({ name: 'val-1' });
    const ok = Object.fromEntries(
      ['boot', 'deploy', 'management', 'network', 'power', 'bios', 'console', 'inspect', 'raid', 'rescue', 'storage'].map((i) => [
        i,
        { result: true },
      ]),
    );
    const r = await api.req('GET', '/v1/nodes/val-1/validate');
    expect(r.status).toBe(200);
    expect(r.text).toBe(JSON.stringify(ok).replaceAll('":', '": ').replaceAll(',"', ', "'));
    expect((await api.req('GET', `/v1/nodes/${uuid}/validate`, { version: '1.1' })).json).toEqual(ok);
    await node({
      name: 'val-2',
      bios_interface: 'no-bios',
      console_interface: 'no-console',
      inspect_interface: 'no-inspect',
      raid_interface: 'no-raid',
      rescue_interface: 'no-rescue',
      instance_info: { traits: ['CUSTOM_X'] },
    });
    const v = (await api.req('GET', '/v1/nodes/val-2/validate')).json;
    const uuid2 = (await api.req('GET', '/v1/nodes/val-2')).json.uuid;
    for (const i of ['bios', 'console', 'inspect', 'raid', 'rescue']) {
      expect(v[i]).toEqual({ result: false, reason: `Driver fake-hardware does not support ${i} (disabled or not implemented).` });
    }
    expect(v.deploy).toEqual({
      result: false,
      reason: `Cannot specify instance traits that are not also set on the node. Node ${uuid2} is missing traits CUSTOM_X`,
    });
    await api.req('PATCH', '/v1/nodes/val-2', { body: [{ op: 'add', path: '/instance_info/traits', value: 'CUSTOM_X' }] });
    expect((await api.req('GET', '/v1/nodes/val-2/validate')).json.deploy.reason).toBe(
      `Error parsing traits from Node ${uuid2} instance_info field. A list of strings is expected.`,
    );
    expect(v.power).toEqual({ result: true });
  });

  it('refuses as Ironic does', async () => {
    await node({ name: 'val-3' });
    expect((await api.req('GET', '/v1/nodes/nope/validate')).fault).toBe('Node nope could not be found.');
    expect((await api.req('GET', '/v1/nodes/val-3/validate?foo=1')).fault).toBe('Unexpected arguments: foo');
    expect((await api.req('GET', '/v1/nodes/val-3/validate?node_uuid=xx')).fault).toBe('Expected UUID for node_uuid: xx');
    expect((await api.req('GET', '/v1/nodes/val-3/validate', { version: '1.1' })).status).toBe(406);
    expect((await api.req('POST', '/v1/nodes/val-3/validate')).status).toBe(405);
  });
});

describe('PUT /v1/nodes/{node}/states/raid', () => {
  const put = (ident: string, body: unknown, version?: string) =>
    api.req('PUT', `/v1/nodes/${ident}/states/raid`, { raw: body === undefined ? '' : JSON.stringify(body), version });

  it('stores target_raid_config (204), an empty one clears it', async () => {
    await node({ name: 'raid-1' });
    const config = {
      logical_disks: [
        { size_gb: 100, raid_level: '1', is_root_volume: true },
        { size_gb: 'MAX', raid_level: '5' },
      ],
    };
    const r = await put('raid-1', config);
    expect(r.status, r.text).toBe(204);
    expect(r.text).toBe('');
    expect((await api.req('GET', '/v1/nodes/raid-1?fields=target_raid_config')).json.target_raid_config).toEqual(config);
    expect((await api.req('GET', '/v1/nodes/raid-1/states')).json.target_raid_config).toEqual(config);
    expect((await api.req('GET', '/v1/nodes/raid-1/validate')).json.raid).toEqual({ result: true });
    expect((await put('raid-1', {})).status).toBe(204);
    expect((await api.req('GET', '/v1/nodes/raid-1')).json.target_raid_config).toEqual({});
    expect((await put('raid-1', config)).status).toBe(204);
    expect((await put('raid-1', undefined)).status).toBe(204);
    expect((await api.req('GET', '/v1/nodes/raid-1')).json.target_raid_config).toEqual({});
  });

  it('validates the configuration with Ironic’s texts and changes nothing on a refusal', async () => {
    await node({ name: 'raid-2' });
    const cases: Array<[unknown, string]> = [
      [{ logical_disks: [] }, 'RAID config validation error: [] is too short'],
      [{ foo: 1 }, "RAID config validation error: 'logical_disks' is a required property"],
      [
        { logical_disks: [{ size_gb: 'MAX', raid_level: '7' }] },
        "RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']",
      ],
      [{ logical_disks: [{ raid_level: '1' }] }, "RAID config validation error: 'size_gb' is a required property"],
      [{ logical_disks: [{ size_gb: -1, raid_level: '1' }] }, 'RAID config validation error: -1 is less than the minimum of 0'],
      [
        { logical_disks: [{ size_gb: 1, raid_level: '1', physical_disks: ['a'] }] },
        "RAID config validation error: 'controller' is a dependency of 'physical_disks'",
      ],
      [
        { logical_disks: [{ size_gb: 1, raid_level: '1', number_of_physical_disks: 0 }] },
        'RAID config validation error: 0 is less than or equal to the minimum of 0',
      ],
      [
        { logical_disks: [{ size_gb: 1, raid_level: '1', physical_disks: [{ a: 1 }], controller: 'c' }] },
        "RAID config validation error: {'a': 1} is not of type 'string'",
      ],
      [{ logical_disks: [{ size_gb: 1.5, raid_level: '1' }] }, 'RAID config validation error: 1.5 is not valid under any of the given schemas'],
      [
        { logical_disks: [{ size_gb: 1, raid_level: '1', foo: 1 }] },
        "RAID config validation error: Additional properties are not allowed ('foo' was unexpected)",
      ],
      [{ logical_disks: 'x' }, "RAID config validation error: 'x' is not of type 'array'"],
      [
        {
          logical_disks: [
            { size_gb: 100, raid_level: '1', is_root_volume: true },
            { size_gb: 10, raid_level: '0', is_root_volume: true },
          ],
        },
        'Raid config cannot have more than one root volume. 2 root volumes were specified',
      ],
      [[], "Expected types <class 'dict'> for target_raid_config: []"],
      ['x', "Expected types <class 'dict'> for target_raid_config: x"],
      [null, "Expected types <class 'dict'> for target_raid_config: None"],
    ];
    for (const [body, text] of cases) {
      const r = await put('raid-2', body);
      expect([r.status, r.fault], JSON.stringify(body)).toEqual([400, text]);
    }
    expect((await api.req('GET', '/v1/nodes/raid-2')).json.target_raid_config).toEqual({});
    expect((await api.req('PUT', '/v1/nodes/raid-2/states/raid?foo=1', { body: {} })).fault).toBe('Unexpected arguments: foo');
  });

  it('no-raid nodes, old versions, unknown and locked nodes', async () => {
    const uuid = await node({ name: 'raid-3', raid_interface: 'no-raid' });
    const cfg = { logical_disks: [{ size_gb: 100, raid_level: '1' }] };
    const r = await put('raid-3', cfg);
    expect([r.status, r.fault]).toEqual([404, 'Driver fake-hardware does not support raid (disabled or not implemented).']);
    expect((await put('raid-3', {})).status).toBe(204);
    expect((await put('raid-3', {}, '1.11')).status).toBe(406);
    expect((await put('nope', {})).fault).toBe('Node nope could not be found.');
    // while a provision action holds the node's lock: NodeLocked, nothing stored
    let release: () => void = () => undefined;
    api.runner.interceptor = async (_m, state, input) => {
      if (state === 'AdvanceNode' && input.node === uuid) await new Promise<void>((res) => (release = res));
    };
    try {
      await api.req('PATCH', '/v1/nodes/raid-3', { body: [{ op: 'replace', path: '/raid_interface', value: 'fake' }] });
      expect((await api.req('PUT', '/v1/nodes/raid-3/states/provision', { body: { target: 'manage' } })).status).toBe(202);
      const locked = await put('raid-3', cfg);
      expect([locked.status, locked.fault]).toEqual([
        409,
        `Node ${uuid} is locked by host berth, please retry after the current operation is completed.`,
      ]);
    } finally {
      api.runner.interceptor = undefined;
      release();
      await api.settle();
    }
    expect((await api.req('GET', '/v1/nodes/raid-3')).json.target_raid_config).toEqual({});
  });
});

describe('/v1/nodes/{node}/vifs', () => {
  it('attaches, lists and detaches VIFs, kept on the node', async () => {
    const uuid = await node({ name: 'vif-1' });
    expect((await api.req('GET', '/v1/nodes/vif-1/vifs')).json).toEqual({ vifs: [] });
    const vif = '1974dcfa-836f-41b2-b541-686c100900e5';
    const a = await api.req('POST', '/v1/nodes/vif-1/vifs', { body: { id: vif } });
    expect([a.status, a.text]).toEqual([204, '']);
    expect((await api.req('POST', `/v1/nodes/${uuid}/vifs`, { body: { id: 'port-b', extra: 1 } })).status).toBe(204);
    expect((await api.req('GET', '/v1/nodes/vif-1/vifs')).json).toEqual({ vifs: [{ id: vif }, { id: 'port-b' }] });
    const dup = await api.req('POST', '/v1/nodes/vif-1/vifs', { body: { id: vif } });
    expect([dup.status, dup.fault]).toEqual([409, `Unable to attach VIF because VIF ${vif} is already attached to Ironic Node ${uuid}`]);
    expect((await api.req('DELETE', `/v1/nodes/vif-1/vifs/${vif}`)).status).toBe(204);
    const gone = await api.req('DELETE', `/v1/nodes/vif-1/vifs/${vif}`);
    expect([gone.status, gone.fault]).toEqual([400, `Unable to detach VIF ${vif} from node ${uuid} because it is not attached to it.`]);
    expect((await api.req('GET', '/v1/nodes/vif-1/vifs')).json).toEqual({ vifs: [{ id: 'port-b' }] });
    // the node's own record does not change shape
    expect((await api.req('GET', '/v1/nodes/vif-1')).json).not.toHaveProperty('vifs');
  });

  it('refuses as Ironic does; a node holds a bounded number of VIFs', async () => {
    await node({ name: 'vif-2' });
    const post = (body: unknown, version?: string) => api.req('POST', '/v1/nodes/vif-2/vifs', { raw: JSON.stringify(body), version });
    const fault = async (p: Promise<{ status: number; fault?: string }>) => {
      const r = await p;
      return [r.status, r.fault];
    };
    expect(await fault(post({}))).toEqual([400, "Schema error for vif: 'id' is a required property"]);
    expect(await fault(post({ id: 5 }))).toEqual([400, "Schema error for vif: 5 is not of type 'string'"]);
    expect(await fault(post([]))).toEqual([400, "Schema error for vif: [] is not of type 'object'"]);
    expect(await fault(post(null))).toEqual([400, "Schema error for vif: None is not of type 'object'"]);
    expect(await fault(post({ id: 'bad id!' }))).toEqual([400, 'Expected UUID or name for id: bad id!']);
    expect(await fault(post({ id: 'a', port_uuid: 'x', portgroup_uuid: 'y' }))).toEqual([400, 'Cannot specify both port_uuid and portgroup_uuid']);
    // no ports in Berth: a VIF asked onto one finds none free
    expect(await fault(post({ id: 'a', port_uuid: '1974dcfa-836f-41b2-b541-686c100900e5' }))).toEqual([
      400,
      'Unable to attach VIF a, not enough free physical ports.',
    ]);
    expect(await fault(api.req('DELETE', '/v1/nodes/vif-2/vifs/bad%20id'))).toEqual([400, 'Expected UUID or name for vif_id: bad id']);
    expect(await fault(api.req('GET', '/v1/nodes/vif-2/vifs?foo=1'))).toEqual([400, 'Unexpected arguments: foo']);
    expect(await fault(api.req('GET', '/v1/nodes/nope/vifs'))).toEqual([404, 'Node nope could not be found.']);
    for (const [m, p] of [
      ['GET', '/v1/nodes/vif-2/vifs'],
      ['POST', '/v1/nodes/vif-2/vifs'],
      ['DELETE', '/v1/nodes/vif-2/vifs/abc'],
    ] as const) {
      expect((await api.req(m, p, { version: '1.27', body: m === 'POST' ? { id: 'abc' } : undefined })).status, `${m} ${p}`).toBe(404);
    }
    expect((await api.req('PUT', '/v1/nodes/vif-2/vifs', { body: {} })).status).toBe(405);
    expect((await api.req('GET', '/v1/nodes/vif-2/vifs/abc')).status).toBe(405);
    expect((await api.req('GET', '/v1/nodes/vif-2/vifs')).json).toEqual({ vifs: [] });
    for (let i = 0; i < MAX_VIFS_PER_NODE; i++) expect((await post({ id: `vif-${i}` })).status).toBe(204);
    expect(await fault(post({ id: 'one-more' }))).toEqual([400, 'Unable to attach VIF one-more, not enough free physical ports.']);
    expect((await api.req('GET', '/v1/nodes/vif-2/vifs')).json.vifs).toHaveLength(MAX_VIFS_PER_NODE);
  });

  it('VIFs survive node updates and allocations', async () => {
    const n = await availableNode(api, { resource_class: 'vif-rc', name: 'vif-3' });
    expect((await api.req('POST', '/v1/nodes/vif-3/vifs', { body: { id: 'keep-me' } })).status).toBe(204);
    await api.req('PATCH', '/v1/nodes/vif-3', { body: [{ op: 'add', path: '/extra/a', value: 1 }] });
    const c = await api.req('POST', '/v1/allocations', { body: { resource_class: 'vif-rc' } });
    await api.settle();
    expect((await api.req('GET', `/v1/allocations/${c.json.uuid}`)).json.node_uuid).toBe(n.uuid);
    expect((await api.req('GET', '/v1/nodes/vif-3/vifs')).json).toEqual({ vifs: [{ id: 'keep-me' }] });
  });
});
