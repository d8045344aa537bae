import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { allocate, availableNode, startBaremetal, type BmApi } from './harness.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api.close());

async function allocationCount(): Promise<number> {
  return (await api.req('GET', '/v1/allocations')).json.allocations.length;
}

async function node(uuid: string): Promise<any> {
  return (await api.req('GET', `/v1/nodes/${uuid}`)).json;
}

describe('microversion gates', () => {
  it('below 1.52: GET is 404, POST and DELETE are 405; node allocation is 404', async () => {
    const get = await api.req('GET', '/v1/allocations', { version: '1.51' });
    expect(get.status).toBe(404);
    expect(get.fault).toBe('The API version does not allow allocations');
    expect((await api.req('POST', '/v1/allocations', { version: '1.51', body: { resource_class: 'x' } })).status).toBe(405);
    expect((await api.req('DELETE', '/v1/allocations/abc', { version: '1.51' })).status).toBe(405);
    expect((await api.req('GET', '/v1/nodes/abc/allocation', { version: '1.51' })).status).toBe(404);
    expect(await allocationCount()).toBe(0);
  });

  it('PATCH below 1.57 is 405; owner below 1.60 is 406; node (backfill) below 1.58 is 400', async () => {
    const a = await allocate(api, { resource_class: 'gate-rc' });
    const p = await api.req('PATCH', `/v1/allocations/${a.uuid}`, { version: '1.56', body: [] });
    expect(p.status).toBe(405);
    expect(p.fault).toBe('The API version does not allow updating allocations');
    expect((await api.req('POST', '/v1/allocations', { version: '1.59', body: { resource_class: 'x', owner: 'p' } })).status).toBe(406);
    expect((await api.req('GET', '/v1/allocations?owner=p', { version: '1.59' })).status).toBe(406);
    expect((await api.req('GET', `/v1/allocations/${a.uuid}?fields=owner`, { version: '1.59' })).status).toBe(406);
    expect((await api.req('GET', `/v1/allocations/${a.uuid}`, { version: '1.59' })).json.owner).toBeUndefined();
    const bf = await api.req('POST', '/v1/allocations', { version: '1.57', body: { node: 'some-node' } });
    expect(bf.status).toBe(400);
    expect(bf.fault).toBe('Cannot set node when creating an allocation in this API version');
    await api.req('DELETE', `/v1/allocations/${a.uuid}`);
  });
});

describe('validation: 400/409 and nothing left behind', () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    [
      'an unknown field',
      { resource_class: 'baremetal', foo: 1 },
      "Schema error for allocation: Additional properties are not allowed ('foo' was unexpected)",
    ],
    [
      'a bad trait',
      { resource_class: 'baremetal', traits: ['bad'] },
      "Schema error for allocation: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'",
    ],
    ['traits not a list', { resource_class: 'baremetal', traits: 'x' }, "Schema error for allocation: 'x' is not of type 'array', 'null'"],
    ['an invalid name', { resource_class: 'baremetal', name: 'in valid' }, "Cannot create allocation with invalid name 'in valid'"],
    ['an unknown candidate', { resource_class: 'baremetal', candidate_nodes: ['nosuch'] }, 'Nodes cannot be found: nosuch'],
    ['an impossible candidate', { resource_class: 'baremetal', candidate_nodes: ['no!pe'] }, 'Nodes cannot be found: no!pe'],
    ['no resource class', {}, 'The resource_class field is mandatory when not backfilling'],
    ['a bad uuid', { resource_class: 'baremetal', uuid: 'notuuid' }, 'Expected UUID for uuid: notuuid'],
    ['a long resource class', { resource_class: 'a'.repeat(81) }, `Schema error for allocation: '${'a'.repeat(81)}' is too long`],
    ['an unknown backfill node', { node: 'no-such-node' }, 'Node no-such-node could not be found.'],
  ];
  for (const [what, body, msg] of bad) {
    it(`refuses ${what}`, async () => {
      const before = await allocationCount();
      const r = await api.req('POST', '/v1/allocations', { body });
      expect(r.status).toBe(400);
      expect(r.fault).toBe(msg);
      expect(await allocationCount()).toBe(before);
    });
  }

  it('duplicate names and UUIDs are 409 and change nothing', async () => {
    const uuid = randomUUID();
    const first = await api.req('POST', '/v1/allocations', { body: { resource_class: 'dup-rc', name: 'dup-name', uuid } });
    expect(first.status).toBe(201);
    const before = await allocationCount();
    const byName = await api.req('POST', '/v1/allocations', { body: { resource_class: 'dup-rc', name: 'dup-name' } });
    expect(byName.status).toBe(409);
    expect(byName.fault).toBe('An allocation with name dup-name already exists.');
    const byUuid = await api.req('POST', '/v1/allocations', { body: { resource_class: 'dup-rc', uuid, name: 'other-name' } });
    expect(byUuid.status).toBe(409);
    expect(byUuid.fault).toBe(`An allocation with UUID ${uuid} already exists.`);
    expect(await allocationCount()).toBe(before);
    // the refused name is still free
    expect((await api.req('POST', '/v1/allocations', { body: { resource_class: 'dup-rc', name: 'other-name' } })).status).toBe(201);
    await api.settle();
  });
});

