import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { availableNode, startBaremetal, type BmApi } from './harness.js';
import { resetConfig } from '../../../functions/config.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api.close());

const create = (body: Record<string, unknown>, version?: string) =>
  api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', ...body }, version });

describe('create', () => {
  it('creates in enroll with fake-hardware interfaces, Location and links; power state stays null', async () => {
    const r = await create({ name: 'n-create', resource_class: 'baremetal', extra: { a: 1 } });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`${api.url}/v1/nodes/${r.json.uuid}`);
    expect(r.json).toMatchObject({
      name: 'n-create',
      provision_state: 'enroll',
      power_state: null,
      target_provision_state: null,
      maintenance: false,
      instance_uuid: null,
      allocation_uuid: null,
      resource_class: 'baremetal',
      traits: [],
      extra: { a: 1 },
      deploy_interface: 'fake',
      network_interface: 'noop',
      conductor_group: '',
      conductor: 'berth',
      chassis_uuid: null,
    });
    expect(r.json.links[1]).toEqual({ href: `${api.url}/nodes/${r.json.uuid}`, rel: 'bookmark' });
    expect(r.json.states[0].href).toBe(`${api.url}/v1/nodes/${r.json.uuid}/states`);
    // below 1.11 nodes start available
    const old = await create({}, '1.10');
    expect(old.json.provision_state).toBe('available');
  });

  it('refuses bad input with Ironic texts', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [
        { driver: 'nope' },
        400,
        'No valid host was found. Reason: No conductor service registered which supports driver nope for conductor group "".',
      ],
      [{ foo: 1 }, 400, "Schema error for node: Additional properties are not allowed ('foo' was unexpected)"],
      [{ name: 'bad name' }, 400, "Cannot create node with invalid name 'bad name'"],
      [
        { name: 'detail' },
        400,
        'The word "detail" is reserved and can not be used as a node name. Reserved words are: maintenance, management, states, vendor_passthru, detail, validate.',
      ],
      [{ name: randomUUID() }, 400, ''],
      [{ uuid: 'zz' }, 400, 'Expected UUID for uuid: zz'],
      [
        { maintenance: 'maybe' },
        400,
        "Invalid maintenance: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
      ],
      [{ boot_interface: 'pxe' }, 400, ''],
    ];
    for (const [body, status, msg] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      if (msg) expect(r.fault).toBe(msg);
    }
    expect((await api.req('POST', '/v1/nodes', { body: { name: 'x' } })).fault).toBe("Schema error for node: 'driver' is a required property");
    expect((await create({ owner: 'p1' }, '1.49')).status).toBe(406);
  });

  it('keeps names and UUIDs unique (409), even under a race', async () => {
    const uuid = randomUUID();
    expect((await create({ name: 'n-dup', uuid })).status).toBe(201);
    const byName = await create({ name: 'n-dup' });
    expect(byName.status).toBe(409);
    expect(byName.fault).toBe('A node with name n-dup already exists.');
    const byUuid = await create({ uuid, name: 'n-dup2' });
    expect(byUuid.fault).toBe(`A node with UUID ${uuid} already exists.`);
    // both taken: Ironic names the name
    expect((await create({ uuid, name: 'n-dup' })).fault).toBe('A node with name n-dup already exists.');
    // an instance already on a node: the message names the node being created
    const inst = randomUUID();
    expect((await create({ instance_uuid: inst })).status).toBe(201);
    const other = randomUUID();
    const taken = await create({ uuid: other, instance_uuid: inst });
    expect([taken.status, taken.fault]).toEqual([
      409,
      `Instance ${inst} is already associated with a node, it cannot be associated with this other node ${other}`,
    ]);
    const race = await Promise.all(Array.from({ length: 8 }, () => create({ name: 'n-racer' })));
    expect(race.filter((r) => r.status === 201)).toHaveLength(1);
    expect(race.filter((r) => r.status === 409)).toHaveLength(7);
  });

  it('a project-scoped caller creates nodes owned by its project (Ironic noauth: headers set the project)', async () => {
    const r = await create({ name: 'n-owned' }, undefined);
    expect(r.json.owner).toBeNull();
    const p = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', name: 'n-p9' }, headers: { 'x-project-id': 'p9' } });
    expect(p.json.owner).toBe('p9');
    const clash = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', owner: 'other' }, headers: { 'x-project-id': 'p9' } });
    expect(clash.status).toBe(400);
    expect(clash.fault).toBe('Cannot create a node as a project scoped admin with an owner other than your own project.');
  });
});

