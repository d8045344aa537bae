import { describe, expect, it } from 'vitest';
import { baremetalPolicy } from '../../../functions/baremetal/policy.js';
import { loadConfig } from '../../../functions/config.js';

const sysReader = { roles: ['reader'], systemScope: 'all', userId: 'u' };
const sysMember = { roles: ['member', 'reader'], systemScope: 'all', userId: 'u' };
const member = (project: string) => ({ roles: ['member', 'reader'], projectId: project, userId: 'u' });
const reader = (project: string) => ({ roles: ['reader'], projectId: project, userId: 'u' });
const admin = { roles: ['admin'], projectId: 'admin-project', userId: 'u', extra: { is_admin_project: 'True' } };
const node = (owner: string | null, lessee?: string) => ({ 'node.owner': owner, ...(lessee ? { 'node.lessee': lessee } : {}) });

describe('bare-metal policy', () => {
  it('noauth allows everything but still masks secrets', () => {
    const p = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: 'noauth' }).baremetal.policy);
    expect(p.allowed('baremetal:node:delete', {}, { roles: [] })).toBe(true);
    expect(p.check('show_password', {}, { roles: [] })).toBe(false);
    expect(p.enforceNewDefaults).toBe(false);
  });

  it('secure-rbac scopes nodes to their owner and lessee', () => {
    const p = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: 'secure-rbac' }).baremetal.policy);
    expect(p.allowed('baremetal:node:get', node('p1'), reader('p1'))).toBe(true);
    expect(p.allowed('baremetal:node:get', node('p1', 'p2'), reader('p2'))).toBe(true);
    expect(p.allowed('baremetal:node:get', node('p1'), reader('p3'))).toBe(false);
    expect(p.allowed('baremetal:node:get', node(null), sysReader)).toBe(true);
    expect(p.allowed('baremetal:node:list_all', {}, sysReader)).toBe(true);
    expect(p.allowed('baremetal:node:list_all', {}, reader('p1'))).toBe(false);
    expect(p.allowed('baremetal:node:list', {}, reader('p1'))).toBe(true);
    // owners may deploy, lessees may only with admin/manager
    expect(p.allowed('baremetal:node:set_provision_state', node('p1', 'p2'), member('p1'))).toBe(true);
    expect(p.allowed('baremetal:node:set_provision_state', node('p1', 'p2'), member('p2'))).toBe(false);
    expect(p.allowed('baremetal:node:set_provision_state', node('p1', 'p2'), { roles: ['manager'], projectId: 'p2' })).toBe(true);
    expect(p.allowed('baremetal:node:delete', node('p1'), member('p1'))).toBe(false);
    expect(p.allowed('baremetal:node:delete', {}, { roles: ['admin'], systemScope: 'all' })).toBe(true);
  });

  it('secure-rbac scopes allocations to their owner', () => {
    const p = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: 'secure-rbac' }).baremetal.policy);
    const a = (owner: string | null) => ({ 'allocation.owner': owner });
    expect(p.allowed('baremetal:allocation:get', a('p1'), reader('p1'))).toBe(true);
    expect(p.allowed('baremetal:allocation:get', a('p1'), reader('p2'))).toBe(false);
    expect(p.allowed('baremetal:allocation:delete', a('p1'), member('p1'))).toBe(true);
    expect(p.allowed('baremetal:allocation:delete', a('p1'), reader('p1'))).toBe(false);
    expect(p.allowed('baremetal:allocation:create', {}, member('p1'))).toBe(true);
    expect(p.allowed('baremetal:allocation:create_restricted', {}, member('p1'))).toBe(false);
    expect(p.allowed('baremetal:allocation:create_restricted', {}, sysMember)).toBe(true);
  });

  it('legacy mode ORs the pre-RBAC rules in: an admin may do anything', () => {
    const legacy = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: 'legacy' }).baremetal.policy);
    const secure = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: 'secure-rbac' }).baremetal.policy);
    expect(legacy.allowed('baremetal:node:delete', node(null), admin)).toBe(true);
    expect(secure.allowed('baremetal:node:delete', node(null), admin)).toBe(false);
    expect(legacy.allowed('baremetal:allocation:create_pre_rbac', {}, admin)).toBe(true);
  });

  it('rules can be overridden by the operator', () => {
    const p = baremetalPolicy(
      loadConfig({
        BAREMETAL_POLICY_MODE: 'secure-rbac',
        BAREMETAL_POLICY_OVERRIDES: JSON.stringify({ 'baremetal:node:delete': 'role:member and project_id:%(node.owner)s' }),
      }).baremetal.policy,
    );
    expect(p.allowed('baremetal:node:delete', node('p1'), member('p1'))).toBe(true);
    expect(p.allowed('baremetal:node:delete', node('p1'), member('p2'))).toBe(false);
  });
});
