/**
 * Turning what an identity provider asserted into Berth's Identity (pure):
 *  - a Keystone v3 token body (GET /v3/auth/tokens) → user, project, roles, system scope;
 *  - OIDC/JWT claims (e.g. Cognito) → the same, through an operator-configured mapping.
 */

/** Who is calling, as the policy engine sees it (from noauth headers, a Keystone token or a JWT). */
export interface Identity {
  userId?: string;
  projectId?: string;
  roles: string[];
  /** 'all' for system-scoped tokens (openstack-system-scope: all) */
  systemScope?: string;
  /** oslo.context's project_name / project_domain_id / is_admin_project, from the verified token (Ironic's rules test them) */
  projectName?: string;
  projectDomainId?: string;
  isAdminProject?: boolean;
  /** where the identity came from: noauth2 headers, a Keystone token, a JWT */
  source: 'noauth' | 'keystone' | 'jwt' | 'none';
}

export interface KeystoneToken {
  token: {
    user?: { id?: string; name?: string };
    project?: { id?: string; name?: string; domain?: { id?: string; name?: string } };
    /** Keystone's admin-project flag (absent when no admin project is configured) */
    is_admin_project?: boolean;
    roles?: Array<{ id?: string; name: string }>;
    system?: { all?: boolean };
    expires_at?: string;
  };
}

export function identityFromKeystone(body: KeystoneToken): Identity {
  const t = body.token;
  return {
    userId: t.user?.id,
    projectId: t.project?.id,
    roles: (t.roles ?? []).map((r) => r.name),
    systemScope: t.system?.all ? 'all' : undefined,
    projectName: t.project?.name,
    projectDomainId: t.project?.domain?.id,
    isAdminProject: t.is_admin_project,
    source: 'keystone',
  };
}

/**
 * How JWT claims map to an identity. Defaults fit Cognito: the user is `sub`, roles come
 * from `cognito:groups`, the project from `custom:project_id`.
 */
export interface ClaimMapping {
  user: string;
  project: string;
  roles: string;
  /** roles given as one string are split on this (space or comma) */
  rolesSeparator?: string;
  /** a claim whose value "all" marks a system-scoped caller */
  systemScope?: string;
  /** prefix stripped from role names (e.g. "placement-" for groups named placement-admin) */
  rolePrefix?: string;
}

export const DEFAULT_CLAIM_MAPPING: ClaimMapping = {
  user: 'sub',
  project: 'custom:project_id',
  roles: 'cognito:groups',
  rolesSeparator: ' ',
};

export function parseClaimMapping(json: string | undefined): ClaimMapping {
  if (!json) return DEFAULT_CLAIM_MAPPING;
  const m = JSON.parse(json) as Partial<ClaimMapping>;
  for (const k of ['user', 'project', 'roles'] as const) {
    if (m[k] !== undefined && typeof m[k] !== 'string') throw new Error(`claim mapping: ${k} must be a claim name`);
  }
  return { ...DEFAULT_CLAIM_MAPPING, ...m };
}

function claimValues(v: unknown, sep: string | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map(String);
  const s = String(v).trim();
  // API Gateway passes array claims as "[a b c]"
  const inner = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  return inner
    .split(sep === ',' ? /,/ : /[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
}

export function identityFromClaims(claims: Record<string, unknown>, m: ClaimMapping): Identity {
  let roles = claimValues(claims[m.roles], m.rolesSeparator);
  if (m.rolePrefix) roles = roles.filter((r) => r.startsWith(m.rolePrefix!)).map((r) => r.slice(m.rolePrefix!.length));
  const project = claims[m.project];
  const user = claims[m.user];
  return {
    userId: user === undefined ? undefined : String(user),
    projectId: project === undefined ? undefined : String(project),
    roles,
    systemScope: m.systemScope && String(claims[m.systemScope] ?? '') === 'all' ? 'all' : undefined,
    source: 'jwt',
  };
}