describe('read', () => {
  it('shows by UUID or name with fields, 404 for unknown, 400 for a bad identifier', async () => {
    const n = (await create({ name: 'n-read', resource_class: 'read-rc' })).json;
    const byName = await api.req('GET', '/v1/nodes/n-read?fields=uuid,provision_state,allocation_uuid');
    expect(byName.json).toEqual({ uuid: n.uuid, provision_state: 'enroll', links: n.links, allocation_uuid: null });
    expect((await api.req('GET', `/v1/nodes/${n.uuid}`)).json.name).toBe('n-read');
    expect((await api.req('GET', `/v1/nodes/${randomUUID()}`)).status).toBe(404);
    expect((await api.req('GET', '/v1/nodes/n-read?fields=bogus')).fault).toBe('Field bogus is not a valid field.');
    expect((await api.req('GET', '/v1/nodes/n-read?fields=allocation_uuid', { version: '1.51' })).status).toBe(406);
    const old = (await api.req('GET', '/v1/nodes/n-read', { version: '1.51' })).json;
    expect(old.allocation_uuid).toBeUndefined();
    expect(old.owner).not.toBeUndefined();
    expect((await api.req('GET', '/v1/nodes/n-read', { version: '1.49' })).json.owner).toBeUndefined();
    expect((await api.req('GET', '/v1/nodes/no!pe')).status).toBe(400);
  });

  it('lists with filters, default fields, detail and pagination', async () => {
    const a = await availableNode(api, { resource_class: 'list-rc', name: 'list-a' });
    const b = await availableNode(api, { resource_class: 'list-rc', name: 'list-b' });
    const c = (await create({ resource_class: 'list-rc', name: 'list-c' })).json;
    await api.req('PUT', `/v1/nodes/${b.uuid}/maintenance`, { body: { reason: 'fan' } });
    const all = await api.req('GET', '/v1/nodes?resource_class=list-rc');
    expect(all.json.nodes.map((n: any) => n.name)).toEqual(['list-a', 'list-b', 'list-c']);
    expect(Object.keys(all.json.nodes[0]).sort()).toEqual([
      'instance_uuid',
      'links',
      'maintenance',
      'name',
      'power_state',
      'provision_state',
      'uuid',
    ]);
    const maint = await api.req('GET', '/v1/nodes?resource_class=list-rc&maintenance=true');
    expect(maint.json.nodes.map((n: any) => n.uuid)).toEqual([b.uuid]);
    const avail = await api.req('GET', '/v1/nodes?resource_class=list-rc&provision_state=available&maintenance=false');
    expect(avail.json.nodes.map((n: any) => n.uuid)).toEqual([a.uuid]);
    const enroll = await api.req('GET', '/v1/nodes?resource_class=list-rc&provision_state=enroll&fields=uuid,resource_class');
    expect(enroll.json.nodes).toEqual([{ uuid: c.uuid, resource_class: 'list-rc', links: c.links }]);
    expect((await api.req('GET', '/v1/nodes?provision_state=bogus')).fault).toBe('Provision state "bogus" is not valid');
    expect((await api.req('GET', '/v1/nodes?resource_class=x', { version: '1.20' })).status).toBe(406);
    const detail = await api.req('GET', '/v1/nodes/detail?resource_class=list-rc');
    expect(detail.json.nodes[1]).toMatchObject({ name: 'list-b', maintenance_reason: 'fan', driver: 'fake-hardware' });
    const detailQ = await api.req('GET', '/v1/nodes?resource_class=list-rc&detail=true');
    expect(detailQ.json.nodes[0].driver).toBe('fake-hardware');
    expect((await api.req('GET', '/v1/nodes?detail=true&fields=uuid')).status).toBe(400);
    const page = await api.req('GET', '/v1/nodes?resource_class=list-rc&limit=2');
    expect(page.json.nodes).toHaveLength(2);
    expect(page.json.next).toBe(
      `${api.url}/v1/nodes?sort_key=id&sort_dir=asc&fields=instance_uuid,maintenance,power_state,provision_state,uuid,name&limit=2&marker=${b.uuid}`,
    );
    const next = await api.req('GET', `/v1/nodes?resource_class=list-rc&limit=2&marker=${b.uuid}`);
    expect(next.json.nodes.map((n: any) => n.uuid)).toEqual([c.uuid]);
    const assoc = await api.req('GET', '/v1/nodes?resource_class=list-rc&associated=false');
    expect(assoc.json.nodes).toHaveLength(3);
  });

  it('filters by owner, lessee and project', async () => {
    const o = await api.req('POST', '/v1/nodes', {
      body: { driver: 'fake-hardware', resource_class: 'proj-rc', owner: 'o1', lessee: 'l1' },
      headers: { 'openstack-system-scope': 'all' },
    });
    await create({ resource_class: 'proj-rc' });
    expect((await api.req('GET', '/v1/nodes?resource_class=proj-rc&owner=o1')).json.nodes.map((n: any) => n.uuid)).toEqual([o.json.uuid]);
    expect((await api.req('GET', '/v1/nodes?resource_class=proj-rc&lessee=l1')).json.nodes).toHaveLength(1);
    expect((await api.req('GET', '/v1/nodes?resource_class=proj-rc&project=l1')).json.nodes).toHaveLength(1);
    expect((await api.req('GET', '/v1/nodes?resource_class=proj-rc')).json.nodes).toHaveLength(2);
  });
});