describe('processing', () => {
  it('creates in allocating, answers 201 with Location, ends active on a matching node', async () => {
    const n = await availableNode(api, { resource_class: 'proc-rc' }, { traits: ['CUSTOM_GOLD', 'HW_CPU_X86_AVX'] });
    const c = await api.req('POST', '/v1/allocations', {
      body: { resource_class: 'proc-rc', traits: ['CUSTOM_GOLD'], name: 'proc-1', extra: { k: 'v' } },
    });
    expect(c.status).toBe(201);
    expect(c.json.state).toBe('allocating');
    expect(c.json.node_uuid).toBeNull();
    expect(c.headers.get('location')).toBe(`${api.url}/v1/allocations/${c.json.uuid}`);
    expect(c.json.links).toEqual([
      { href: `${api.url}/v1/allocations/${c.json.uuid}`, rel: 'self' },
      { href: `${api.url}/allocations/${c.json.uuid}`, rel: 'bookmark' },
    ]);
    await api.settle();
    const a = (await api.req('GET', '/v1/allocations/proc-1')).json;
    expect(a).toMatchObject({ state: 'active', node_uuid: n.uuid, last_error: null, traits: ['CUSTOM_GOLD'], extra: { k: 'v' } });
    const nd = await node(n.uuid);
    expect(nd).toMatchObject({ instance_uuid: a.uuid, allocation_uuid: a.uuid, instance_info: { traits: ['CUSTOM_GOLD'] } });
    const byNode = await api.req('GET', `/v1/nodes/${n.uuid}/allocation?fields=uuid,state`);
    expect(byNode.json).toEqual({ uuid: a.uuid, state: 'active', links: a.links });
  });

  it("ends in error with Ironic's last_error texts", async () => {
    const none = await allocate(api, { resource_class: 'nothing-here' });
    expect(none.state).toBe('error');
    expect(none.last_error).toBe(`Failed to process allocation ${none.uuid}: no available nodes match the resource class nothing-here.`);
    const n = await availableNode(api, { resource_class: 'trait-rc' }, { traits: ['CUSTOM_X'] });
    const traits = await allocate(api, { resource_class: 'trait-rc', traits: ['CUSTOM_Y', 'CUSTOM_Z'] });
    expect(traits.last_error).toBe(`Failed to process allocation ${traits.uuid}: no suitable nodes have the requested traits CUSTOM_Y, CUSTOM_Z.`);
    const other = await availableNode(api, { resource_class: 'other-rc' });
    const cand = await allocate(api, { resource_class: 'trait-rc', candidate_nodes: [other.uuid] });
    expect(cand.last_error).toBe(
      `Failed to process allocation ${cand.uuid}: none of the requested nodes are available and match the resource class trait-rc.`,
    );
    expect(cand.candidate_nodes).toEqual([other.uuid]);
    // none of the failures touched the node
    expect((await node(n.uuid)).instance_uuid).toBeNull();
  });

  it('only considers available, powered, unassociated nodes outside maintenance', async () => {
    const noPower = await availableNode(api, { resource_class: 'elig-rc' }, { power: false });
    const maint = await availableNode(api, { resource_class: 'elig-rc' });
    expect((await api.req('PUT', `/v1/nodes/${maint.uuid}/maintenance`, { body: { reason: 'x' } })).status).toBe(202);
    const manageable = await availableNode(api, { resource_class: 'elig-rc' });
    await api.req('PUT', `/v1/nodes/${manageable.uuid}/states/provision`, { body: { target: 'manage' } });
    await api.settle();
    const a = await allocate(api, { resource_class: 'elig-rc' });
    expect(a.state).toBe('error');
    const good = await availableNode(api, { resource_class: 'elig-rc' });
    const b = await allocate(api, { resource_class: 'elig-rc' });
    expect(b).toMatchObject({ state: 'active', node_uuid: good.uuid });
    for (const n of [noPower, maint, manageable]) expect((await node(n.uuid)).instance_uuid).toBeNull();
  });

  it('honours candidate_nodes given by name, keeps their order, and tries a node named like the allocation first', async () => {
    const nodes = [];
    for (let i = 0; i < 4; i++) nodes.push(await availableNode(api, { resource_class: 'name-rc', name: `name-node-${i}` }));
    for (let i = 0; i < 3; i++) {
      const a = await allocate(api, { resource_class: 'name-rc', name: `name-node-${3 - i}` });
      expect(a.node_uuid).toBe(nodes[3 - i]!.uuid);
    }
    const viaName = await allocate(api, { resource_class: 'name-rc', candidate_nodes: ['name-node-0'] });
    expect(viaName).toMatchObject({ state: 'active', node_uuid: nodes[0]!.uuid, candidate_nodes: [nodes[0]!.uuid] });
  });

  it('matches owner against the node owner or lessee', async () => {
    const owned = await availableNode(api, { resource_class: 'own-rc', owner: 'proj-a' }, { headers: { 'openstack-system-scope': 'all' } });
    const leased = await availableNode(api, { resource_class: 'own-rc', lessee: 'proj-b' });
    await availableNode(api, { resource_class: 'own-rc' });
    const a = await allocate(api, { resource_class: 'own-rc', owner: 'proj-a' });
    expect(a).toMatchObject({ state: 'active', node_uuid: owned.uuid, owner: 'proj-a' });
    const b = await allocate(api, { resource_class: 'own-rc', owner: 'proj-b' });
    expect(b).toMatchObject({ state: 'active', node_uuid: leased.uuid });
    const c = await allocate(api, { resource_class: 'own-rc', owner: 'proj-c' });
    expect(c.state).toBe('error');
  });
});

