/**
 * Scopes and identities as deployed: the real Lambda handlers of both APIs behind an
 * authorizer (AUTH_STRATEGY=authorizer, the secure-RBAC defaults AWS runs), called with
 * the contexts the Keystone authorizer and a JWT authorizer produce, against DynamoDB
 * Local. Personas: project-scoped members and admins of the owning and of another
 * project, domain-scoped and unscoped Keystone tokens, JWTs with and without the project
 * claim. Nobody without the owning project reaches a node or an allocation: not by
 * UUID or name, not through PATCH, DELETE, power, traits, maintenance or
 * /nodes/{n}/allocation, not as an allocation's candidate_nodes or backfill node, not in
 * a list — and an object without owner is owned by nobody. Placement refuses a
 * domain-scoped admin (oslo.policy: InvalidScope) and request headers never add to the
 * verified identity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { useTable } from '../harness.js';
import { tableState } from '../../fuzz/harness.js';
import { bearerToken, deployedApi, jwt, ks, type CallOptions, type Res, type Who } from './lambda-events.js';
import type { LocalRunner } from '../../../local/state-machines.js';

const SYSTEM_ADMIN = ks({ userId: 'sa', roles: ['admin', 'member', 'reader'], systemScope: 'all' });
const OWNER_MEMBER = ks({ userId: 'om', projectId: 'proj-owner', roles: ['member', 'reader'] });
const OTHER_MEMBER = ks({ userId: 'xm', projectId: 'proj-other', roles: ['member', 'reader'] });
const OTHER_ADMIN = ks({ userId: 'xa', projectId: 'proj-other', roles: ['admin', 'member', 'reader'] });
const DOMAIN_MEMBER = ks({ userId: 'dm', domainId: 'dom', roles: ['member', 'reader'] });
const DOMAIN_ADMIN = ks({ userId: 'da', domainId: 'dom', roles: ['admin', 'member', 'reader'] });
const UNSCOPED_ADMIN = ks({ userId: 'ua', roles: ['admin', 'member', 'reader'] });
const JWT_OWNER = jwt({ sub: 'j-owner', 'custom:project_id': 'proj-owner', 'cognito:groups': ['member', 'reader'] });
const JWT_OTHER = jwt({ sub: 'j-other', 'custom:project_id': 'proj-other', 'cognito:groups': ['member', 'reader'] });
// an access token, or an ID token of a user without the attribute: no project claim
const JWT_NO_PROJECT = jwt({ sub: 'j-none', 'cognito:groups': ['admin', 'member', 'reader'] });

const OUTSIDERS: Record<string, Who> = {
  'member of another project': OTHER_MEMBER,
  'admin of another project': OTHER_ADMIN,
  'domain-scoped member': DOMAIN_MEMBER,
  'domain-scoped admin': DOMAIN_ADMIN,
  'unscoped admin': UNSCOPED_ADMIN,
  'JWT of another project': JWT_OTHER,
  'JWT without project claim': JWT_NO_PROJECT,
};

const saved = { ...process.env };
let bm: Awaited<ReturnType<typeof deployedApi>>;
let placement: Awaited<ReturnType<typeof deployedApi>>;
let runner: LocalRunner;
const RC = `scope-rc-${randomUUID().slice(0, 8)}`;

interface Target {
  /** active, holding `alloc` */
  node: { uuid: string; name: string };
  alloc: string;
  /** available: what candidate_nodes would name */
  spare: string;
  /** active without allocation: what a backfill would name */
  deployed: string;
}
const targets: Record<'owned' | 'unowned', Target> = {} as never;

async function ok(p: Promise<Res>, status: number): Promise<Res> {
  const r = await p;
  expect(r.status, r.text).toBe(status);
  return r;
}

