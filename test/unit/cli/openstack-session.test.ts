/**
 * The import and export commands' OpenStack session (cli/openstack-session.ts)
 * against a small Keystone v3 and a service on local ports: credentials from --token,
 * admin_token variables, OS_* password variables and clouds.yaml; the catalog lookup;
 * a token renewed on 401; retries on 503 and on a refused connection; the errors a
 * missing credential gives.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogEndpoint, keystoneAuthBody, openstackSession, SessionError } from '../../../cli/openstack-session.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

let keystone: { url: string; server: Server };
let service: { url: string; server: Server };
/** what Keystone was asked, and the tokens it gave */
const logins: any[] = [];
let issued = 0;
/** tokens the service takes (the first one Keystone gives is "expired" when `expireFirst`) */
let expireFirst = false;
const seenTokens: Array<string | undefined> = [];
let unavailable = 0;

beforeAll(async () => {
  service = await serve((req, _body, res) => {
    const token = req.headers['x-auth-token'] as string | undefined;
    seenTokens.push(token);
    if (unavailable > 0) {
      unavailable--;
      return json(res, 503, { error: 'busy' });
    }
    if (expireFirst && token === 'tok-1') return json(res, 401, { error: 'expired' });
    json(res, 200, { path: req.url, token, version: req.headers['openstack-api-version'] });
  });
  keystone = await serve((req, body, res) => {
    if (req.method !== 'POST' || req.url !== '/identity/v3/auth/tokens') return json(res, 404, {});
    const b = JSON.parse(body);
    logins.push(b);
    const pw = b.auth.identity.password?.user;
    if (pw && pw.password !== 'secret') return json(res, 401, { error: { message: 'The request you have made requires authentication.' } });
    issued++;
    json(
      res,
      201,
      {
        token: {
          catalog: [
            { type: 'compute', endpoints: [{ interface: 'public', region: 'r1', url: 'http://nova.example' }] },
            {
              type: 'placement',
              endpoints: [
                { interface: 'internal', region: 'r1', url: 'http://internal.example' },
                { interface: 'public', region: 'r2', url: 'http://other-region.example' },
                { interface: 'public', region: 'r1', url: `${service.url}/placement/` },
              ],
            },
          ],
        },
      },
      { 'x-subject-token': `tok-${issued}` },
    );
  });
});

afterAll(async () => {
  for (const s of [keystone?.server, service?.server]) await new Promise((r) => s?.close(r));
});

const password = {
  OS_AUTH_URL: '',
  OS_USERNAME: 'admin',
  OS_PASSWORD: 'secret',
  OS_PROJECT_NAME: 'admin',
  OS_USER_DOMAIN_NAME: 'Default',
  OS_PROJECT_DOMAIN_NAME: 'Default',
  OS_REGION_NAME: 'r1',
};