describe('reading', () => {
  it('lists with filters, fields, pagination and next links', async () => {
    await allocate(api, { resource_class: 'list-rc', name: 'list-1' });
    await allocate(api, { resource_class: 'list-rc', name: 'list-2' });
    await allocate(api, { resource_class: 'list-rc', name: 'list-3' });
    const rc = await api.req('GET', '/v1/allocations?resource_class=list-rc&fields=name,state');
    expect(rc.json.allocations.map((a: any) => a.name)).toEqual(['list-1', 'list-2', 'list-3']);
    expect(Object.keys(rc.json.allocations[0])).toEqual(['name', 'state', 'links']);
    const errs = await api.req('GET', '/v1/allocations?state=error&resource_class=list-rc');
    expect(errs.json.allocations).toHaveLength(3);
    expect((await api.req('GET', '/v1/allocations?state=active&resource_class=list-rc')).json.allocations).toHaveLength(0);
    const page = await api.req('GET', '/v1/allocations?resource_class=list-rc&limit=2');
    expect(page.json.allocations).toHaveLength(2);
    const next = new URL(page.json.next);
    expect(next.pathname).toBe('/v1/allocations');
    expect(next.search).toBe(`?sort_key=id&sort_dir=asc&limit=2&marker=${page.json.allocations[1].uuid}`);
    const rest = await api.req('GET', `/v1/allocations${next.search}&resource_class=list-rc`);
    expect(rest.json.allocations.map((a: any) => a.name)).toEqual(['list-3']);
    const desc = await api.req('GET', '/v1/allocations?resource_class=list-rc&sort_dir=desc&sort_key=name');
    expect(desc.json.allocations.map((a: any) => a.name)).toEqual(['list-3', 'list-2', 'list-1']);
    expect((await api.req('GET', '/v1/allocations?fields=bogus')).fault).toBe('Field(s) "bogus" are not valid');
    expect((await api.req('GET', '/v1/allocations?limit=0')).fault).toBe('Limit must be positive');
    expect((await api.req('GET', '/v1/allocations?sort_key=traits')).status).toBe(400);
    expect((await api.req('GET', '/v1/allocations?node=nosuch')).fault).toBe('Node nosuch could not be found.');
  });

  it('filters by node, also together with state (where Ironic answers 500)', async () => {
    const n = await availableNode(api, { resource_class: 'bynode-rc', name: 'bynode' });
    const a = await allocate(api, { resource_class: 'bynode-rc' });
    const byNode = await api.req('GET', '/v1/allocations?node=bynode');
    expect(byNode.json.allocations.map((x: any) => x.uuid)).toEqual([a.uuid]);
    const both = await api.req('GET', `/v1/allocations?node=${n.uuid}&state=active`);
    expect(both.status).toBe(200);
    expect(both.json.allocations).toHaveLength(1);
    expect((await api.req('GET', '/v1/allocations?node=bynode&state=error')).json.allocations).toHaveLength(0);
  });

  it('shows by UUID or name; unknown is 404; node without allocation is 404', async () => {
    expect((await api.req('GET', `/v1/allocations/${randomUUID()}`)).status).toBe(404);
    expect((await api.req('GET', '/v1/allocations/no-such')).fault).toBe('Allocation no-such could not be found.');
    const n = await availableNode(api, { resource_class: 'lonely-rc', name: 'lonely' });
    const r = await api.req('GET', '/v1/nodes/lonely/allocation');
    expect(r.status).toBe(404);
    expect(r.fault).toBe('Allocation for node lonely was not found');
    expect((await api.req('GET', '/v1/nodes/nosuch/allocation')).status).toBe(400);
    expect(n.uuid).toBeTruthy();
  });
});

