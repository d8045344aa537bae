/**
 * Ironic's policy defaults (ironic/common/policy.py, 21.4) for the node, driver and
 * allocation APIs Berth serves, on the shared engine (functions/core/policy/engine.ts).
 *
 * Modes (BAREMETAL_POLICY_MODE):
 *   noauth      Ironic's auth_strategy=noauth: every authorize()/check_policy() passes;
 *               identity headers still set the caller's project (which Ironic uses to
 *               fill in owners). Default for the local stack.
 *   legacy      Ironic 21.4 as the reference runs it (enforce_new_defaults and
 *               enforce_scope off): each rule OR-ed with its deprecated pre-RBAC rule.
 *   secure-rbac the new defaults only, scope enforced. Default behind an authorizer.
 * Any rule can be overridden (BAREMETAL_POLICY_FILE: JSON or "rule": "check" YAML
 * lines; BAREMETAL_POLICY_OVERRIDES: a JSON object), e.g. by the security review.
 */
import { readFileSync } from 'node:fs';
import { PolicyEngine, type Credentials, type RuleDefault } from '../core/policy/engine.js';
import { ruleOverrides } from '../core/policy/file.js';
import type { BaremetalPolicyMode, PolicySettings } from '../config.js';

const SYSTEM_ADMIN = 'role:admin and system_scope:all';
const SYSTEM_MEMBER = '(role:member and system_scope:all) or rule:service_role';
const SYSTEM_READER = '(role:reader and system_scope:all) or (role:service and system_scope:all) or rule:service_role';
const PROJECT_MEMBER = 'role:member and (project_id:%(node.owner)s or project_id:%(node.lessee)s)';
const PROJECT_READER = 'role:reader and (project_id:%(node.owner)s or project_id:%(node.lessee)s)';
const SYSTEM_SERVICE = 'role:service and system_scope:all';
const PROJECT_SERVICE = 'role:service and project_id:%(node.owner)s';
const PROJECT_OWNER_ADMIN = 'role:admin and project_id:%(node.owner)s';
const PROJECT_OWNER_MANAGER = 'role:manager and project_id:%(node.owner)s';
const PROJECT_OWNER_MEMBER = 'role:member and project_id:%(node.owner)s';
const PROJECT_OWNER_READER = 'role:reader and project_id:%(node.owner)s';
const PROJECT_LESSEE_ADMIN = 'role:admin and project_id:%(node.lessee)s';
const PROJECT_LESSEE_MANAGER = 'role:manager and project_id:%(node.lessee)s';
const ALLOCATION_OWNER_MEMBER = 'role:member and project_id:%(allocation.owner)s';
const ALLOCATION_OWNER_READER = 'role:reader and project_id:%(allocation.owner)s';

const any = (...xs: string[]) => xs.map((x) => `(${x})`).join(' or ');

const SYSTEM_OR_PROJECT_MEMBER = any(SYSTEM_MEMBER, PROJECT_MEMBER, SYSTEM_SERVICE);
const SYSTEM_OR_PROJECT_READER = any(SYSTEM_READER, PROJECT_READER, PROJECT_SERVICE);
const SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN = any(
  SYSTEM_MEMBER,
  SYSTEM_SERVICE,
  PROJECT_OWNER_MEMBER,
  PROJECT_LESSEE_ADMIN,
  PROJECT_LESSEE_MANAGER,
  PROJECT_SERVICE,
);
const SYSTEM_MEMBER_OR_OWNER_ADMIN = any(SYSTEM_MEMBER, SYSTEM_SERVICE, PROJECT_OWNER_ADMIN, PROJECT_OWNER_MANAGER, PROJECT_SERVICE);
const SYSTEM_MEMBER_OR_OWNER_MEMBER = any(SYSTEM_MEMBER, SYSTEM_SERVICE, PROJECT_OWNER_MEMBER, PROJECT_SERVICE);
const SYSTEM_OR_OWNER_READER = any(SYSTEM_READER, SYSTEM_SERVICE, PROJECT_OWNER_READER, PROJECT_SERVICE);
const ALLOCATION_MEMBER = any(SYSTEM_MEMBER, ALLOCATION_OWNER_MEMBER);
const ALLOCATION_READER = any(SYSTEM_READER, ALLOCATION_OWNER_READER);
const ALLOCATION_CREATOR = any(SYSTEM_MEMBER, 'role:member');
const API_READER = '(role:reader) or (role:service)';