describe('update (JSON patch)', () => {
  it('patches fields and validates like Ironic', async () => {
    const n = (await create({ name: 'n-patch', resource_class: 'patch-rc' })).json;
    const r = await api.req('PATCH', `/v1/nodes/${n.uuid}`, {
      body: [
        { op: 'add', path: '/extra/k', value: 'v' },
        { op: 'replace', path: '/description', value: 'rack 4' },
        { op: 'add', path: '/properties/cpus', value: 8 },
        { op: 'replace', path: '/name', value: 'n-patched' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'n-patched', description: 'rack 4', extra: { k: 'v' }, properties: { cpus: 8 } });
    expect(r.json.updated_at).not.toBeNull();
    expect((await api.req('GET', '/v1/nodes/n-patch')).status).toBe(404);
    const traits = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'add', path: '/traits', value: ['CUSTOM_X'] }] });
    expect(traits.status).toBe(400);
    const bad = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'replace', path: '/provision_state', value: 'active' }] });
    expect(bad.fault).toMatch(/^Cannot patch \/provision_state\. Only the following can be updated: automated_clean, /);
    const root = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'remove', path: '/description' }] });
    expect(root.json.description).toBeNull();
    const iface = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'replace', path: '/power_interface', value: 'ipmitool' }] });
    expect(iface.status).toBe(400);
    const newer = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { version: '1.64', body: [{ op: 'add', path: '/lessee', value: 'x' }] });
    expect(newer.status).toBe(406);
  });

  it('keeps instance_uuid unique and refuses overwriting it', async () => {
    const inst = randomUUID();
    const a = (await create({ resource_class: 'inst-rc' })).json;
    const b = (await create({ resource_class: 'inst-rc' })).json;
    expect((await api.req('PATCH', `/v1/nodes/${a.uuid}`, { body: [{ op: 'add', path: '/instance_uuid', value: inst }] })).status).toBe(200);
    const again = await api.req('PATCH', `/v1/nodes/${b.uuid}`, { body: [{ op: 'add', path: '/instance_uuid', value: inst }] });
    expect(again.status).toBe(409);
    const over = await api.req('PATCH', `/v1/nodes/${a.uuid}`, { body: [{ op: 'replace', path: '/instance_uuid', value: randomUUID() }] });
    expect(over.status).toBe(409);
    expect(over.fault).toBe(`Node ${a.uuid} is associated with instance ${inst}.`);
    expect((await api.req('PATCH', `/v1/nodes/${a.uuid}`, { body: [{ op: 'remove', path: '/instance_uuid' }] })).json.instance_uuid).toBeNull();
    expect((await api.req('PATCH', `/v1/nodes/${b.uuid}`, { body: [{ op: 'add', path: '/instance_uuid', value: inst }] })).status).toBe(200);
  });
});

