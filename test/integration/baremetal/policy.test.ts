/**
 * Owner/lessee scoping with Ironic's new (secure RBAC) defaults. Locally the identity
 * comes from the headers keystonemiddleware would set (X-Project-Id, X-Roles,
 * OpenStack-System-Scope); behind API Gateway it comes from the authorizer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaremetal, type BmApi } from './harness.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal({ BAREMETAL_POLICY_MODE: 'secure-rbac' });
});
afterAll(async () => {
  delete process.env.BAREMETAL_POLICY_MODE;
  await api.close();
});

const sysAdmin = { 'openstack-system-scope': 'all', 'x-roles': 'admin,member,reader' };
const project = (p: string, roles = 'member,reader') => ({ 'x-project-id': p, 'x-roles': roles });

async function node(body: Record<string, unknown>): Promise<string> {
  const r = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: 'pol-rc', ...body }, headers: sysAdmin });
  expect(r.status).toBe(201);
  return r.json.uuid;
}

async function makeAvailable(uuid: string) {
  for (const target of ['manage', 'provide']) {
    expect((await api.req('PUT', `/v1/nodes/${uuid}/states/provision`, { body: { target }, headers: sysAdmin })).status).toBe(202);
    await api.settle();
  }
  await api.req('PUT', `/v1/nodes/${uuid}/states/power`, { body: { target: 'power off' }, headers: sysAdmin });
  await api.settle();
}

describe('secure RBAC', () => {
  it('only system-scoped admins create nodes; project members see their own and leased nodes, others get 404', async () => {
    const denied = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware' }, headers: project('p1', 'member') });
    expect(denied.status).toBe(403);
    expect(denied.fault).toBe('Access was denied to the following resource: baremetal:node:create');
    const owned = await node({ owner: 'p1', name: 'pol-owned' });
    const leased = await node({ owner: 'p9', lessee: 'p1', name: 'pol-leased' });
    const other = await node({ owner: 'p2', name: 'pol-other' });
    const list = await api.req('GET', '/v1/nodes', { headers: project('p1') });
    expect(list.status).toBe(200);
    expect(list.json.nodes.map((n: any) => n.uuid).sort()).toEqual([owned, leased].sort());
    expect((await api.req('GET', '/v1/nodes', { headers: sysAdmin })).json.nodes.map((n: any) => n.uuid)).toContain(other);
    const hidden = await api.req('GET', `/v1/nodes/${other}`, { headers: project('p1') });
    expect(hidden.status).toBe(404);
    expect(hidden.fault).toBe(`Node ${other} could not be found.`);
    expect((await api.req('GET', `/v1/nodes/${leased}`, { headers: project('p1') })).status).toBe(200);
    // lessee members may not change the owner's node, the owner may
    expect(
      (await api.req('PATCH', `/v1/nodes/${leased}`, { body: [{ op: 'add', path: '/properties/x', value: 1 }], headers: project('p1') })).status,
    ).toBe(403);
    expect(
      (await api.req('PATCH', `/v1/nodes/${owned}`, { body: [{ op: 'add', path: '/properties/x', value: 1 }], headers: project('p1') })).status,
    ).toBe(200);
    // nobody without a token-like identity gets anything
    expect((await api.req('GET', '/v1/nodes', { headers: { 'x-roles': 'reader' } })).status).toBe(403);
  });

  it('allocations take the caller project as owner and only match its nodes', async () => {
    const mine = await node({ owner: 'pa', name: 'pol-mine', resource_class: 'pol2-rc' });
    const theirs = await node({ owner: 'pb', name: 'pol-theirs', resource_class: 'pol2-rc' });
    await makeAvailable(mine);
    await makeAvailable(theirs);
    const c = await api.req('POST', '/v1/allocations', { body: { resource_class: 'pol2-rc' }, headers: project('pa') });
    expect(c.status).toBe(201);
    expect(c.json.owner).toBe('pa');
    await api.settle();
    const a = (await api.req('GET', `/v1/allocations/${c.json.uuid}`, { headers: project('pa') })).json;
    expect(a).toMatchObject({ state: 'active', node_uuid: mine });
    // another project cannot see it, list it or delete it
    expect((await api.req('GET', `/v1/allocations/${c.json.uuid}`, { headers: project('pb') })).status).toBe(404);
    expect((await api.req('GET', '/v1/allocations', { headers: project('pb') })).json.allocations).toEqual([]);
    expect((await api.req('DELETE', `/v1/allocations/${c.json.uuid}`, { headers: project('pb') })).status).toBe(404);
    // a candidate the caller's project cannot use is "not found"
    const cand = await api.req('POST', '/v1/allocations', {
      body: { resource_class: 'pol2-rc', candidate_nodes: ['pol-theirs'] },
      headers: project('pa'),
    });
    expect(cand.status).toBe(400);
    expect(cand.fault).toBe('Nodes cannot be found: pol-theirs');
    // an owner for another project needs create_restricted
    const foreign = await api.req('POST', '/v1/allocations', { body: { resource_class: 'pol2-rc', owner: 'pb' }, headers: project('pa') });
    expect(foreign.status).toBe(403);
    // readers cannot create
    expect((await api.req('POST', '/v1/allocations', { body: { resource_class: 'pol2-rc' }, headers: project('pa', 'reader') })).status).toBe(403);
    expect((await api.req('DELETE', `/v1/allocations/${c.json.uuid}`, { headers: project('pa') })).status).toBe(204);
  });
});
