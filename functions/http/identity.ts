/**
 * Who is calling. Locally (and in the conformance suite) Placement's noauth2 rules
 * turn headers into an identity; in AWS an API Gateway authorizer has already
 * verified the caller and the identity arrives in the request context.
 */
import type { HttpRequest } from './types.js';
import type { Identity } from '../core/policy/identity.js';

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
  if (headers['x-project-id'] !== undefined) projectId = headers['x-project-id'];
  return { userId, projectId, roles: roles.map((r) => r.trim()).filter(Boolean), systemScope, source: 'noauth' };
}

/**
 * Identity from an API Gateway authorizer. A Lambda authorizer (Keystone mode) puts
 * {userId, projectId, roles, systemScope} in its context; a JWT authorizer exposes
 * claims that the configured mapping turns into the same shape.
 */
export function authorizerIdentity(req: HttpRequest, mapClaims?: (claims: Record<string, unknown>) => Identity): Identity | undefined {
  const a = req.authorizer as { lambda?: Record<string, unknown>; jwt?: { claims?: Record<string, unknown> } } | undefined;
  if (!a) return undefined;
  if (a.lambda) {
    const l = a.lambda;
    const roles = Array.isArray(l.roles)
      ? (l.roles as string[])
      : String(l.roles ?? '')
          .split(',')
          .filter(Boolean);
    return {
      userId: l.userId ? String(l.userId) : undefined,
      projectId: l.projectId ? String(l.projectId) : undefined,
      roles,
      systemScope: l.systemScope ? String(l.systemScope) : undefined,
      projectName: l.projectName ? String(l.projectName) : undefined,
      projectDomainId: l.projectDomainId ? String(l.projectDomainId) : undefined,
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
