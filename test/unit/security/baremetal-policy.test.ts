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
 *
 * Berth departs from oslo.policy in two ways, on purpose (functions/core/policy/engine.ts),
 * and only ever by refusing what oslo would allow:
 *  - a token without a project never matches `project_id:%(node.owner)s` on an object
 *    without owner (oslo: str(None) == "None");
 *  - domain-scoped and unscoped tokens pass no rule registered with scope types, even
 *    with enforce_scope off (oslo: domain refused only when scope is enforced; unscoped
 *    read as project-scoped).
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
      domain_id?: string;
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
    domainId: p.domain_id,
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

  /** Is this decision one of Berth's deliberate departures (see above)? */
  function departure(persona: Oracle['personas'][string], target: Record<string, string | null>): string | undefined {
    if (persona.domain_id || (!persona.project_id && !persona.system_scope)) return 'no project scope';
    if (!persona.project_id && Object.entries(target).some(([k, v]) => k.endsWith('.owner') && v === null)) return 'None owner';
    return undefined;
  }

  for (const mode of ['legacy', 'secure-rbac'] as const) {
    it(`${mode}: every rule × persona × target decides as Ironic does`, () => {
      const pol = baremetalPolicy(loadConfig({ BAREMETAL_POLICY_MODE: mode }).baremetal.policy);
      const mismatches: string[] = [];
      const departures = new Map<string, number>();
      let decisions = 0;
      for (const [rule, row] of Object.entries(oracle.modes[mode])) {
        for (const [persona, bits] of Object.entries(row)) {
          const p = oracle.personas[persona]!;
          const creds = credentialsOf(identityOf(p), {});
          oracle.target_order.forEach((name, i) => {
            const target = { ...policyValues(creds, 'service'), ...oracle.targets[name] };
            const got = pol.allowed(rule, target, creds);
            const ironic = bits[i] === '1';
            decisions++;
            if (got === ironic) return;
            const why = !got ? departure(p, oracle.targets[name]!) : undefined;
            if (why) departures.set(why, (departures.get(why) ?? 0) + 1);
            else mismatches.push(`${rule} ${persona} ${name}: ours ${got}, Ironic ${ironic}`);
          });
        }
      }
      expect(decisions).toBeGreaterThan(3000);
      expect(mismatches).toEqual([]);
      // the departures are real (the oracle allows them) and only ever refusals
      expect(departures.get('no project scope')).toBeGreaterThan(0);
      expect(departures.get('None owner')).toBe(1); // delete:self_owned_node, system admin, unowned node
    });
  }

  it('refuses domain-scoped and unscoped tokens where secure-rbac oslo.policy does (InvalidScope)', () => {
    for (const persona of ['domain_admin', 'domain_member']) {
      for (const [rule, row] of Object.entries(oracle.modes['secure-rbac'])) expect(row[persona], `${rule} ${persona}`).not.toContain('1');
    }
  });

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