describe('update', () => {
  it('patches name and extra only', async () => {
    const a = await allocate(api, { resource_class: 'patch-rc', name: 'patch-1', extra: { a: 1 } });
    const p = await api.req('PATCH', '/v1/allocations/patch-1', {
      body: [
        { op: 'replace', path: '/name', value: 'patch-2' },
        { op: 'add', path: '/extra/b', value: 'x' },
      ],
    });
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({ uuid: a.uuid, name: 'patch-2', extra: { a: 1, b: 'x' } });
    expect((await api.req('GET', '/v1/allocations/patch-1')).status).toBe(404);
    const rc = await api.req('PATCH', '/v1/allocations/patch-2', { body: [{ op: 'replace', path: '/resource_class', value: 'x' }] });
    expect(rc.fault).toBe('Cannot patch /resource_class. Only the following can be updated: name, extra');
    const missing = await api.req('PATCH', '/v1/allocations/patch-2', { body: [{ op: 'remove', path: '/extra/nope' }] });
    expect(missing.status).toBe(400);
    expect(missing.fault).toBe("Couldn't apply patch '{'op': 'remove', 'path': '/extra/nope'}'. Reason: can't remove a non-existent object 'nope'");
    const badName = await api.req('PATCH', '/v1/allocations/patch-2', { body: [{ op: 'replace', path: '/name', value: 'bad name' }] });
    expect(badName.fault).toBe("Cannot update allocation with invalid name 'bad name'");
    await allocate(api, { resource_class: 'patch-rc', name: 'patch-3' });
    const dup = await api.req('PATCH', '/v1/allocations/patch-2', { body: [{ op: 'replace', path: '/name', value: 'patch-3' }] });
    expect(dup.status).toBe(409);
    expect((await api.req('GET', '/v1/allocations/patch-2')).json.name).toBe('patch-2');
    const removed = await api.req('PATCH', '/v1/allocations/patch-2', { body: [{ op: 'remove', path: '/name' }] });
    expect(removed.json.name).toBeNull();
    // the freed name can be used again
    expect((await api.req('POST', '/v1/allocations', { body: { resource_class: 'patch-rc', name: 'patch-2' } })).status).toBe(201);
    await api.settle();
  });
});