describe('traits', () => {
  it('sets, adds, lists and removes node traits', async () => {
    const n = (await create({ name: 'n-traits' })).json;
    expect((await api.req('PUT', '/v1/nodes/n-traits/traits', { body: { traits: ['CUSTOM_B', 'CUSTOM_A'] } })).status).toBe(204);
    const add = await api.req('PUT', '/v1/nodes/n-traits/traits/HW_CPU_X86_AVX');
    expect(add.status).toBe(204);
    expect(add.headers.get('location')).toBe(`${api.url}/v1/nodes/n-traits/traits/HW_CPU_X86_AVX`);
    expect((await api.req('GET', '/v1/nodes/n-traits/traits')).json).toEqual({ traits: ['CUSTOM_A', 'CUSTOM_B', 'HW_CPU_X86_AVX'] });
    expect((await api.req('GET', `/v1/nodes/${n.uuid}?fields=traits`)).json.traits).toEqual(['CUSTOM_A', 'CUSTOM_B', 'HW_CPU_X86_AVX']);
    const missing = await api.req('DELETE', '/v1/nodes/n-traits/traits/CUSTOM_Z');
    expect(missing.status).toBe(404);
    expect(missing.fault).toBe(`Node ${n.uuid} doesn't have a trait 'CUSTOM_Z'`);
    expect((await api.req('DELETE', '/v1/nodes/n-traits/traits/CUSTOM_A')).status).toBe(204);
    const bad = await api.req('PUT', '/v1/nodes/n-traits/traits/lowercase');
    expect(bad.status).toBe(400);
    expect(bad.fault).toContain('Schema error for trait:');
    const both = await api.req('PUT', '/v1/nodes/n-traits/traits/CUSTOM_Q', { body: { traits: ['CUSTOM_Q'] } });
    expect(both.status).toBe(400);
    const tooMany = await api.req('PUT', '/v1/nodes/n-traits/traits', { body: { traits: Array.from({ length: 51 }, (_, i) => `CUSTOM_T${i}`) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.fault).toContain('(51 vs. 50)');
    expect((await api.req('DELETE', '/v1/nodes/n-traits/traits')).status).toBe(204);
    expect((await api.req('GET', '/v1/nodes/n-traits/traits')).json.traits).toEqual([]);
    // below 1.37 the path falls through to the nodes controller, as in Ironic
    expect((await api.req('GET', '/v1/nodes/n-traits/traits', { version: '1.36' })).status).toBe(406);
    const noNode = await api.req('GET', '/v1/nodes/no-such-node/traits', { version: '1.36' });
    expect([noNode.status, noNode.fault]).toEqual([404, 'Node no-such-node could not be found.']);
    expect((await api.req('PUT', '/v1/nodes/n-traits/traits', { version: '1.36', body: { traits: [] } })).status).toBe(405);
    const del = await api.req('DELETE', '/v1/nodes/n-traits/traits/CUSTOM_A', { version: '1.36' });
    expect([del.status, del.fault]).toEqual([404, 'Resource could not be found.']);
  });
});

describe('states, power and provisioning', () => {
  it('walks enroll -> manageable -> available -> active -> available asynchronously (202, then the state changes)', async () => {
    const n = (await create({ name: 'n-states', resource_class: 'states-rc' })).json;
    // hold this node's actions (the conductor's worker) until the test lets them run
    let release: () => void = () => undefined;
    api.runner.interceptor = async (_m, state, input) => {
      if (state === 'AdvanceNode' && input.node === n.uuid) await new Promise<void>((r) => (release = r));
    };
    const step = async () => {
      release();
      await api.settle();
    };
    try {
      const manage = await api.req('PUT', '/v1/nodes/n-states/states/provision', { body: { target: 'manage' } });
      expect(manage.status).toBe(202);
      expect(manage.text).toBe('');
      expect(manage.headers.get('location')).toBe(`${api.url}/v1/nodes/n-states/states`);
      expect((await api.req('GET', '/v1/nodes/n-states/states')).json).toMatchObject({
        provision_state: 'verifying',
        target_provision_state: 'manageable',
      });
      // the node is locked while its action runs (Ironic's reservation)
      const locked = await api.req('PUT', '/v1/nodes/n-states/states/provision', { body: { target: 'provide' } });
      expect(locked.status).toBe(409);
      expect(locked.fault).toBe(`Node ${n.uuid} is locked by host berth, please retry after the current operation is completed.`);
      expect((await api.req('PATCH', '/v1/nodes/n-states', { body: [{ op: 'add', path: '/extra/x', value: 1 }] })).status).toBe(409);
      expect((await api.req('PUT', '/v1/nodes/n-states/maintenance')).status).toBe(409);
      await step();
      expect((await api.req('GET', '/v1/nodes/n-states/states')).json).toMatchObject({ provision_state: 'manageable', target_provision_state: null });
      await api.req('PUT', '/v1/nodes/n-states/states/provision', { body: { target: 'provide' } });
      expect((await api.req('GET', '/v1/nodes/n-states')).json).toMatchObject({
        provision_state: 'cleaning',
        target_provision_state: 'available',
        reservation: 'berth',
      });
      await step();
      // fake hardware has nothing to wait for: the new power state is stored before the 202
      expect((await api.req('PUT', '/v1/nodes/n-states/states/power', { body: { target: 'power on' } })).status).toBe(202);
      expect((await api.req('GET', '/v1/nodes/n-states')).json).toMatchObject({
        power_state: 'power on',
        target_power_state: null,
        provision_state: 'available',
      });
      await api.req('PUT', '/v1/nodes/n-states/states/provision', { body: { target: 'active', configdrive: 'aGVsbG8=' } });
      expect((await api.req('GET', '/v1/nodes/n-states')).json).toMatchObject({ provision_state: 'deploying', target_provision_state: 'active' });
      await step();
      const active = (await api.req('GET', '/v1/nodes/n-states')).json;
      expect(active).toMatchObject({ provision_state: 'active', target_provision_state: null, reservation: null });
      expect(active.instance_info.configdrive).toBe('******');
      await api.req('PUT', '/v1/nodes/n-states/states/provision', { body: { target: 'deleted' } });
      expect((await api.req('GET', '/v1/nodes/n-states')).json).toMatchObject({ provision_state: 'deleting', target_provision_state: 'available' });
      await step();
      expect((await api.req('GET', `/v1/nodes/${n.uuid}`)).json).toMatchObject({
        provision_state: 'available',
        instance_info: {},
        reservation: null,
      });
    } finally {
      api.runner.interceptor = undefined;
      release();
    }
  });

  it('an action finishes even if an allocation reserved the node meanwhile (the worker re-applies its write)', async () => {
    const n = await availableNode(api, { resource_class: 'overlap-rc' });
    // slowed down, fake hardware powers the node in a node-action execution, like real hardware
    process.env.BAREMETAL_FAKE_DELAY_MS = '1';
    resetConfig();
    let release: () => void = () => undefined;
    api.runner.interceptor = async (_m, state, input) => {
      if (state === 'AdvanceNode' && input.node === n.uuid) await new Promise<void>((r) => (release = r));
    };
    try {
      expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/power`, { body: { target: 'power on' } })).status).toBe(202);
      const c = await api.req('POST', '/v1/allocations', { body: { resource_class: 'overlap-rc' } });
      // the allocation's execution runs while the power action is held
      const a = await (async () => {
        for (;;) {
          const g = (await api.req('GET', `/v1/allocations/${c.json.uuid}`)).json;
          if (g.state !== 'allocating') return g;
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid });
      release();
      await api.settle();
      expect((await api.req('GET', `/v1/nodes/${n.uuid}`)).json).toMatchObject({
        power_state: 'power on',
        target_power_state: null,
        reservation: null,
        instance_uuid: c.json.uuid,
      });
    } finally {
      api.runner.interceptor = undefined;
      release();
      delete process.env.BAREMETAL_FAKE_DELAY_MS;
      resetConfig();
    }
  });

  it('refuses impossible transitions and bad requests with Ironic texts', async () => {
    const n = await availableNode(api, { resource_class: 'refuse-rc', name: 'n-refuse' });
    const r1 = await api.req('PUT', '/v1/nodes/n-refuse/states/provision', { body: { target: 'provide' } });
    expect(r1.status).toBe(400);
    expect(r1.fault).toBe(`The requested action "provide" can not be performed on node "${n.uuid}" while it is in state "available".`);
    expect((await api.req('PUT', '/v1/nodes/n-refuse/states/provision', { body: {} })).fault).toBe('Missing mandatory parameter: target');
    expect((await api.req('PUT', '/v1/nodes/n-refuse/states/provision', { body: { target: 'active', foo: 1 } })).fault).toBe(
      'Unexpected arguments: foo',
    );
    expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'manage' }, version: '1.3' })).status).toBe(406);
    // names need 1.5
    expect((await api.req('GET', '/v1/nodes/n-refuse', { version: '1.4' })).status).toBe(404);
    expect((await api.req('PUT', '/v1/nodes/n-refuse/states/provision', { body: { target: 'clean' } })).status).toBe(400);
    const power = await api.req('PUT', '/v1/nodes/n-refuse/states/power', { body: { target: 'sideways' } });
    expect(power.fault).toBe(`The requested action "sideways" can not be performed on node "n-refuse" while it is in state "power off".`);
    expect((await api.req('PUT', '/v1/nodes/n-refuse/states/power', { body: { target: 'soft power off' }, version: '1.26' })).status).toBe(406);
    await api.req('PUT', '/v1/nodes/n-refuse/maintenance');
    const maint = await api.req('PUT', '/v1/nodes/n-refuse/states/provision', { body: { target: 'active' } });
    expect(maint.fault).toBe(`The provisioning operation can't be performed on node ${n.uuid} because it's in maintenance mode.`);
    expect((await api.req('GET', '/v1/nodes/n-refuse')).json).toMatchObject({ maintenance: true, maintenance_reason: null });
    expect((await api.req('DELETE', '/v1/nodes/n-refuse/maintenance')).status).toBe(202);
    expect((await api.req('GET', '/v1/nodes/n-refuse')).json.maintenance).toBe(false);
  });
});

describe('delete', () => {
  it('deletes nodes where Ironic allows it', async () => {
    const enroll = (await create({ name: 'n-del' })).json;
    expect((await api.req('DELETE', '/v1/nodes/n-del')).status).toBe(204);
    expect((await api.req('GET', `/v1/nodes/${enroll.uuid}`)).status).toBe(404);
    // the name is free again
    expect((await create({ name: 'n-del' })).status).toBe(201);
    const active = await availableNode(api, { resource_class: 'del-rc' });
    await api.req('PUT', `/v1/nodes/${active.uuid}/states/provision`, { body: { target: 'active' } });
    await api.settle();
    const refused = await api.req('DELETE', `/v1/nodes/${active.uuid}`);
    expect(refused.status).toBe(409);
    expect(refused.fault).toBe(
      `Can not delete node "${active.uuid}" while it is in provision state "active". Valid provision states to perform deletion are: "('manageable', 'enroll', 'adopt failed', 'available')", or set the node into maintenance mode`,
    );
    await api.req('PUT', `/v1/nodes/${active.uuid}/maintenance`);
    expect((await api.req('DELETE', `/v1/nodes/${active.uuid}`)).status).toBe(204);
  });
});
