import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLAIM_MAPPING,
  identityFromClaims,
  identityFromKeystone,
  parseClaimMapping,
  scopeOf,
} from '../../../functions/core/policy/identity.js';
import { authorizerIdentity, noauthIdentity } from '../../../functions/http/identity.js';
import { authorizerContext } from '../../../functions/authorizer/keystone.js';

describe('identity from Keystone tokens', () => {
  it('maps user, project, roles and system scope', () => {
    expect(
      identityFromKeystone({ token: { user: { id: 'u1' }, project: { id: 'p1' }, roles: [{ name: 'reader' }, { name: 'member' }] } }),
    ).toMatchObject({
      userId: 'u1',
      projectId: 'p1',
      domainId: undefined,
      roles: ['reader', 'member'],
      systemScope: undefined,
      source: 'keystone',
    });
    expect(identityFromKeystone({ token: { user: { id: 'u1' }, roles: [{ name: 'admin' }], system: { all: true } } }).systemScope).toBe('all');
  });
  it('keeps a domain-scoped token a domain-scoped identity (no project), and an unscoped one scopeless', () => {
    const d = identityFromKeystone({ token: { user: { id: 'u1' }, domain: { id: 'd1', name: 'Default' }, roles: [{ name: 'admin' }] } });
    expect(d).toMatchObject({ projectId: undefined, domainId: 'd1', systemScope: undefined });
    expect(scopeOf(d)).toBe('domain');
    expect(scopeOf(identityFromKeystone({ token: { user: { id: 'u1' } } }))).toBe('none');
    expect(scopeOf(identityFromKeystone({ token: { user: { id: 'u1' }, project: { id: 'p' } } }))).toBe('project');
    expect(scopeOf(identityFromKeystone({ token: { user: { id: 'u1' }, system: { all: true } } }))).toBe('system');
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
    const id = identityFromClaims({ email: 'a@b', tenant: 't1', groups: ['placement-service', 'other'] }, m);
    expect(id).toMatchObject({ userId: 'a@b', projectId: 't1', roles: ['service'], systemScope: undefined });
    // a system-scoped caller has no project, whatever other claims say
    const sys = identityFromClaims({ email: 'a@b', tenant: 't1', groups: ['placement-admin'], scope: 'all' }, m);
    expect(sys).toMatchObject({ projectId: undefined, systemScope: 'all', roles: ['admin'] });
  });
  it('requires the project claim: a token without it (e.g. a Cognito access token) identifies nobody', () => {
    expect(identityFromClaims({ sub: 'x', 'cognito:groups': '[admin]' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': '', 'cognito:groups': '[admin]' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ 'custom:project_id': 'p' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    const m = parseClaimMapping('{"project": "tenant_id"}');
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p' }, m)).toBeUndefined();
    expect(identityFromClaims({ sub: 'x', tenant_id: 'p' }, m)?.projectId).toBe('p');
  });
  it('splits roles only on the configured separator: a group named "ops,admin" is not admin', () => {
    // API Gateway's rendering of an array claim: elements separated by spaces
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': '[ops,admin reader]' }, DEFAULT_CLAIM_MAPPING)?.roles).toEqual([
      'ops,admin',
      'reader',
    ]);
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': ['ops,admin'] }, DEFAULT_CLAIM_MAPPING)?.roles).toEqual([
      'ops,admin',
    ]);
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': 'ops,admin reader' }, DEFAULT_CLAIM_MAPPING)?.roles).toEqual([
      'ops,admin',
      'reader',
    ]);
    const comma = parseClaimMapping('{"roles": "roles", "rolesSeparator": ","}');
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', roles: 'member,reader' }, comma)?.roles).toEqual(['member', 'reader']);
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', roles: 'ops admin' }, comma)?.roles).toEqual(['ops admin']);
  });
  it('rejects a malformed mapping', () => {
    expect(() => parseClaimMapping('{"user": 5}')).toThrow();
    expect(() => parseClaimMapping('{"projet": "x"}')).toThrow(/unknown key/);
    expect(() => parseClaimMapping('not json')).toThrow(/JSON/);
    expect(() => parseClaimMapping('{"project": ""}')).toThrow();
  });
});

describe('identity from API Gateway authorizer context', () => {
  const req = (authorizer: unknown) => ({ authorizer }) as never;
  it('reads a Lambda authorizer context', () => {
    expect(authorizerIdentity(req({ lambda: { userId: 'u', projectId: 'p', roles: '["admin","reader"]', systemScope: '' } }))).toMatchObject({
      userId: 'u',
      projectId: 'p',
      roles: ['admin', 'reader'],
      systemScope: undefined,
    });
  });
  it('keeps every Keystone role whole, whatever its name holds: a role named "ops,admin" is not admin', () => {
    const ctx = authorizerContext({ userId: 'u', projectId: 'p', roles: ['ops,admin', 'a b', '["x"]', 'reader'], source: 'keystone' });
    const id = authorizerIdentity(req({ lambda: ctx }));
    expect(id?.roles).toEqual(['ops,admin', 'a b', '["x"]', 'reader']);
    expect(id?.roles).not.toContain('admin');
    // a context whose roles are not a JSON list (e.g. comma-joined, as before) identifies nobody
    for (const roles of ['admin,reader', 'admin', '{"a":1}', '[1]', 5, undefined]) {
      expect(authorizerIdentity(req({ lambda: { userId: 'u', projectId: 'p', roles } })), String(roles)).toBeUndefined();
    }
    expect(authorizerIdentity(req({ lambda: { userId: 'u', projectId: 'p', roles: '[]' } }))?.roles).toEqual([]);
  });
  it('reads a domain-scoped Lambda authorizer context as domain scope, never as a project', () => {
    const id = authorizerIdentity(req({ lambda: { userId: 'u', projectId: '', domainId: 'd1', roles: '["admin"]', systemScope: '' } }));
    expect(id).toMatchObject({ projectId: undefined, domainId: 'd1' });
    expect(scopeOf(id!)).toBe('domain');
    expect(authorizerIdentity(req({ lambda: { userId: '', projectId: 'p', roles: '["admin"]' } }))).toBeUndefined();
  });
  it('reads JWT claims through the mapping and refuses without an authorizer', () => {
    const map = (c: Record<string, unknown>) => identityFromClaims(c, DEFAULT_CLAIM_MAPPING);
    expect(authorizerIdentity(req({ jwt: { claims: { sub: 'x', 'custom:project_id': 'p' } } }), map)?.userId).toBe('x');
    expect(authorizerIdentity(req({ jwt: { claims: { sub: 'x' } } }), map)).toBeUndefined();
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