const IS_ADMIN = 'rule:is_admin';
const ADMIN_OR_OBSERVER = 'rule:is_admin or rule:is_observer';
const BOTH: Array<'system' | 'project'> = ['system', 'project'];

function rule(name: string, check: string, deprecated?: string, scopeTypes = BOTH): RuleDefault {
  return { name, check, deprecated, scopeTypes };
}

export const BAREMETAL_RULES: RuleDefault[] = [
  { name: 'admin_api', check: 'role:admin or role:administrator' },
  { name: 'public_api', check: 'is_public_api:True' },
  { name: 'show_password', check: '!' },
  { name: 'show_instance_secrets', check: '!' },
  { name: 'service_role', check: 'role:service and project_name:%(config.service_project_name)s' },
  { name: 'is_member', check: '(project_domain_id:default or project_domain_id:None) and (project_name:demo or project_name:baremetal)' },
  { name: 'is_observer', check: 'rule:is_member and (role:observer or role:baremetal_observer)' },
  { name: 'is_admin', check: 'rule:admin_api or (rule:is_member and role:baremetal_admin)' },
  { name: 'is_node_owner', check: 'project_id:%(node.owner)s' },
  { name: 'is_node_lessee', check: 'project_id:%(node.lessee)s' },
  { name: 'is_allocation_owner', check: 'project_id:%(allocation.owner)s' },

  rule('baremetal:node:create', '(role:admin and system_scope:all) or (role:service and system_scope:all)', IS_ADMIN),
  rule('baremetal:node:create:self_owned_node', '(role:admin) or (role:service)'),
  rule('baremetal:node:get', SYSTEM_OR_PROJECT_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:get:filter_threshold', SYSTEM_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:get:last_error', SYSTEM_OR_OWNER_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:get:reservation', SYSTEM_OR_OWNER_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:get:driver_internal_info', SYSTEM_OR_OWNER_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:get:driver_info', SYSTEM_OR_OWNER_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:list', API_READER, 'rule:baremetal:node:get'),
  rule('baremetal:node:list_all', SYSTEM_READER, 'rule:baremetal:node:get'),
  rule('baremetal:node:update', SYSTEM_OR_PROJECT_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:driver_info', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:properties', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:chassis_uuid', SYSTEM_ADMIN, IS_ADMIN),
  rule('baremetal:node:update:instance_uuid', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:lessee', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:owner', SYSTEM_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:driver_interfaces', SYSTEM_MEMBER_OR_OWNER_ADMIN, IS_ADMIN),
  rule('baremetal:node:update:network_data', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:conductor_group', SYSTEM_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:name', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:retired', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:update:shard', SYSTEM_ADMIN),
  rule('baremetal:node:update_extra', SYSTEM_OR_PROJECT_MEMBER, 'rule:baremetal:node:update'),
  rule('baremetal:node:update_instance_info', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'rule:baremetal:node:update'),
  rule('baremetal:node:update_owner_provisioned', SYSTEM_ADMIN, IS_ADMIN, ['system']),
  rule('baremetal:node:disable_cleaning', SYSTEM_ADMIN, 'rule:baremetal:node:update', ['system']),
  rule('baremetal:node:delete', SYSTEM_ADMIN, IS_ADMIN),
  rule('baremetal:node:delete:self_owned_node', PROJECT_OWNER_ADMIN),
  rule('baremetal:node:set_maintenance', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, IS_ADMIN),
  rule('baremetal:node:clear_maintenance', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, IS_ADMIN),
  rule('baremetal:node:get_states', SYSTEM_OR_PROJECT_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:set_power_state', SYSTEM_OR_PROJECT_MEMBER, IS_ADMIN),
  rule('baremetal:node:set_provision_state', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, IS_ADMIN),
  rule('baremetal:node:validate', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, IS_ADMIN),
  rule('baremetal:node:set_raid_state', SYSTEM_MEMBER_OR_OWNER_MEMBER, IS_ADMIN),
  rule('baremetal:node:vif:list', SYSTEM_OR_PROJECT_READER, IS_ADMIN),
  rule('baremetal:node:vif:attach', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, IS_ADMIN),
  rule('baremetal:node:vif:detach', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, IS_ADMIN),
  rule('baremetal:node:traits:list', SYSTEM_OR_PROJECT_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:node:traits:set', SYSTEM_MEMBER_OR_OWNER_ADMIN, IS_ADMIN),
  rule('baremetal:node:traits:delete', SYSTEM_MEMBER_OR_OWNER_ADMIN, IS_ADMIN),

  rule('baremetal:driver:get', SYSTEM_READER, ADMIN_OR_OBSERVER, ['system']),
  rule('baremetal:driver:get_properties', SYSTEM_READER, ADMIN_OR_OBSERVER, ['system']),

  rule('baremetal:allocation:get', ALLOCATION_READER, ADMIN_OR_OBSERVER),
  rule('baremetal:allocation:list', API_READER, 'rule:baremetal:allocation:get'),
  rule('baremetal:allocation:list_all', SYSTEM_READER, 'rule:baremetal:allocation:get and is_admin_project:True'),
  rule('baremetal:allocation:create', ALLOCATION_CREATOR, 'rule:is_admin and is_admin_project:True'),
  rule('baremetal:allocation:create_restricted', SYSTEM_MEMBER, 'rule:baremetal:allocation:create'),
  rule('baremetal:allocation:create_pre_rbac', '(rule:is_member and role:baremetal_admin) or (is_admin_project:True and role:admin)', undefined, [
    'project',
  ]),
  rule('baremetal:allocation:delete', ALLOCATION_MEMBER, IS_ADMIN),
  rule('baremetal:allocation:update', ALLOCATION_MEMBER, IS_ADMIN),
];

export class BaremetalPolicy {
  constructor(
    readonly mode: BaremetalPolicyMode,
    private readonly engine: PolicyEngine,
  ) {}

  /** the new defaults are enforced (Ironic's CONF.oslo_policy.enforce_new_defaults) */
  get enforceNewDefaults(): boolean {
    return this.mode === 'secure-rbac';
  }

  /** policy.authorize / check_policy: always true under noauth */
  allowed(rule: string, target: Record<string, unknown>, creds: Credentials): boolean {
    if (this.mode === 'noauth') return true;
    return this.engine.scopeOk(rule, creds) && this.engine.check(rule, target, creds);
  }

  /** policy.check: evaluated even under noauth (show_password, show_instance_secrets) */
  check(rule: string, target: Record<string, unknown>, creds: Credentials): boolean {
    return this.engine.check(rule, target, creds);
  }
}

export function baremetalPolicy(settings: PolicySettings<BaremetalPolicyMode>, fallback: BaremetalPolicyMode = 'noauth'): BaremetalPolicy {
  const mode: BaremetalPolicyMode = settings.mode ?? fallback;
  const overrides = ruleOverrides(settings.file ? readFileSync(settings.file, 'utf8') : undefined, settings.overrides);
  const engine = new PolicyEngine(BAREMETAL_RULES, {
    enforceNewDefaults: mode === 'secure-rbac',
    enforceScope: mode === 'secure-rbac',
    overrides,
  });
  return new BaremetalPolicy(mode, engine);
}
