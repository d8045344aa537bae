/**
 * The Keystone authorizer's windows and failure modes, against a stubbed Keystone:
 * https only, a token's scope passed on as it is (a domain-scoped token never becomes a
 * project), Keystone failures raised (API Gateway answers 500 and caches nothing)
 * instead of answered as a cacheable deny, and the in-process cache bounded (off: every
 * call asks Keystone; invalid tokens kept 5 s at most).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeystoneValidator, NEGATIVE_TTL_S, type KeystoneConfig } from '../../../functions/authorizer/keystone-client.js';
import { checkKeystoneUrl, keystoneConfig, makeAuthorizer } from '../../../functions/authorizer/keystone.js';
import { loadConfig } from '../../../functions/config.js';
import { authorizerIdentity } from '../../../functions/http/identity.js';

const CFG: KeystoneConfig = {
  url: 'https://keystone.example.com/v3',
  username: 'placement',
  password: 'pw',
  userDomain: 'Default',
  project: 'service',
  projectDomain: 'Default',
  cacheTtlS: 0,
  timeoutMs: 1000,
};

/** A Keystone that knows some tokens; counts validations. */
function keystone(tokens: Record<string, unknown>, opts: { down?: boolean } = {}) {
  const calls = { validate: 0 };
  const fetchFn = (async (_url: string, init?: RequestInit) => {
    if (opts.down) return new Response('upstream unavailable', { status: 503 });
    if (init?.method === 'POST') {
      return new Response(JSON.stringify({ token: { expires_at: new Date(Date.now() + 3600_000).toISOString() } }), {
        status: 201,
        headers: { 'x-subject-token': 'service-token' },
      });
    }
    calls.validate++;
    const subject = new Headers(init?.headers).get('x-subject-token') ?? '';
    const body = tokens[subject];
    if (!body) return new Response('{}', { status: 404 });
    return new Response(JSON.stringify(body), { status: 200 });
  }) as unknown as typeof fetch;
  return { fetchFn, calls };
}

const expires = () => new Date(Date.now() + 3600_000).toISOString();
const DOMAIN_TOKEN = { token: { user: { id: 'u1' }, domain: { id: 'default', name: 'Default' }, roles: [{ name: 'admin' }], expires_at: expires() } };
const PROJECT_TOKEN = {
  token: { user: { id: 'u2' }, project: { id: 'p1', name: 'p', domain: { id: 'default' } }, roles: [{ name: 'member' }], expires_at: expires() },
};

afterEach(() => vi.useRealTimers());

describe('Keystone authorizer', () => {
  it('talks to Keystone over https only (plain http to this machine only, for tests)', () => {
    expect(() => checkKeystoneUrl('http://keystone.example.com/v3')).toThrow(/https/);
    expect(() => checkKeystoneUrl('ftp://keystone.example.com')).toThrow(/https/);
    expect(() => checkKeystoneUrl('keystone.example.com')).toThrow(/not a URL/);
    expect(checkKeystoneUrl('https://keystone.example.com/v3')).toBe('https://keystone.example.com/v3');
    expect(checkKeystoneUrl('http://127.0.0.1:5000')).toBe('http://127.0.0.1:5000');
    const env = { KEYSTONE_USERNAME: 'placement', KEYSTONE_PASSWORD: 'pw' };
    expect(() => keystoneConfig(loadConfig({ ...env, KEYSTONE_URL: 'http://keystone.example.com/v3' }).keystone)).toThrow(/https/);
    expect(keystoneConfig(loadConfig({ ...env, KEYSTONE_URL: 'https://keystone.example.com/v3' }).keystone).url).toContain('https://');
  });

  it('passes a domain-scoped token on as domain scope, never as a project', async () => {
    const ks = keystone({ dom: DOMAIN_TOKEN, proj: PROJECT_TOKEN });
    const auth = makeAuthorizer(() => new KeystoneValidator(CFG, ks.fetchFn));
    const dom = await auth({ headers: { 'X-Auth-Token': 'dom' } } as never);
    expect(dom.isAuthorized).toBe(true);
    expect(dom.context).toMatchObject({ userId: 'u1', projectId: '', domainId: 'default', systemScope: '', roles: '["admin"]' });
    const proj = await auth({ headers: { 'X-Auth-Token': 'proj' } } as never);
    expect(proj.context).toMatchObject({ projectId: 'p1', domainId: '', projectName: 'p' });
    expect((await auth({ headers: { 'X-Auth-Token': 'nope' } } as never)).isAuthorized).toBe(false);
  });

  it('passes roles as a JSON list: a role named "ops,admin" reaches the APIs whole, and is not admin', async () => {
    const token = { token: { ...PROJECT_TOKEN.token, roles: [{ name: 'ops,admin' }, { name: 'reader' }] } };
    const auth = makeAuthorizer(() => new KeystoneValidator(CFG, keystone({ odd: token }).fetchFn));
    const r = await auth({ headers: { 'X-Auth-Token': 'odd' } } as never);
    expect(r.context?.roles).toBe('["ops,admin","reader"]');
    const id = authorizerIdentity({ authorizer: { lambda: r.context } } as never);
    expect(id?.roles).toEqual(['ops,admin', 'reader']);
    expect(id?.roles).not.toContain('admin');
  });

  it('a Keystone outage is an error (API Gateway: 500, not cached), never a deny it would cache', async () => {
    const auth = makeAuthorizer(() => new KeystoneValidator(CFG, keystone({}, { down: true }).fetchFn));
    await expect(auth({ headers: { 'X-Auth-Token': 'proj' } } as never)).rejects.toThrow('token validation unavailable');
  });

  it('with its cache off (as deployed) every validation asks Keystone: a revoked token stops at once', async () => {
    const tokens: Record<string, unknown> = { proj: PROJECT_TOKEN };
    const ks = keystone(tokens);
    const v = new KeystoneValidator(CFG, ks.fetchFn);
    expect((await v.validate('proj'))?.userId).toBe('u2');
    delete tokens.proj; // revoked
    expect(await v.validate('proj')).toBeUndefined();
    expect(ks.calls.validate).toBe(2);
  });

  it('with a cache, valid answers live at most cacheTtlS and invalid ones at most 5 s', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const tokens: Record<string, unknown> = { proj: PROJECT_TOKEN };
    const ks = keystone(tokens);
    const v = new KeystoneValidator({ ...CFG, cacheTtlS: 30 }, ks.fetchFn);
    await v.validate('proj');
    await v.validate('proj');
    expect(ks.calls.validate).toBe(1);
    delete tokens.proj;
    vi.advanceTimersByTime(29_000);
    expect((await v.validate('proj'))?.userId).toBe('u2'); // still inside the window
    vi.advanceTimersByTime(2_000);
    expect(await v.validate('proj')).toBeUndefined();
    // now invalid: remembered for NEGATIVE_TTL_S only
    const n = ks.calls.validate;
    tokens.proj = PROJECT_TOKEN; // (a token cannot come back; this shows the negative entry expiring)
    await v.validate('proj');
    expect(ks.calls.validate).toBe(n);
    vi.advanceTimersByTime(NEGATIVE_TTL_S * 1000 + 1);
    expect((await v.validate('proj'))?.userId).toBe('u2');
    expect(ks.calls.validate).toBe(n + 1);
  });
});
