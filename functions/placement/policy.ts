/**
 * Placement's policy rules with the defaults of current upstream (project-scoped
 * admin, the `service` role, project readers may read their own usages, reshaper is
 * for services only, system-scoped tokens refused) and the deprecated-rule mode in
 * which every rule is OR-ed with `role:admin`. Modes (PLACEMENT_POLICY_MODE):
 *   default | legacy-rbac : deprecated rules OR-ed in, scope enforced
 *   secure-rbac           : new defaults only, scope enforced
 *   open                  : every rule except admin_api is '@' (tests)
 * Operators may override any rule with a JSON/YAML-ish file (PLACEMENT_POLICY_FILE)
 * or PLACEMENT_POLICY_OVERRIDES (JSON object).
 */
import { readFileSync } from 'node:fs';
import { PolicyEngine, type RuleDefault } from '../core/policy/engine.js';
import { ruleOverrides } from '../core/policy/file.js';
import { config, type PolicySettings, type PlacementPolicyMode } from '../config.js';

const ADMIN_OR_SERVICE = 'rule:admin_or_service_api';
const SERVICE = 'rule:service_api';
const PROJECT_READER_OR_ADMIN_OR_SERVICE = 'rule:project_reader_or_admin_or_service';
const DEPRECATED = 'role:admin';
const PROJECT: Array<'project'> = ['project'];

function api(name: string, check: string, description: string): RuleDefault {
  return { name, check, scopeTypes: PROJECT, deprecated: DEPRECATED, description };
}

export const PLACEMENT_RULES: RuleDefault[] = [
  { name: 'admin_api', check: 'role:admin', scopeTypes: PROJECT, description: 'Default rule for administrative APIs.' },
  { name: 'service_api', check: 'role:service', scopeTypes: PROJECT, description: 'Default rule for service-to-service APIs.' },
  { name: 'admin_or_service_api', check: 'role:admin or role:service', scopeTypes: PROJECT, description: 'Admin or service.' },
  { name: 'project_reader_api', check: 'role:reader and project_id:%(project_id)s', scopeTypes: PROJECT, description: 'Project reader.' },
  {
    name: 'project_reader_or_admin_or_service',
    check: 'rule:project_reader_api or rule:admin_or_service_api',
    scopeTypes: PROJECT,
    description: 'Project reader, admin or service.',
  },
  ...['list', 'create', 'show', 'update', 'delete'].map((a) => api(`placement:resource_providers:${a}`, ADMIN_OR_SERVICE, `${a} resource providers`)),
  ...['list', 'create', 'show', 'update', 'delete'].map((a) =>
    api(`placement:resource_providers:inventories:${a}`, ADMIN_OR_SERVICE, `${a} inventories`),
  ),
  ...['list', 'update'].map((a) => api(`placement:resource_providers:aggregates:${a}`, ADMIN_OR_SERVICE, `${a} aggregates`)),
  ...['list', 'update', 'delete'].map((a) => api(`placement:resource_providers:traits:${a}`, ADMIN_OR_SERVICE, `${a} provider traits`)),
  ...['list', 'show', 'update', 'delete'].map((a) => api(`placement:traits:${a}`, ADMIN_OR_SERVICE, `${a} traits`)),
  ...['list', 'create', 'show', 'update', 'delete'].map((a) => api(`placement:resource_classes:${a}`, ADMIN_OR_SERVICE, `${a} resource classes`)),
  ...['manage', 'list', 'update', 'delete'].map((a) => api(`placement:allocations:${a}`, ADMIN_OR_SERVICE, `${a} allocations`)),
  api('placement:resource_providers:allocations:list', ADMIN_OR_SERVICE, 'list a provider’s allocations'),
  api('placement:resource_providers:usages', ADMIN_OR_SERVICE, 'show a provider’s usages'),
  api('placement:usages', PROJECT_READER_OR_ADMIN_OR_SERVICE, 'show a project’s total usages'),
  api('placement:allocation_candidates:list', ADMIN_OR_SERVICE, 'list allocation candidates'),
  api('placement:reshaper:reshape', SERVICE, 'reshape inventories and allocations'),
];

export function placementPolicy(settings: PolicySettings<PlacementPolicyMode> = config().placementPolicy): PolicyEngine {
  const mode: PlacementPolicyMode = settings.mode ?? 'default';
  const overrides = ruleOverrides(settings.file ? readFileSync(settings.file, 'utf8') : undefined, settings.overrides);
  return new PolicyEngine(PLACEMENT_RULES, {
    enforceNewDefaults: mode === 'secure-rbac',
    enforceScope: true,
    overrides,
    openExcept: mode === 'open' ? ['admin_api'] : undefined,
  });
}
