/**
 * The operators' CLI's OpenStack credentials (scripts/berth/openstack-auth.ts), against a
 * stubbed Keystone: no authentication and fixed tokens need an endpoint; Keystone v3
 * password authentication sends what keystoneauth sends for the same OS_* variables,
 * takes the token from X-Subject-Token and finds the service in the token's catalog by
 * type, interface and region.
 */
import { describe, expect, it } from 'vitest';
import { catalogEndpoint, keystoneV3, openStackSession, passwordAuthBody } from '../../../scripts/berth/openstack-auth.js';

const CATALOG = [
  { type: 'identity', endpoints: [{ interface: 'public', region_id: 'r1', url: 'http://ks:5000/v3' }] },
  {
    type: 'baremetal',
    endpoints: [
      { interface: 'public', region_id: 'r1', region: 'r1', url: 'https://ironic.r1.example.com:6385/' },
      { interface: 'internal', region_id: 'r1', region: 'r1', url: 'http://ironic.internal:6385' },
      { interface: 'public', region_id: 'r2', region: 'r2', url: 'https://ironic.r2.example.com:6385' },
    ],
  },
];

/** a Keystone that accepts alice's password and records what it was sent */
function keystone() {
  const sent: Array<{ url: string; body: any }> = [];
  const fetchFn = (async (url: string, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body));
    sent.push({ url, body });
    if (body.auth.identity.password.user.password !== 'pw') return new Response('{"error":{"code":401}}', { status: 401 });
    return new Response(JSON.stringify({ token: { catalog: CATALOG } }), { status: 201, headers: { 'x-subject-token': 'tok-1' } });
  }) as unknown as typeof fetch;
  return { fetchFn, sent };
}

describe('OpenStack credentials for the CLI', () => {
  it('without authentication or with a fixed token, the endpoint comes from the command or OS_ENDPOINT', async () => {
    expect(await openStackSession({ service: 'baremetal', endpoint: 'http://ironic:6385/', env: {} })).toEqual({
      endpoint: 'http://ironic:6385',
      headers: {},
      describe: 'no authentication',
    });
    await expect(openStackSession({ service: 'baremetal', env: { OS_AUTH_TYPE: 'none' } })).rejects.toThrow(/needs the baremetal endpoint/);
    const env = { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'secret', OS_ENDPOINT: 'http://ironic:6385' };
    expect((await openStackSession({ service: 'baremetal', env })).headers).toEqual({ 'x-auth-token': 'secret' });
    await expect(openStackSession({ service: 'baremetal', env: { OS_AUTH_TYPE: 'token_endpoint', OS_ENDPOINT: 'x' } })).rejects.toThrow(
      /needs OS_TOKEN/,
    );
    // a token flag wins over whatever the environment says
    const flagged = await openStackSession({ service: 'baremetal', token: 't2', endpoint: 'http://b', env: { OS_AUTH_TYPE: 'password' } });
    expect(flagged.headers).toEqual({ 'x-auth-token': 't2' });
    await expect(openStackSession({ service: 'baremetal', env: { OS_AUTH_TYPE: 'v3oidcpassword' } })).rejects.toThrow(/not supported/);
  });

  it('builds the password body keystoneauth builds: user and project by name with domains, by id, or system scope', () => {
    expect(
      passwordAuthBody({
        OS_USERNAME: 'alice',
        OS_PASSWORD: 'pw',
        OS_PROJECT_NAME: 'admin',
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_ID: 'default',
      }),
    ).toEqual({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'alice', domain: { name: 'Default' }, password: 'pw' } } },
        scope: { project: { name: 'admin', domain: { id: 'default' } } },
      },
    });
    expect(passwordAuthBody({ OS_USER_ID: 'u1', OS_PASSWORD: 'pw', OS_SYSTEM_SCOPE: 'all' }).auth).toEqual({
      identity: { methods: ['password'], password: { user: { id: 'u1', password: 'pw' } } },
      scope: { system: { all: true } },
    });
    // domains fall back to OS_DEFAULT_DOMAIN_*, then Default; no scope: unscoped
    expect(passwordAuthBody({ OS_USERNAME: 'a', OS_PASSWORD: 'p', OS_DEFAULT_DOMAIN_ID: 'd9', OS_PROJECT_NAME: 'x' }).auth).toMatchObject({
      identity: { password: { user: { domain: { id: 'd9' } } } },
      scope: { project: { domain: { id: 'd9' } } },
    });
    expect(passwordAuthBody({ OS_USERNAME: 'a', OS_PASSWORD: 'p' }).auth).not.toHaveProperty('scope');
    expect(() => passwordAuthBody({ OS_USERNAME: 'a' })).toThrow(/OS_PASSWORD/);
    expect(() => passwordAuthBody({ OS_PASSWORD: 'p' })).toThrow(/OS_USERNAME/);
  });

  it('finds Keystone v3 under OS_AUTH_URL, and the service in the catalog by interface and region', () => {
    expect(keystoneV3('http://ks:5000')).toBe('http://ks:5000/v3');
    expect(keystoneV3('http://ks:5000/v3/')).toBe('http://ks:5000/v3');
    expect(() => keystoneV3('http://ks:5000/v2.0')).toThrow(/v2\.0/);
    expect(catalogEndpoint(CATALOG, 'baremetal')).toBe('https://ironic.r1.example.com:6385');
    expect(catalogEndpoint(CATALOG, 'baremetal', 'internalURL')).toBe('http://ironic.internal:6385');
    expect(catalogEndpoint(CATALOG, 'baremetal', 'public', 'r2')).toBe('https://ironic.r2.example.com:6385');
    expect(() => catalogEndpoint(CATALOG, 'placement')).toThrow(/no public endpoint of service type placement .*services: identity, baremetal/);
  });

  it('authenticates with a password and uses the catalog’s endpoint (or the one given)', async () => {
    const ks = keystone();
    const env = { OS_AUTH_URL: 'http://ks:5000', OS_USERNAME: 'alice', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'admin', OS_REGION_NAME: 'r2' };
    const s = await openStackSession({ service: 'baremetal', env, fetch: ks.fetchFn });
    expect(s).toEqual({
      endpoint: 'https://ironic.r2.example.com:6385',
      headers: { 'x-auth-token': 'tok-1' },
      describe: 'Keystone password (http://ks:5000/v3)',
    });
    expect(ks.sent[0]!.url).toBe('http://ks:5000/v3/auth/tokens');
    expect(ks.sent[0]!.body.auth.scope).toEqual({ project: { name: 'admin', domain: { name: 'Default' } } });
    expect((await openStackSession({ service: 'baremetal', env, endpoint: 'http://here:6385', fetch: ks.fetchFn })).endpoint).toBe(
      'http://here:6385',
    );
    await expect(openStackSession({ service: 'baremetal', env: { ...env, OS_PASSWORD: 'wrong' }, fetch: ks.fetchFn })).rejects.toThrow(
      /refused the password authentication: 401/,
    );
  });
});
