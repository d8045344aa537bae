/**
 * Turning what an identity provider asserted into Berth's Identity (pure):
 *  - a Keystone v3 token body (GET /v3/auth/tokens) → user, project or domain or
 *    system scope, roles;
 *  - OIDC/JWT claims (e.g. Cognito) → the same, through an operator-configured mapping.
 *
 * Scope is Keystone's: a token is scoped to a project, to a domain, to the system, or to
 * nothing (unscoped). Only project- and system-scoped identities can pass a rule
 * (functions/core/policy/engine.ts), and a rule that compares a project with a target
 * never matches an identity without one.
 */

/** Keystone's token scopes; 'none' is an unscoped token (or a JWT naming no project) */
export type Scope = 'project' | 'domain' | 'system' | 'none';

/** Who is calling, as the policy engine sees it (from noauth headers, a Keystone token or a JWT). */
export interface Identity {
  userId?: string;
  projectId?: string;
  /** the domain of a domain-scoped Keystone token (never set together with projectId) */
  domainId?: string;
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

/** oslo.policy's reading of a token's scope (_enforce_scope), with unscoped kept apart from project. */
export function scopeOf(i: { systemScope?: string; domainId?: string; projectId?: string }): Scope {
  if (i.systemScope) return 'system';
  if (i.domainId) return 'domain';
  if (i.projectId) return 'project';
  return 'none';
}

export interface KeystoneToken {
  token: {
    user?: { id?: string; name?: string };
    project?: { id?: string; name?: string; domain?: { id?: string; name?: string } };
    /** set on domain-scoped tokens */
    domain?: { id?: string; name?: string };
    /** Keystone's admin-project flag (absent when no admin project is configured) */
    is_admin_project?: boolean;
    roles?: Array<{ id?: string; name: string }>;
    system?: { all?: boolean };
    expires_at?: string;
  };
}

export function identityFromKeystone(body: KeystoneToken): Identity {
  const t = body.token;
  const system = t.system?.all ? 'all' : undefined;
  // one scope per token: system wins, then project, then domain (Keystone never sets two)
  const projectId = system ? undefined : t.project?.id || undefined;
  const domainId = system || projectId ? undefined : t.domain?.id || undefined;
  return {
    userId: t.user?.id,
    projectId,
    domainId,
    roles: (t.roles ?? []).map((r) => r.name),
    systemScope: system,
    projectName: projectId ? t.project?.name : undefined,
    projectDomainId: projectId ? t.project?.domain?.id : undefined,
    isAdminProject: t.is_admin_project,
    source: 'keystone',
  };
}

/**
 * How JWT claims map to an identity. Defaults fit Cognito: the user is `sub`, roles come
 * from `cognito:groups`, the project from `custom:project_id`. The project claim is
 * required: a token without it (an access token, or an ID token of a user without the
 * attribute) is refused, unless the system-scope claim says "all". The operator must make
 * sure users cannot write the claims they are mapped from (docs/security.md, "Identity: what the operator must configure").
 */
export interface ClaimMapping {
  user: string;
  project: string;
  roles: string;
  /**
   * a roles claim that is one string is one role, unless this is set: then it is split
   * on exactly this separator (' ' splits on any whitespace). The elements of a list
   * claim are roles as they are, never split.
   */
  rolesSeparator?: string;
  /** a claim whose value "all" marks a system-scoped caller */
  systemScope?: string;
  /** prefix stripped from role names (e.g. "placement-" for groups named placement-admin); other values are dropped */
  rolePrefix?: string;
}

export const DEFAULT_CLAIM_MAPPING: ClaimMapping = {
  user: 'sub',
  project: 'custom:project_id',
  roles: 'cognito:groups',
};

const MAPPING_KEYS = ['user', 'project', 'roles', 'rolesSeparator', 'systemScope', 'rolePrefix'] as const;

/** Parse JWT_CLAIM_MAPPING; throws on anything but an object of known string keys. */
export function parseClaimMapping(json: string | undefined): ClaimMapping {
  if (!json) return DEFAULT_CLAIM_MAPPING;
  let m: unknown;
  try {
    m = JSON.parse(json);
  } catch {
    throw new Error('claim mapping: not valid JSON');
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new Error('claim mapping: must be a JSON object');
  for (const [k, v] of Object.entries(m)) {
    if (!(MAPPING_KEYS as readonly string[]).includes(k)) throw new Error(`claim mapping: unknown key ${k} (known: ${MAPPING_KEYS.join(', ')})`);
    if (typeof v !== 'string' || v === '') throw new Error(`claim mapping: ${k} must be a non-empty string`);
  }
  return { ...DEFAULT_CLAIM_MAPPING, ...(m as Partial<ClaimMapping>) };
}

/**
 * The roles a claim holds: each element of a list, whole; a string is one role unless a
 * separator is configured. (API Gateway's rendering of a list claim, "[a b]", cannot
 * tell ["a b"] from ["a", "b"]: functions/http/identity.ts reads list claims from the
 * verified token itself, so they arrive here as lists.)
 */
function claimValues(v: unknown, sep: string | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.filter((x) => typeof x === 'string' && x !== '') as string[];
  if (typeof v !== 'string') return [];
  const s = v.trim();
  if (sep === undefined) return s === '' ? [] : [s];
  return (sep === ' ' ? s.split(/\s+/) : s.split(sep)).map((x) => x.trim()).filter(Boolean);
}

/** a claim naming one thing (user, project, scope): a string or a number, never a list or an object */
function claimString(v: unknown): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const s = String(v).trim();
  return s === '' ? undefined : s;
}

/**
 * The identity JWT claims assert, or undefined when they do not name a user, or name
 * neither a project nor the system scope (such a token is refused: 401).
 */
export function identityFromClaims(claims: Record<string, unknown>, m: ClaimMapping): Identity | undefined {
  let roles = claimValues(claims[m.roles], m.rolesSeparator);
  if (m.rolePrefix) roles = roles.filter((r) => r.startsWith(m.rolePrefix!)).map((r) => r.slice(m.rolePrefix!.length));
  const userId = claimString(claims[m.user]);
  const systemScope = m.systemScope && claimString(claims[m.systemScope]) === 'all' ? 'all' : undefined;
  const projectId = systemScope ? undefined : claimString(claims[m.project]);
  if (!userId || (!projectId && !systemScope)) return undefined;
  return { userId, projectId, roles, systemScope, source: 'jwt' };
}