describe('node interplay', () => {
  it('DELETE releases the node; 409 while the node is active unless in maintenance', async () => {
    const n = await availableNode(api, { resource_class: 'del-rc' });
    const a = await allocate(api, { resource_class: 'del-rc' });
    expect(a.node_uuid).toBe(n.uuid);
    await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } });
    await api.settle();
    const refused = await api.req('DELETE', `/v1/allocations/${a.uuid}`);
    expect(refused.status).toBe(409);
    expect(refused.fault).toBe(`Cannot remove allocation ${a.uuid} for node ${n.uuid}, because the node is active (and maintenance mode is off)`);
    expect((await api.req('DELETE', `/v1/nodes/${n.uuid}/allocation`)).status).toBe(409);
    await api.req('PUT', `/v1/nodes/${n.uuid}/maintenance`);
    expect((await api.req('DELETE', `/v1/nodes/${n.uuid}/allocation`)).status).toBe(204);
    expect(await node(n.uuid)).toMatchObject({ instance_uuid: null, allocation_uuid: null, provision_state: 'active' });
    expect((await api.req('GET', `/v1/allocations/${a.uuid}`)).status).toBe(404);
  });

  it('DELETE of an available node releases it for the next allocation', async () => {
    const n = await availableNode(api, { resource_class: 'rel-rc' });
    const a = await allocate(api, { resource_class: 'rel-rc' });
    expect((await api.req('DELETE', `/v1/allocations/${a.uuid}`)).status).toBe(204);
    expect((await node(n.uuid)).instance_uuid).toBeNull();
    const b = await allocate(api, { resource_class: 'rel-rc' });
    expect(b).toMatchObject({ state: 'active', node_uuid: n.uuid });
  });

  it('removing instance_uuid deletes the allocation where Ironic allows it', async () => {
    const n = await availableNode(api, { resource_class: 'rm-rc' });
    const a = await allocate(api, { resource_class: 'rm-rc' });
    const r = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'remove', path: '/instance_uuid' }] });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ instance_uuid: null, allocation_uuid: null });
    expect((await api.req('GET', `/v1/allocations/${a.uuid}`)).status).toBe(404);
    // on an active node it is refused
    const b = await allocate(api, { resource_class: 'rm-rc' });
    await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } });
    await api.settle();
    const refused = await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'remove', path: '/instance_uuid' }] });
    expect(refused.status).toBe(409);
    expect(refused.fault).toContain('with an allocation can not have instance_uuid removed unless it is in one of allowed');
    expect((await node(n.uuid)).allocation_uuid).toBe(b.uuid);
  });

  it('undeploy deletes the allocation and clears the instance', async () => {
    const n = await availableNode(api, { resource_class: 'undeploy-rc' });
    const a = await allocate(api, { resource_class: 'undeploy-rc' });
    await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } });
    await api.settle();
    expect((await node(n.uuid)).provision_state).toBe('active');
    expect((await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'deleted' } })).status).toBe(202);
    await api.settle();
    expect(await node(n.uuid)).toMatchObject({ provision_state: 'available', instance_uuid: null, allocation_uuid: null, instance_info: {} });
    expect((await api.req('GET', `/v1/allocations/${a.uuid}`)).status).toBe(404);
  });

  it('deleting a node in maintenance deletes its allocation', async () => {
    const n = await availableNode(api, { resource_class: 'nodedel-rc' });
    const a = await allocate(api, { resource_class: 'nodedel-rc' });
    const refused = await api.req('DELETE', `/v1/nodes/${n.uuid}`);
    expect(refused.status).toBe(409);
    expect(refused.fault).toBe(`Node ${n.uuid} is associated with instance ${a.uuid}.`);
    await api.req('PUT', `/v1/nodes/${n.uuid}/maintenance`);
    expect((await api.req('DELETE', `/v1/nodes/${n.uuid}`)).status).toBe(204);
    expect((await api.req('GET', `/v1/allocations/${a.uuid}`)).status).toBe(404);
  });
});