async function node(owner: string | undefined, provision: string[]): Promise<{ uuid: string; name: string }> {
  const name = `scope-${randomUUID().slice(0, 8)}`;
  const c = await ok(
    bm(SYSTEM_ADMIN, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware', name, resource_class: RC, ...(owner ? { owner } : {}) } }),
    201,
  );
  const uuid = c.json.uuid as string;
  const step = async (path: string, body: unknown) => {
    await ok(bm(SYSTEM_ADMIN, 'PUT', `/v1/nodes/${uuid}/states/${path}`, { body }), 202);
    await runner.idle();
  };
  await step('power', { target: 'power off' });
  for (const target of provision) await step('provision', { target });
  return { uuid, name };
}

async function allocation(who: Who, candidate: string): Promise<string> {
  const c = await ok(bm(who, 'POST', '/v1/allocations', { body: { resource_class: RC, candidate_nodes: [candidate] } }), 201);
  await runner.idle();
  const a = await ok(bm(SYSTEM_ADMIN, 'GET', `/v1/allocations/${c.json.uuid}`), 200);
  expect(a.json).toMatchObject({ state: 'active', node_uuid: candidate });
  return c.json.uuid;
}

beforeAll(async () => {
  await useTable({
    AUTH_STRATEGY: 'authorizer',
    PLACEMENT_POLICY_MODE: 'secure-rbac',
    POWERTOOLS_METRICS_DISABLED: 'true',
    BAREMETAL_INDEX_RETRIES: '0',
  });
  delete process.env.BAREMETAL_POLICY_MODE; // behind an authorizer the default is secure-rbac
  runner = (await import('../../../local/state-machines.js')).localRunner();
  bm = await deployedApi('baremetal');
  placement = await deployedApi('placement');
  for (const [key, owner] of [
    ['owned', 'proj-owner'],
    ['unowned', undefined],
  ] as const) {
    const held = await node(owner, ['manage', 'provide']);
    const spare = await node(owner, ['manage', 'provide']);
    const deployed = await node(owner, ['manage', 'provide', 'active']);
    // the owner's member allocates its own node; the operator (system scope) the unowned one
    const alloc = await allocation(owner ? OWNER_MEMBER : SYSTEM_ADMIN, held.uuid);
    targets[key] = { node: held, alloc, spare: spare.uuid, deployed: deployed.uuid };
  }
}, 180_000);
afterAll(async () => {
  await runner?.idle();
  process.env = saved;
  const { resetConfig } = await import('../../../functions/config.js');
  resetConfig();
});

const state = () => tableState(process.env.DDB_ENDPOINT!, process.env.TABLE_NAME!);

/** Everything a caller could try on a node and its allocation, by someone not in the owning project. */
function operations(t: Target): Array<[string, string, string, CallOptions?]> {
  const n = t.node.uuid;
  return [
    ['get by uuid', 'GET', `/v1/nodes/${n}`],
    ['get by name', 'GET', `/v1/nodes/${t.node.name}`],
    ['patch', 'PATCH', `/v1/nodes/${n}`, { body: [{ op: 'replace', path: '/description', value: 'taken' }] }],
    ['delete', 'DELETE', `/v1/nodes/${n}`],
    ['power', 'PUT', `/v1/nodes/${n}/states/power`, { body: { target: 'power on' } }],
    ['traits', 'PUT', `/v1/nodes/${n}/traits`, { body: { traits: ['CUSTOM_TAKEN'] } }],
    ['maintenance', 'PUT', `/v1/nodes/${n}/maintenance`, { body: { reason: 'taken' } }],
    ['node allocation', 'GET', `/v1/nodes/${n}/allocation`],
    ['delete node allocation', 'DELETE', `/v1/nodes/${n}/allocation`],
    ['get allocation', 'GET', `/v1/allocations/${t.alloc}`],
    ['patch allocation', 'PATCH', `/v1/allocations/${t.alloc}`, { body: [{ op: 'add', path: '/extra/taken', value: 'yes' }] }],
    ['delete allocation', 'DELETE', `/v1/allocations/${t.alloc}`],
    ['candidate_nodes', 'POST', '/v1/allocations', { body: { resource_class: RC, candidate_nodes: [t.spare] } }],
    ['backfill', 'POST', '/v1/allocations', { body: { resource_class: RC, node: t.deployed } }],
  ];
}

describe('bare metal: nobody outside the owning project reaches a node or its allocation', () => {
  it('the owner (Keystone and JWT) does reach them: the matrix below is not vacuous', async () => {
    const t = targets.owned;
    for (const who of [OWNER_MEMBER, JWT_OWNER]) {
      await ok(bm(who, 'GET', `/v1/nodes/${t.node.uuid}`), 200);
      await ok(bm(who, 'GET', `/v1/nodes/${t.node.name}`), 200);
      await ok(bm(who, 'GET', `/v1/nodes/${t.node.uuid}/allocation`), 200);
      await ok(bm(who, 'GET', `/v1/allocations/${t.alloc}`), 200);
      const list = await ok(bm(who, 'GET', '/v1/nodes'), 200);
      expect(list.json.nodes.map((x: { uuid: string }) => x.uuid)).toContain(t.node.uuid);
    }
    // the system reader sees the unowned node and the operator's allocation
    await ok(bm(SYSTEM_ADMIN, 'GET', `/v1/allocations/${targets.unowned.alloc}`), 200);
  });

  for (const [key, label] of [
    ['owned', "another project's node"],
    ['unowned', 'a node without owner (and the operator’s allocation without owner)'],
  ] as const) {
    for (const [persona, who] of Object.entries(OUTSIDERS)) {
      it(`${persona}: ${label}`, async () => {
        const t = targets[key];
        await runner.idle();
        const before = await state();
        for (const [what, method, path, opts] of operations(t)) {
          const r = await bm(who, method, path, opts);
          expect([400, 401, 403, 404], `${what}: ${method} ${path} -> ${r.status} ${r.text.slice(0, 300)}`).toContain(r.status);
        }
        await runner.idle();
        expect(await state(), 'something changed').toBe(before);
        // lists never show them
        for (const [path, field, id] of [
          ['/v1/nodes', 'nodes', t.node.uuid],
          ['/v1/allocations', 'allocations', t.alloc],
        ] as const) {
          const r = await bm(who, 'GET', path);
          if (r.status === 200) expect(r.json[field].map((x: { uuid: string }) => x.uuid)).not.toContain(id);
          else expect([401, 403], r.text).toContain(r.status);
        }
      });
    }
  }
});

describe('Placement: scopes and the verified identity', () => {
  const trait = () => `CUSTOM_SCOPE_${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;

  it('a domain-scoped or unscoped admin is refused where Placement refuses it (403), a project admin is not', async () => {
    for (const who of [DOMAIN_ADMIN, UNSCOPED_ADMIN]) {
      const r = await placement(who, 'PUT', `/traits/${trait()}`);
      expect(r.status, r.text).toBe(403);
      expect(r.json.errors[0].detail).toContain('Policy does not allow placement:traits:update');
      expect((await placement(who, 'GET', '/resource_providers')).status).toBe(403);
    }
    await ok(placement(ks({ userId: 'pa', projectId: 'proj-a', roles: ['admin'] }), 'PUT', `/traits/${trait()}`), 201);
    // a domain-scoped reader is not a reader of some project's usages either
    const usage = await placement(ks({ userId: 'dr', domainId: 'dom', roles: ['reader'] }), 'GET', '/usages', { query: 'project_id=None' });
    expect(usage.status).toBe(403);
  });

  it('Keystone: a role named "ops,admin" is that role, not admin, in both APIs', async () => {
    const odd = ks({ userId: 'oa', projectId: 'proj-a', roles: ['ops,admin', 'reader'] });
    const p = await placement(odd, 'GET', '/resource_providers');
    expect(p.status, p.text).toBe(403);
    const sys = ks({ userId: 'os', roles: ['ops,admin', 'reader'], systemScope: 'all' });
    // creating a node takes a system admin
    const b = await bm(sys, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: RC } });
    expect(b.status, b.text).toBe(403);
    await ok(placement(ks({ userId: 'pa', projectId: 'proj-a', roles: ['admin'] }), 'GET', '/resource_providers'), 200);
  });

  it('JWT: the project claim is required (401 without), roles split only on the separator', async () => {
    await ok(placement(jwt({ sub: 'j', 'custom:project_id': 'proj-a', 'cognito:groups': ['admin'] }), 'PUT', `/traits/${trait()}`), 201);
    await ok(placement(jwt({ sub: 'j', 'custom:project_id': 'proj-a', 'cognito:groups': ['reader', 'admin'] }), 'GET', '/resource_providers'), 200);
    const none = await placement(JWT_NO_PROJECT, 'PUT', `/traits/${trait()}`);
    expect(none.status, none.text).toBe(401);
    // a group named "ops,admin" is that group, not admin
    const comma = await placement(jwt({ sub: 'j', 'custom:project_id': 'proj-a', 'cognito:groups': ['ops,admin'] }), 'PUT', `/traits/${trait()}`);
    expect(comma.status, comma.text).toBe(403);
  });

  it('JWT: a group or string claim "ops admin" is one role, though API Gateway renders ["ops admin"] as "[ops admin]"', async () => {
    for (const groups of [['ops admin'], 'ops admin', ['reader', 'ops admin']]) {
      const who = jwt({ sub: 'j', 'custom:project_id': 'proj-a', 'cognito:groups': groups });
      const p = await placement(who, 'GET', '/resource_providers');
      expect(p.status, `${JSON.stringify(groups)}: ${p.text}`).toBe(403);
      // a project admin may create a node it owns (1.80); "ops admin" may not
      const b = await bm(who, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: RC } });
      expect(b.status, `${JSON.stringify(groups)}: ${b.text}`).toBe(403);
    }
    const admin = jwt({ sub: 'j', 'custom:project_id': 'proj-a', 'cognito:groups': ['admin'] });
    const made = await ok(bm(admin, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: RC } }), 201);
    expect(made.json.owner).toBe('proj-a');
  });

  it('JWT: claims are read from the token API Gateway verified, and must render as it passed them', async () => {
    const claims = { sub: 'j', 'custom:project_id': 'proj-a', 'cognito:groups': ['ops admin'] };
    // a bearer token that is not the one the context came from identifies nobody: other roles...
    const r2 = await placement(jwt(claims), 'GET', '/resource_providers', {
      headers: { authorization: bearerToken({ ...claims, 'cognito:groups': ['admin'] }) },
    });
    expect(r2.status, r2.text).toBe(401);
    // ...another project, or no single token at all
    const r3 = await placement(jwt(claims), 'GET', '/resource_providers', {
      headers: { authorization: bearerToken({ ...claims, 'custom:project_id': 'proj-b' }) },
    });
    expect(r3.status, r3.text).toBe(401);
    const r4 = await placement(jwt(claims), 'GET', '/resource_providers', { headers: { authorization: 'Bearer x,Bearer y' } });
    expect(r4.status, r4.text).toBe(401);
  });

  it('request headers add nothing to the verified identity', async () => {
    const forged = { 'x-auth-token': 'admin', 'x-roles': 'admin,service', 'x-project-id': 'proj-a', 'openstack-system-scope': '' };
    const reader = ks({ userId: 'r', projectId: 'proj-a', roles: ['reader'] });
    const r = await placement(reader, 'GET', '/resource_providers', { headers: forged });
    expect(r.status, r.text).toBe(403);
    const dom = await placement(DOMAIN_MEMBER, 'PUT', `/traits/${trait()}`, { headers: forged });
    expect(dom.status, dom.text).toBe(403);
    // no authorizer context at all: headers alone are nobody
    const anon = await placement({ none: true }, 'GET', '/resource_providers', { headers: forged });
    expect(anon.status).toBe(401);
    const anonBm = await bm({ none: true }, 'GET', '/v1/nodes', { headers: { 'x-project-id': 'proj-owner', 'x-roles': 'admin' } });
    expect(anonBm.status).toBe(401);
  });
});

describe('links and Location name the API’s own domain', () => {
  it('a client’s X-Forwarded-Host / X-Forwarded-Proto do not steer them', async () => {
    const forged = { 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'javascript' };
    const t = targets.owned;
    const shown = await ok(bm(SYSTEM_ADMIN, 'GET', `/v1/nodes/${t.node.uuid}`, { headers: forged }), 200);
    const hrefs = (shown.json.links as Array<{ href: string }>).map((l) => l.href);
    expect(hrefs.length).toBeGreaterThan(0);
    for (const h of hrefs) expect(h.startsWith('https://api.example.com/'), h).toBe(true);
    const created = await ok(bm(SYSTEM_ADMIN, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: RC }, headers: forged }), 201);
    expect(created.headers.location).toBe(`https://api.example.com/v1/nodes/${created.json.uuid}`);
    await ok(bm(SYSTEM_ADMIN, 'DELETE', `/v1/nodes/${created.json.uuid}`), 204);
    // the trailing-slash redirect ironicclient follows
    const moved = await bm(SYSTEM_ADMIN, 'GET', '/v1/nodes/', { headers: forged });
    if (moved.status === 308) expect(moved.headers.location).toMatch(/^https:\/\/api\.example\.com\//);
  });
});
