import { describe, expect, it } from 'vitest';
import { DEFAULT_CLAIM_MAPPING, identityFromClaims, identityFromKeystone, parseClaimMapping } from '../../../functions/core/policy/identity.js';
import { authorizerIdentity, noauthIdentity } from '../../../functions/http/identity.js';

describe('identity from Keystone tokens', () => {
  it('maps user, project, roles and system scope', () => {
    expect(identityFromKeystone({ token: { user: { id: 'u1' }, project: { id: 'p1' }, roles: [{ name: 'reader' }, { name: 'member' }] } })).toEqual({
      userId: 'u1',
      projectId: 'p1',
      roles: ['reader', 'member'],
      systemScope: undefined,
      source: 'keystone',
    });
    expect(identityFromKeystone({ token: { user: { id: 'u1' }, roles: [{ name: 'admin' }], system: { all: true } } }).systemScope).toBe('all');
  });
});

describe('identity from JWT claims', () => {
  it('uses Cognito-friendly defaults', () => {
    const id = identityFromClaims({ sub: 'abc', 'custom:project_id': 'p9', 'cognito:groups': '[admin reader]' }, DEFAULT_CLAIM_MAPPING);
    expect(id).toMatchObject({ userId: 'abc', projectId: 'p9', roles: ['admin', 'reader'], source: 'jwt' });
  });
  it('honours a configured mapping with a role prefix and a system-scope claim', () => {
    const m = parseClaimMapping(
      JSON.stringify({ user: 'email', project: 'tenant', roles: 'groups', rolePrefix: 'placement-', systemScope: 'scope' }),
    );
    const id = identityFromClaims({ email: 'a@b', tenant: 't1', groups: ['placement-service', 'other'], scope: 'all' }, m);
    expect(id).toMatchObject({ userId: 'a@b', projectId: 't1', roles: ['service'], systemScope: 'all' });
  });
  it('rejects a malformed mapping', () => {
    expect(() => parseClaimMapping('{"user": 5}')).toThrow();
  });
});

describe('identity from API Gateway authorizer context', () => {
  const req = (authorizer: unknown) => ({ authorizer }) as never;
  it('reads a Lambda authorizer context', () => {
    expect(authorizerIdentity(req({ lambda: { userId: 'u', projectId: 'p', roles: 'admin,reader', systemScope: '' } }))).toMatchObject({
      userId: 'u',
      projectId: 'p',
      roles: ['admin', 'reader'],
      systemScope: undefined,
    });
  });
  it('reads JWT claims through the mapping and refuses without an authorizer', () => {
    const id = authorizerIdentity(req({ jwt: { claims: { sub: 'x' } } }), (c) => identityFromClaims(c, DEFAULT_CLAIM_MAPPING));
    expect(id?.userId).toBe('x');
    expect(authorizerIdentity(req(undefined))).toBeUndefined();
  });
  it('implements noauth2', () => {
    expect(noauthIdentity({ 'x-auth-token': 'admin' })).toMatchObject({ userId: 'admin', projectId: 'admin', roles: ['admin'] });
    expect(noauthIdentity({ 'x-auth-token': 'u:p' })).toMatchObject({ userId: 'u', projectId: 'p', roles: [] });
    expect(noauthIdentity({ 'x-auth-token': 'u', 'x-roles': 'reader', 'openstack-system-scope': 'all' })).toMatchObject({
      projectId: undefined,
      systemScope: 'all',
      roles: ['reader'],
    });
    expect(noauthIdentity({ 'x-auth-token': 'u', 'x-project-id': 'p2' })?.projectId).toBe('p2');
    expect(noauthIdentity({})).toBeUndefined();
  });
});