describe('backfill (1.58)', () => {
  async function deployedNode(rc: string, instance?: string) {
    const n = await availableNode(api, { resource_class: rc, name: `${rc}-node` }, { traits: ['CUSTOM_BF'] });
    if (instance) await api.req('PATCH', `/v1/nodes/${n.uuid}`, { body: [{ op: 'add', path: '/instance_uuid', value: instance }] });
    await api.req('PUT', `/v1/nodes/${n.uuid}/states/provision`, { body: { target: 'active' } });
    await api.settle();
    return n;
  }

  it('creates an active allocation synchronously, taking the node instance UUID', async () => {
    const inst = randomUUID();
    const n = await deployedNode('bf-rc', inst);
    const r = await api.req('POST', '/v1/allocations', { version: '1.58', body: { node: 'bf-rc-node', traits: ['CUSTOM_BF'] } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ uuid: inst, state: 'active', node_uuid: n.uuid, resource_class: 'bf-rc' });
    expect(await node(n.uuid)).toMatchObject({ instance_uuid: inst, allocation_uuid: inst, instance_info: { traits: ['CUSTOM_BF'] } });
    const again = await api.req('POST', '/v1/allocations', { body: { node: 'bf-rc-node' } });
    expect(again.status).toBe(409);
    expect(again.fault).toBe(`An allocation with UUID ${inst} already exists.`);
    // a taken name is reported before the node is validated, as Ironic inserts first
    await api.req('PATCH', `/v1/allocations/${inst}`, { body: [{ op: 'add', path: '/name', value: 'bf-taken' }] });
    const named = await api.req('POST', '/v1/allocations', { body: { node: 'bf-rc-node', uuid: randomUUID(), name: 'bf-taken' } });
    expect([named.status, named.fault]).toEqual([409, 'An allocation with name bf-taken already exists.']);
  });

  it('validates the node and leaves nothing behind (Ironic: 500 and an error allocation)', async () => {
    const n = await availableNode(api, { resource_class: 'bf2-rc', name: 'bf2-node' });
    const before = await allocationCount();
    const r = await api.req('POST', '/v1/allocations', { body: { node: 'bf2-node', uuid: randomUUID() } });
    expect(r.status).toBe(400);
    expect(r.fault).toMatch(
      new RegExp(
        `^Failed to process allocation .*: Cannot backfill an allocation for node ${n.uuid}: Node must be in the "active" state, but the current state is "available"\\.$`,
      ),
    );
    const d = await deployedNode('bf3-rc');
    const wrong = await api.req('POST', '/v1/allocations', { body: { node: d.uuid, resource_class: 'other', traits: ['CUSTOM_NOPE'] } });
    expect(wrong.status).toBe(400);
    expect(wrong.fault).toContain('Resource class bf3-rc does not match the requested resource class other');
    expect(wrong.fault).toContain("List of traits ['CUSTOM_BF'] does not match the requested traits ['CUSTOM_NOPE']");
    expect(await allocationCount()).toBe(before);
    expect((await node(d.uuid)).allocation_uuid).toBeNull();
  });

  it('refuses a node associated with another instance (409)', async () => {
    const inst = randomUUID();
    const n = await deployedNode('bf4-rc', inst);
    const r = await api.req('POST', '/v1/allocations', { body: { node: n.uuid, uuid: randomUUID() } });
    expect(r.status).toBe(409);
    expect(r.fault).toBe(`Node ${n.uuid} is associated with instance ${inst}.`);
  });
});
