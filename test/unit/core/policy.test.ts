import { describe, expect, it } from 'vitest';
import { PolicyEngine, parseRule } from '../../../functions/core/policy/engine.js';
import { placementPolicy } from '../../../functions/placement/policy.js';
import { loadConfig } from '../../../functions/config.js';

const admin = { roles: ['admin'], projectId: 'p1', userId: 'u' };
const service = { roles: ['service'], projectId: 'svc', userId: 'u' };
const reader = { roles: ['reader'], projectId: 'p1', userId: 'u' };
const sysAdmin = { roles: ['admin', 'member', 'reader'], systemScope: 'all', userId: 'u' };

describe('policy rule language', () => {
  it('parses and/or/not with parentheses', () => {
    const e = new PolicyEngine([{ name: 'r', check: 'role:a and (role:b or not role:c)' }], { enforceNewDefaults: true, enforceScope: false });
    expect(e.check('r', {}, { roles: ['a', 'b'] })).toBe(true);
    expect(e.check('r', {}, { roles: ['a', 'c'] })).toBe(false);
    expect(e.check('r', {}, { roles: ['a'] })).toBe(true);
    expect(() => parseRule('role:a and (')).toThrow();
  });
  it('interpolates target values', () => {
    const e = new PolicyEngine([{ name: 'r', check: 'project_id:%(project_id)s' }], { enforceNewDefaults: true, enforceScope: false });
    expect(e.check('r', { project_id: 'p1' }, reader)).toBe(true);
    expect(e.check('r', { project_id: 'p2' }, reader)).toBe(false);
  });
});

describe('Placement defaults', () => {
  const allow = (mode: string, rule: string, creds: object, target: Record<string, unknown> = {}) => {
    const e = placementPolicy(loadConfig({ PLACEMENT_POLICY_MODE: mode }).placementPolicy);
    return e.scopeOk(rule, creds as never) && e.check(rule, target, creds as never);
  };
  it('admin and service may manage providers, readers may not, system scope never', () => {
    for (const mode of ['default', 'secure-rbac']) {
      expect(allow(mode, 'placement:resource_providers:create', admin)).toBe(true);
      expect(allow(mode, 'placement:resource_providers:create', service)).toBe(true);
      expect(allow(mode, 'placement:resource_providers:list', reader)).toBe(false);
      expect(allow(mode, 'placement:resource_providers:list', sysAdmin)).toBe(false);
    }
  });
  it('reshaper is for services only under the new defaults, admin too under the deprecated ones', () => {
    expect(allow('secure-rbac', 'placement:reshaper:reshape', admin)).toBe(false);
    expect(allow('secure-rbac', 'placement:reshaper:reshape', service)).toBe(true);
    expect(allow('default', 'placement:reshaper:reshape', admin)).toBe(true);
  });
  it('a project reader may read the usages of its own project only', () => {
    expect(allow('secure-rbac', 'placement:usages', reader, { project_id: 'p1' })).toBe(true);
    expect(allow('secure-rbac', 'placement:usages', reader, { project_id: 'p2' })).toBe(false);
  });
  it('open mode allows any authenticated caller, operators can override a rule', () => {
    expect(allow('open', 'placement:resource_providers:list', { roles: [], projectId: 'p' })).toBe(true);
    const e = placementPolicy(
      loadConfig({
        PLACEMENT_POLICY_MODE: 'secure-rbac',
        PLACEMENT_POLICY_OVERRIDES: JSON.stringify({ 'placement:resource_providers:list': 'role:reader' }),
      }).placementPolicy,
    );
    expect(e.check('placement:resource_providers:list', {}, reader as never)).toBe(true);
  });
});

describe('scopes as Keystone and oslo.policy mean them', () => {
  const rules = [
    { name: 'project_rule', check: 'role:admin', scopeTypes: ['project' as const] },
    { name: 'both_rule', check: 'role:admin', scopeTypes: ['system' as const, 'project' as const] },
    { name: 'owner_rule', check: 'project_id:%(owner)s', scopeTypes: ['project' as const] },
    { name: 'unscoped_rule', check: 'project_id:%(owner)s or user_id:%(user)s' },
    { name: 'literal_none', check: 'project_domain_id:None' },
  ];
  const domainAdmin = { roles: ['admin'], domainId: 'd1', userId: 'u' };
  const unscopedAdmin = { roles: ['admin'], userId: 'u' };
  const projectAdmin = { roles: ['admin'], projectId: 'p1', userId: 'u' };
  const allowed = (e: PolicyEngine, rule: string, creds: object, target: Record<string, unknown> = {}) =>
    e.scopeOk(rule, creds as never) && e.check(rule, target, creds as never);

  it('a domain-scoped or unscoped token passes no rule with scope types, enforced or not', () => {
    for (const enforceScope of [true, false]) {
      const e = new PolicyEngine(rules, { enforceNewDefaults: true, enforceScope });
      for (const who of [domainAdmin, unscopedAdmin]) {
        expect(allowed(e, 'project_rule', who), JSON.stringify(who)).toBe(false);
        expect(allowed(e, 'both_rule', who), JSON.stringify(who)).toBe(false);
      }
      expect(allowed(e, 'project_rule', projectAdmin)).toBe(true);
    }
  });

  it('Placement refuses a domain-scoped admin (oslo.policy: InvalidScope)', () => {
    const e = placementPolicy(loadConfig({ PLACEMENT_POLICY_MODE: 'default' }).placementPolicy);
    expect(allowed(e, 'placement:traits:update', domainAdmin)).toBe(false);
    expect(allowed(e, 'placement:traits:update', admin)).toBe(true);
  });

  it('an object without owner is never owned by a caller without project; literal None keeps its meaning', () => {
    const e = new PolicyEngine(rules, { enforceNewDefaults: true, enforceScope: false });
    expect(e.check('owner_rule', { owner: null }, { roles: [], systemScope: 'all' })).toBe(false);
    expect(e.check('owner_rule', { owner: null }, { roles: [], domainId: 'd' })).toBe(false);
    expect(e.check('owner_rule', { owner: undefined }, { roles: [] })).toBe(false);
    expect(e.check('owner_rule', { owner: 'None' }, { roles: [] })).toBe(false);
    expect(e.check('owner_rule', { owner: null }, projectAdmin)).toBe(false);
    expect(e.check('owner_rule', { owner: 'p1' }, projectAdmin)).toBe(true);
    expect(e.check('unscoped_rule', { owner: null, user: 'u' }, { roles: [], userId: 'u' })).toBe(true);
    expect(e.check('literal_none', {}, { roles: [], extra: { project_domain_id: null } })).toBe(true);
    expect(e.check('literal_none', {}, { roles: [], extra: { project_domain_id: 'default' } })).toBe(false);
  });

  it('target keys come from the target itself, not from Object.prototype', () => {
    const e = new PolicyEngine([{ name: 'r', check: 'project_id:%(constructor)s' }], { enforceNewDefaults: true, enforceScope: false });
    expect(e.check('r', {}, { roles: [], projectId: String(Object) })).toBe(false);
  });
});