describe('openstackSession', () => {
  it('sends the token given to the URL given, whatever the variables say', async () => {
    const s = await openstackSession({ serviceType: 'placement', endpoint: `${service.url}/`, token: 'admin', env: { OS_CLOUD: 'nowhere' } });
    expect(s.endpoint).toBe(service.url);
    const r = await s.request('GET', '/x', { headers: { 'openstack-api-version': 'placement 1.39' } });
    expect(r.json).toEqual({ path: '/x', token: 'admin', version: 'placement 1.39' });
  });

  it('takes OS_AUTH_TYPE=admin_token with OS_TOKEN and OS_ENDPOINT', async () => {
    const s = await openstackSession({ serviceType: 'placement', env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'fixed', OS_ENDPOINT: service.url } });
    expect((await s.request('GET', '/y')).json.token).toBe('fixed');
    await expect(openstackSession({ serviceType: 'placement', env: { OS_AUTH_TYPE: 'admin_token', OS_ENDPOINT: service.url } })).rejects.toThrow(
      /needs OS_TOKEN/,
    );
  });

  it('authenticates with Keystone v3 and finds the endpoint in the catalog (interface, region)', async () => {
    const before = logins.length;
    const s = await openstackSession({ serviceType: 'placement', env: { ...password, OS_AUTH_URL: `${keystone.url}/identity` } });
    expect(s.endpoint).toBe(`${service.url}/placement`);
    expect(s.auth).toContain('user admin');
    expect(logins[before].auth).toEqual({
      identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password: 'secret' } } },
      scope: { project: { name: 'admin', domain: { name: 'Default' } } },
    });
    const r = await s.request('GET', '/resource_providers');
    expect(r.json.path).toBe('/placement/resource_providers');
    expect(r.json.token).toMatch(/^tok-\d+$/);
  });

  it('renews an expired token once, on a 401', async () => {
    const before = issued;
    issued = 0;
    expireFirst = true;
    try {
      const s = await openstackSession({ serviceType: 'placement', env: { ...password, OS_AUTH_URL: `${keystone.url}/identity/v3` } });
      const r = await s.request('GET', '/z');
      expect(r.status).toBe(200);
      expect(r.json.token).toBe('tok-2');
    } finally {
      expireFirst = false;
      issued += before;
    }
  });

  it('reads a cloud of clouds.yaml (secure.yaml merged in)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-clouds-'));
    writeFileSync(
      join(dir, 'clouds.yaml'),
      `clouds:\n  prod:\n    region_name: r1\n    auth:\n      auth_url: ${keystone.url}/identity\n      username: admin\n      project_id: p-123\n      user_domain_id: default\n`,
    );
    writeFileSync(join(dir, 'secure.yaml'), 'clouds:\n  prod:\n    auth:\n      password: secret\n');
    const before = logins.length;
    const s = await openstackSession({ serviceType: 'placement', env: { OS_CLOUD: 'prod', OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } });
    expect(s.endpoint).toBe(`${service.url}/placement`);
    expect(logins[before].auth.scope).toEqual({ project: { id: 'p-123' } });
    expect(logins[before].auth.identity.password.user.domain).toEqual({ id: 'default' });
    await expect(
      openstackSession({ serviceType: 'placement', env: { OS_CLOUD: 'test', OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') } }),
    ).rejects.toThrow(/cloud test is not in .* \(it has: prod\)/);
  });

  it('says what Keystone refused, and what is missing', async () => {
    await expect(
      openstackSession({ serviceType: 'placement', env: { ...password, OS_AUTH_URL: `${keystone.url}/identity`, OS_PASSWORD: 'wrong' } }),
    ).rejects.toThrow(/refused the credentials .*401 The request you have made requires authentication/);
    await expect(openstackSession({ serviceType: 'baremetal', env: { ...password, OS_AUTH_URL: `${keystone.url}/identity` } })).rejects.toThrow(
      /catalog has no public baremetal endpoint in region r1/,
    );
    await expect(openstackSession({ serviceType: 'placement', env: {} })).rejects.toThrow(SessionError);
  });

  it('retries a 503 and a refused connection, a bounded number of times', async () => {
    unavailable = 2;
    const s = await openstackSession({ serviceType: 'placement', endpoint: service.url, token: 't', env: {} });
    expect((await s.request('GET', '/retry')).status).toBe(200);
    unavailable = 10;
    const few = await openstackSession({ serviceType: 'placement', endpoint: service.url, token: 't', env: {}, attempts: 2 });
    expect((await few.request('GET', '/retry')).status).toBe(503);
    unavailable = 0;
    const closed = await serve(() => {});
    await new Promise((r) => closed.server.close(r));
    const dead = await openstackSession({ serviceType: 'placement', endpoint: closed.url, token: 't', env: {}, attempts: 2 });
    await expect(dead.request('GET', '/')).rejects.toThrow(/after 2 attempts/);
  });
});

describe('the pieces', () => {
  it('application credentials and system scope', () => {
    expect(keystoneAuthBody({ authType: 'v3applicationcredential', appCredId: 'id1', appCredSecret: 's', from: 'x' })).toEqual({
      auth: { identity: { methods: ['application_credential'], application_credential: { id: 'id1', secret: 's' } } },
    });
    expect(keystoneAuthBody({ authType: 'password', username: 'a', password: 'p', systemScope: 'all', from: 'x' }).auth).toMatchObject({
      scope: { system: { all: true } },
    });
  });

  it('the catalog lookup goes by type, interface and region', () => {
    const catalog = [
      {
        type: 'placement',
        endpoints: [
          { interface: 'admin', url: 'http://a/' },
          { interface: 'public', region: 'x', url: 'http://p/' },
        ],
      },
    ];
    expect(catalogEndpoint(catalog, 'placement', 'adminURL')).toBe('http://a');
    expect(catalogEndpoint(catalog, 'placement', 'public', 'x')).toBe('http://p');
    expect(catalogEndpoint(catalog, 'placement', 'public', 'y')).toBeUndefined();
  });
});
