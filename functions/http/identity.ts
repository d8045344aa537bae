/**
 * Who is calling. Locally (and in the conformance suite) Placement's noauth2 rules
 * turn headers into an identity; in AWS an API Gateway authorizer has already
 * verified the caller and the identity arrives in the request context — and only
 * there: behind an authorizer no request header counts.
 */
import type { HttpRequest } from './types.js';
import { identityFromClaims, parseClaimMapping, type ClaimMapping, type Identity } from '../core/policy/identity.js';
import type { Config } from '../config.js';
import { log } from '../observability/log.js';

/** Placement's NoAuthMiddleware + oslo.context, as the conformance README spells out. */
export function noauthIdentity(headers: Record<string, string>): Identity | undefined {
  const token = headers['x-auth-token'];
  if (token === undefined) return undefined;
  const colon = token.indexOf(':');
  const userId = colon < 0 ? token : token.slice(0, colon);
  const tokenProject = colon < 0 ? '' : token.slice(colon + 1);
  let roles: string[];
  if (headers['x-roles'] !== undefined) roles = headers['x-roles'].split(',');
  else if (userId === 'admin') roles = ['admin'];
  else roles = [];
  const systemScope = headers['openstack-system-scope'] || undefined;
  let projectId: string | undefined = systemScope ? undefined : tokenProject || userId;
  if (headers['x-project-id'] !== undefined) projectId = headers['x-project-id'] || undefined;
  const domainId = systemScope || projectId ? undefined : headers['x-domain-id'] || undefined;
  return { userId, projectId, domainId, roles: roles.map((r) => r.trim()).filter(Boolean), systemScope, source: 'noauth' };
}

function str(v: unknown): string | undefined {
  return v === undefined || v === null || v === '' ? undefined : String(v);
}

/**
 * Identity from an API Gateway authorizer. A Lambda authorizer (Keystone mode) puts
 * {userId, projectId | domainId | systemScope, roles, …} in its context; a JWT
 * authorizer exposes claims that the configured mapping turns into the same shape (and
 * refuses — undefined — when they name no project). Undefined: no verified identity.
 */
export function authorizerIdentity(req: HttpRequest, mapClaims?: (claims: Record<string, unknown>) => Identity | undefined): Identity | undefined {
  const a = req.authorizer as { lambda?: Record<string, unknown>; jwt?: { claims?: Record<string, unknown> } } | undefined;
  if (!a) return undefined;
  if (a.lambda) {
    const l = a.lambda;
    const userId = str(l.userId);
    if (!userId) return undefined;
    const roles = contextRoles(l.roles);
    // roles that are not a JSON list of strings identify nobody: no separator is guessed
    if (!roles) return undefined;
    const systemScope = str(l.systemScope);
    const projectId = systemScope ? undefined : str(l.projectId);
    return {
      userId,
      projectId,
      domainId: systemScope || projectId ? undefined : str(l.domainId),
      roles,
      systemScope,
      projectName: projectId ? str(l.projectName) : undefined,
      projectDomainId: projectId ? str(l.projectDomainId) : undefined,
      isAdminProject:
        l.isAdminProject === 'true' || l.isAdminProject === true
          ? true
          : l.isAdminProject === 'false' || l.isAdminProject === false
            ? false
            : undefined,
      source: 'keystone',
    };
  }
  if (a.jwt?.claims && mapClaims) return mapClaims(a.jwt.claims);
  return undefined;
}

/**
 * The roles of a Lambda authorizer's context: a JSON list of strings
 * (functions/authorizer/keystone.ts authorizerContext), or such a list itself.
 * Anything else — a comma-joined string included — is undefined.
 */
export function contextRoles(v: unknown): string[] | undefined {
  let list = v;
  if (typeof v === 'string') {
    try {
      list = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(list) || !list.every((r) => typeof r === 'string')) return undefined;
  return list.filter((r) => r !== '');
}

let mapping: { text: string | undefined; mapping: ClaimMapping } | undefined;

/** The configured JWT claim mapping (parsed once per setting). */
export function claimMapping(cfg: Pick<Config, 'jwtClaimMapping'>): ClaimMapping {
  if (!mapping || mapping.text !== cfg.jwtClaimMapping) mapping = { text: cfg.jwtClaimMapping, mapping: parseClaimMapping(cfg.jwtClaimMapping) };
  return mapping.mapping;
}

/**
 * The verified identity behind an authorizer (both APIs), Keystone or JWT; undefined when
 * the request carries none that names a user and a project or the system scope.
 */
export function verifiedIdentity(req: HttpRequest, cfg: Pick<Config, 'jwtClaimMapping'>): Identity | undefined {
  const m = claimMapping(cfg);
  return authorizerIdentity(req, (rendered) => {
    const claims = mappedClaims(rendered, req.headers.authorization, m);
    return claims && identityFromClaims(claims, m);
  });
}

/** The claims of `Authorization: Bearer <JWT>` (not verified here: API Gateway did). */
export function bearerClaims(authorization: string | undefined): Record<string, unknown> | undefined {
  const m = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/.exec(authorization?.trim() ?? '');
  if (!m) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(m[2]!, 'base64url').toString('utf8')) as unknown;
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** How an HTTP API JWT authorizer renders a claim in requestContext.authorizer.jwt.claims. */
export function renderedClaim(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(renderedClaim).join(' ')}]`;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function sameClaim(rendered: unknown, actual: unknown): boolean {
  if (rendered === undefined || actual === undefined) return rendered === actual;
  if (typeof rendered !== 'string') return JSON.stringify(rendered) === JSON.stringify(actual);
  return rendered === renderedClaim(actual) || (typeof actual !== 'object' && rendered === String(actual));
}

/**
 * The claims the mapping reads, with their JSON types. An HTTP API JWT authorizer hands
 * claims to the function as strings, a list as "[a b c]": a group "ops admin" and the
 * two groups "ops" and "admin" look the same. So the values are read from the token the
 * authorizer verified — the request's Authorization header, its only identity source —
 * and used only if each renders exactly as the authorizer passed it; a token that does
 * not (or no token) identifies nobody.
 */
export function mappedClaims(
  rendered: Record<string, unknown>,
  authorization: string | undefined,
  m: ClaimMapping,
): Record<string, unknown> | undefined {
  const token = bearerClaims(authorization);
  if (!token) {
    log.warn('JWT claims without a bearer token: refused');
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const key of new Set([m.user, m.project, m.roles, m.systemScope].filter((k): k is string => k !== undefined))) {
    const actual = Object.hasOwn(token, key) ? token[key] : undefined;
    if (!sameClaim(rendered[key], actual)) {
      log.warn('JWT claims differ from the bearer token: refused', { claim: key });
      return undefined;
    }
    if (actual !== undefined) out[key] = actual;
  }
  return out;
}
