/**
 * The OpenStack-native identity mode against a real Keystone (Debian python3-keystone,
 * started by test/fixtures/keystone/serve.sh): the Lambda authorizer validates
 * X-Auth-Token and Placement applies its policies to the identity it returns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KeystoneValidator } from '../../../functions/authorizer/keystone-client.js';
import { makeAuthorizer } from '../../../functions/authorizer/keystone.js';
import { freePort } from '../../../local/ddb-local.js';
import { startPlacement, type Api } from '../harness.js';
import { needs } from '../../optional.js';

const keystone = needs('keystone');
/** how long Keystone may take to come up */
const KEYSTONE_START_S = 150;

let ks: ChildProcess;
let dir: string;
let url: string;
let api: Api;
const tokens: Record<string, string> = {};
let projectId = '';

async function ksReq(method: string, path: string, token?: string, body?: unknown) {
  const r = await fetch(`${url}/v3${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { 'x-auth-token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status >= 500)
    throw new Error(
      `keystone ${method} ${path}: ${r.status} ${text}\n${readFileSync(join(dir, 'keystone.log'), 'utf8').split('\n').slice(-30).join('\n')}`,
    );
  return { status: r.status, token: r.headers.get('x-subject-token') ?? '', json: text ? JSON.parse(text) : undefined };
}

async function login(user: string, password: string, scope: unknown) {
  const r = await ksReq('POST', '/auth/tokens', undefined, {
    auth: { identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } }, scope },
  });
  expect(r.status).toBe(201);
  return r.token;
}

beforeAll(
  async () => {
    if (!keystone.available) return;
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'berth-keystone-'));
    url = `http://127.0.0.1:${port}`;
    ks = spawn('bash', [join(__dirname, '../../fixtures/keystone/serve.sh'), String(port), dir], { stdio: 'ignore' });
    // db_sync and bootstrap take 30-90 s on a busy 2-core machine
    const deadline = Date.now() + KEYSTONE_START_S * 1000;
    for (;;) {
      try {
        if ((await fetch(`${url}/v3`)).status === 200) break;
      } catch {
        /* not up yet */
      }
      if (Date.now() > deadline) throw new Error(`keystone did not start in ${KEYSTONE_START_S} s`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const admin = await login('admin', 'secret', { project: { name: 'admin', domain: { id: 'default' } } });
    tokens.admin = admin;
    projectId = (await ksReq('POST', '/projects', admin, { project: { name: 'p1', domain_id: 'default' } })).json.project.id;
    const user = (await ksReq('POST', '/users', admin, { user: { name: 'alice', password: 'pw', domain_id: 'default' } })).json.user.id;
    const roles = (await ksReq('GET', '/roles', admin)).json.roles as Array<{ id: string; name: string }>;
    const reader = roles.find((r) => r.name === 'reader')!.id;
    expect((await ksReq('PUT', `/projects/${projectId}/users/${user}/roles/${reader}`, admin)).status).toBe(204);
    tokens.reader = await login('alice', 'pw', { project: { id: projectId } });
    // alice is also an admin of the Default domain: her domain-scoped token carries that role
    const adminRole = roles.find((r) => r.name === 'admin')!.id;
    expect((await ksReq('PUT', `/domains/default/users/${user}/roles/${adminRole}`, tokens.admin)).status).toBe(204);
    tokens.domain = await login('alice', 'pw', { domain: { id: 'default' } });
    tokens.unscoped = await login('alice', 'pw', undefined);
    // bootstrap gave admin the admin role on the system
    tokens.system = await login('admin', 'secret', { system: { all: true } });
    api = await startPlacement({ AUTH_STRATEGY: 'authorizer', PLACEMENT_POLICY_MODE: 'secure-rbac' });
  },
  (KEYSTONE_START_S + 60) * 1000,
);

afterAll(async () => {
  await api?.close();
  ks?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

keystone.describe('Keystone authorizer against a real Keystone', () => {
  const validator = () =>
    new KeystoneValidator({
      url,
      username: 'admin',
      password: 'secret',
      userDomain: 'Default',
      project: 'admin',
      projectDomain: 'Default',
      cacheTtlS: 300,
      timeoutMs: 5000,
    });

  it('authorizes valid tokens with their roles, project and scope', async () => {
    const shared = validator();
    const auth = makeAuthorizer(() => shared);
    const ev = (t?: string) => ({ headers: t ? { 'X-Auth-Token': t } : {} }) as never;
    const admin = await auth(ev(tokens.admin));
    expect(admin.isAuthorized).toBe(true);
    expect(JSON.parse(admin.context!.roles)).toContain('admin');
    const reader = await auth(ev(tokens.reader));
    expect(reader.context).toMatchObject({ projectId, roles: '["reader"]', systemScope: '' });
    const system = await auth(ev(tokens.system));
    expect(system.context).toMatchObject({ projectId: '', systemScope: 'all' });
    expect((await auth(ev('not-a-token'))).isAuthorized).toBe(false);
    expect((await auth(ev())).isAuthorized).toBe(false);
  });

  it('caches validations (one Keystone round trip per token) and refuses a revoked token', async () => {
    const v = validator();
    const first = await v.validate(tokens.reader!);
    expect(first?.projectId).toBe(projectId);
    let calls = 0;
    const counting = new KeystoneValidator(
      {
        url,
        username: 'admin',
        password: 'secret',
        userDomain: 'Default',
        project: 'admin',
        projectDomain: 'Default',
        cacheTtlS: 300,
        timeoutMs: 5000,
      },
      (async (...args: Parameters<typeof fetch>) => {
        calls++;
        return fetch(...args);
      }) as typeof fetch,
    );
    await counting.validate(tokens.reader!);
    const after = calls;
    await counting.validate(tokens.reader!);
    expect(calls).toBe(after);
    const victim = await login('alice', 'pw', { project: { id: projectId } });
    expect((await v.validate(victim))?.userId).toBeTruthy();
    const revoke = await fetch(`${url}/v3/auth/tokens`, { method: 'DELETE', headers: { 'x-auth-token': tokens.admin!, 'x-subject-token': victim } });
    expect(revoke.status).toBe(204);
    expect(await validator().validate(victim)).toBeUndefined();
  });

  it('feeds the identity to Placement, whose policies decide', async () => {
    const shared = validator();
    const auth = makeAuthorizer(() => shared);
    const asPlacement = async (token: string, method: string, path: string, body?: unknown) => {
      const a = await auth({ headers: { 'x-auth-token': token } } as never);
      const { placementApp } = await import('../../../functions/placement/framework/app.js');
      const { PLACEMENT_FAMILY_MODULES } = await import('../../../functions/placement/index.js');
      const routes = Object.assign({}, ...Object.values(PLACEMENT_FAMILY_MODULES).map((m) => m.routes));
      return placementApp(routes)({
        method,
        path,
        rawQuery: '',
        headers: { accept: 'application/json', 'openstack-api-version': 'placement latest', ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        baseUrl: 'https://placement.example.com',
        requestId: 'req-test',
        authorizer: a.isAuthorized ? { lambda: a.context } : undefined,
      });
    };
    expect((await asPlacement(tokens.admin!, 'POST', '/resource_providers', { name: 'ks-rp' })).status).toBe(200);
    expect((await asPlacement(tokens.admin!, 'GET', '/resource_providers')).status).toBe(200);
    expect((await asPlacement(tokens.reader!, 'GET', '/resource_providers')).status).toBe(403);
    expect((await asPlacement(tokens.system!, 'GET', '/resource_providers')).status).toBe(403);
    expect((await asPlacement('bogus', 'GET', '/resource_providers')).status).toBe(401);
  });

  it('keeps a domain-scoped admin token a domain scope: Placement refuses it as oslo.policy does (InvalidScope)', async () => {
    const shared = validator();
    const auth = makeAuthorizer(() => shared);
    const dom = await auth({ headers: { 'x-auth-token': tokens.domain } } as never);
    expect(dom.isAuthorized).toBe(true);
    expect(dom.context).toMatchObject({ projectId: '', domainId: 'default', systemScope: '' });
    expect(JSON.parse(dom.context!.roles)).toContain('admin');
    const unscoped = await auth({ headers: { 'x-auth-token': tokens.unscoped } } as never);
    expect(unscoped.context).toMatchObject({ projectId: '', domainId: '', systemScope: '', roles: '[]' });
    const { placementApp } = await import('../../../functions/placement/framework/app.js');
    const { PLACEMENT_FAMILY_MODULES } = await import('../../../functions/placement/index.js');
    const routes = Object.assign({}, ...Object.values(PLACEMENT_FAMILY_MODULES).map((m) => m.routes));
    for (const a of [dom, unscoped]) {
      const res = await placementApp(routes)({
        method: 'PUT',
        path: '/traits/CUSTOM_DOMAIN_ADMIN',
        rawQuery: '',
        headers: { accept: 'application/json', 'openstack-api-version': 'placement latest' },
        baseUrl: 'https://placement.example.com',
        requestId: 'req-test',
        authorizer: { lambda: a.context },
      });
      expect(res.status, res.body).toBe(403);
    }
  });
});
