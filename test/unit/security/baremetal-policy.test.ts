/**
 * The bare-metal API's policy against the real Ironic 21.4: every rule Berth registers
 * (functions/baremetal/policy.ts), for a matrix of personas (system admin / member /
 * reader / service, the service project, node owner and lessee admin / manager /
 * member / reader, another project, legacy admin, baremetal_admin, observer, no roles)
 * and targets (owned and leased, owned, unowned, owned by another project), decided by
 * our engine exactly as the API builds credentials and targets, must equal what
 * oslo.policy decides with Ironic's registered defaults, in both modes (legacy:
 * enforce_new_defaults and enforce_scope off; secure-rbac: both on).
 * The oracle's decisions are test/fixtures/ironic-policy/decisions.json, produced by
 * generate.py beside it from Debian's python3-ironic (regenerate when rules change).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BAREMETAL_RULES, baremetalPolicy } from '../../../functions/baremetal/policy.js';
import { credentialsOf, policyValues } from '../../../functions/baremetal/framework/app.js';
import type { Identity } from '../../../functions/core/policy/identity.js';
import { loadConfig } from '../../../functions/config.js';

interface Oracle {
  personas: Record<
    string,
    {
      roles: string[];
      system_scope?: string;
      project_id?: string | null;
      project_name?: string;
      project_domain_id?: string;
      is_admin_project?: boolean;
    }
  >;
  targets: Record<string, Record<string, string | null>>;
  /** the order of the bits in each decision string */
  target_order: string[];
  modes: Record<'legacy' | 'secure-rbac', Record<string, Record<string, string>>>;
}
const oracle = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/ironic-policy/decisions.json'), 'utf8')) as Oracle;

/** The identity a verified Keystone token gives (what the authorizer passes on). */
function identityOf(p: Oracle['personas'][string]): Identity {
  return {
    userId: 'u',
    projectId: p.project_id ?? undefined,
    roles: p.roles,
    systemScope: p.system_scope ?? undefined,
    projectName: p.project_name,
    projectDomainId: p.project_domain_id,
    isAdminProject: p.is_admin_project ?? true,
    source: 'keystone',
  };
}

describe('bare-metal policy equals Ironic 21.4 (oslo.policy oracle)', () => {
  it('covers every rule Berth registers', () => {
    const ours = BAREMETAL_RULES.map((r) => r.name).filter((n) => n.startsWith('baremetal:'));
    expect(Object.keys(oracle.modes.legacy).sort()).toEqual(ours.sort());
  });

  for (const mode of ['legacy', 'secure-rbac'] as const) {
    it(`${mode}: every rule × persona × target decides as Ironic does`, () => {
      const pol = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: mode }).baremetal.policy);
      const mismatches: string[] = [];
      let decisions = 0;
      for (const [rule, row] of Object.entries(oracle.modes[mode])) {
        for (const [persona, bits] of Object.entries(row)) {
          const creds = credentialsOf(identityOf(oracle.personas[persona]!), {});
          oracle.target_order.forEach((name, i) => {
            const target = { ...policyValues(creds, 'service'), ...oracle.targets[name] };
            const got = pol.allowed(rule, target, creds);
            decisions++;
            if (got !== (bits[i] === '1')) mismatches.push(`${rule} ${persona} ${name}: ours ${got}, Ironic ${!got}`);
          });
        }
      }
      expect(decisions).toBeGreaterThan(3000);
      expect(mismatches).toEqual([]);
    });
  }

  it('behind an authorizer, client headers cannot claim the service project or the admin project', () => {
    const pol = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: 'secure-rbac' }).baremetal.policy);
    const identity: Identity = { userId: 'u', projectId: 'p', roles: ['service'], source: 'keystone', projectName: 'not-service' };
    const forged = { 'x-project-name': 'service', 'x-is-admin-project': 'True', 'x-project-domain-id': 'default' };
    const creds = credentialsOf(identity, forged);
    const target = { ...policyValues(creds, 'service'), 'node.owner': 'someone-else' };
    expect(pol.allowed('baremetal:node:update', target, creds)).toBe(false);
    expect(pol.allowed('baremetal:node:list_all', target, creds)).toBe(false);
    // the same caller whose verified token is in the service project does get it
    const real = credentialsOf({ ...identity, projectName: 'service' }, {});
    expect(pol.allowed('baremetal:node:list_all', { ...policyValues(real, 'service'), 'node.owner': 'x' }, real)).toBe(true);
    // under noauth the headers are the identity (Ironic's noauth / keystonemiddleware headers)
    const noauth = credentialsOf({ ...identity, source: 'noauth' }, forged);
    expect(noauth.extra?.project_name).toBe('service');
  });
});
