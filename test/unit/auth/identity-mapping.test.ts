import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLAIM_MAPPING,
  identityFromClaims,
  identityFromKeystone,
  parseClaimMapping,
  scopeOf,
} from '../../../functions/core/policy/identity.js';
import { authorizerIdentity, bearerClaims, noauthIdentity, renderedClaim, verifiedIdentity } from '../../../functions/http/identity.js';
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
    const id = identityFromClaims({ sub: 'abc', 'custom:project_id': 'p9', 'cognito:groups': ['admin', 'reader'] }, DEFAULT_CLAIM_MAPPING);
    expect(id).toMatchObject({ userId: 'abc', projectId: 'p9', roles: ['admin', 'reader'], source: 'jwt' });
  });
  it('keeps each element of a list claim whole, and a string claim one role unless a separator is configured', () => {
    const roles = (groups: unknown, m = DEFAULT_CLAIM_MAPPING) =>
      identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': groups }, m)?.roles;
    expect(roles(['ops admin'])).toEqual(['ops admin']);
    expect(roles(['ops admin', 'reader'])).toEqual(['ops admin', 'reader']);
    expect(roles('ops admin')).toEqual(['ops admin']);
    // a string is never read as API Gateway's rendering of a list
    expect(roles('[ops admin]')).toEqual(['[ops admin]']);
    expect(roles([5, 'reader', { a: 1 }])).toEqual(['reader']);
    const spaced = parseClaimMapping('{"rolesSeparator": " "}');
    expect(roles('member  reader', spaced)).toEqual(['member', 'reader']);
    expect(roles(['ops admin'], spaced)).toEqual(['ops admin']);
    // user and project name one thing: a list there identifies nobody
    expect(identityFromClaims({ sub: ['a', 'b'], 'custom:project_id': 'p' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': ['p', 'q'] }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
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
    expect(identityFromClaims({ sub: 'x', 'cognito:groups': ['admin'] }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': '', 'cognito:groups': ['admin'] }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ 'custom:project_id': 'p' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    const m = parseClaimMapping('{"project": "tenant_id"}');
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p' }, m)).toBeUndefined();
    expect(identityFromClaims({ sub: 'x', tenant_id: 'p' }, m)?.projectId).toBe('p');
  });
  it('splits roles only on the configured separator: a group named "ops,admin" is not admin', () => {
    expect(
      identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': ['ops,admin', 'reader'] }, DEFAULT_CLAIM_MAPPING)?.roles,
    ).toEqual(['ops,admin', 'reader']);
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': ['ops,admin'] }, DEFAULT_CLAIM_MAPPING)?.roles).toEqual([
      'ops,admin',
    ]);
    expect(identityFromClaims({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': 'ops,admin' }, DEFAULT_CLAIM_MAPPING)?.roles).toEqual([
      'ops,admin',
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
  it('reads JWT claims from the verified bearer token, each as API Gateway rendered it, or refuses', () => {
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const bearer = (c: Record<string, unknown>) => `Bearer ${part({ alg: 'RS256' })}.${part(c)}.sig`;
    const event = (token: Record<string, unknown>, rendered: Record<string, string>, authorization = bearer(token)) =>
      ({ headers: { authorization }, authorizer: { jwt: { claims: rendered } } }) as never;
    const cfg = { jwtClaimMapping: undefined };
    const rendered = { sub: 'x', 'custom:project_id': 'p', 'cognito:groups': '[ops admin]', exp: '1' };
    // one group "ops admin" and two groups "ops", "admin" render alike: the token tells them apart
    expect(verifiedIdentity(event({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': ['ops admin'], exp: 1 }, rendered), cfg)?.roles).toEqual([
      'ops admin',
    ]);
    expect(verifiedIdentity(event({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': ['ops', 'admin'] }, rendered), cfg)?.roles).toEqual([
      'ops',
      'admin',
    ]);
    expect(renderedClaim(['a b', 'c'])).toBe('[a b c]');
    // a token that is not what the authorizer verified, or none: nobody
    expect(verifiedIdentity(event({ sub: 'x', 'custom:project_id': 'p', 'cognito:groups': ['admin'] }, rendered), cfg)).toBeUndefined();
    expect(verifiedIdentity(event({ sub: 'y', 'custom:project_id': 'p', 'cognito:groups': ['ops admin'] }, rendered), cfg)).toBeUndefined();
    expect(verifiedIdentity(event({ sub: 'x', 'cognito:groups': ['ops admin'] }, rendered), cfg)).toBeUndefined();
    expect(verifiedIdentity(event({}, rendered, ''), cfg)).toBeUndefined();
    expect(verifiedIdentity(event({}, rendered, 'Bearer a.b.c,Bearer d.e.f'), cfg)).toBeUndefined();
    expect(bearerClaims('Bearer a.!!.c')).toBeUndefined();
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
