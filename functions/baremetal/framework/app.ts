/**
 * The bare-metal (Ironic-compatible) request pipeline, in Ironic's order:
 *   identity (noauth headers / API Gateway authorizer) -> route lookup ->
 *   microversion negotiation (for /v1/...) -> 405 -> the family's handler
 * and the response decoration on the way out (X-OpenStack-Ironic-API-* headers,
 * Openstack-Request-Id). Each resource-family Lambda is `baremetalApp(its routes)`.
 */
import { jsonDocumentProblem } from '../../core/compat/unicode.js';
import { verifiedIdentity } from '../../http/identity.js';
import { matchRoute } from '../../http/router.js';
import type { App } from '../../http/apigw.js';
import { mb } from '../../http/encoding.js';
import { Query, QueryDecodeError, type HttpRequest, type HttpResponse } from '../../http/types.js';
import type { Identity } from '../../core/policy/identity.js';
import { log } from '../../observability/log.js';
import { config, type Config } from '../../config.js';
import { Problem } from '../../core/errors.js';
import type { Credentials } from '../../core/policy/engine.js';
import { BAREMETAL_ROUTES } from '../routes.js';
import { baremetalPolicy, type BaremetalPolicy } from '../policy.js';
import { WebobError, faultResponse, webobResponse } from './errors.js';
import { Err, IronicError } from '../../core/baremetal/errors.js';
import { internalErrorText } from '../../core/errors.js';
import { pyDumps } from './pyjson.js';
import { layoutRefusal } from '../../store/layout/state.js';
import { checkLimit } from '../../store/ratelimit.js';
import { HEADER, checkVersion, parseVersionHeader, rangeHeaders, type ApiVersion } from './versions.js';

export interface BmRequest {
  http: HttpRequest;
  /** the negotiated version (1.1 for the version documents, which do not negotiate) */
  version: ApiVersion;
  minor: number;
  identity: Identity;
  creds: Credentials;
  params: Record<string, string>;
  readonly query: Query;
  /** scheme://host used in links */
  url: string;
  policy: BaremetalPolicy;
  /** oslo context.to_policy_values() */
  cdict: Record<string, unknown>;
  /** response headers the handler adds (Location) */
  headers: Record<string, string>;
  /** policy.authorize: 403 unless allowed */
  authorize(rule: string, target?: Record<string, unknown>): void;
  /** check_policy: true/false (always true under noauth) */
  allowed(rule: string, target?: Record<string, unknown>): boolean;
  /** policy.check: evaluated even under noauth */
  check(rule: string, target?: Record<string, unknown>): boolean;
  /** the request body as method.body reads it: no body = {} */
  body(): unknown;
}

export type BmHandler = (r: BmRequest) => Promise<HttpResponse>;
export type FamilyRoutes = Record<string, Partial<Record<string, BmHandler>>>;

let policyCache: { cfg: Config; policy: BaremetalPolicy } | undefined;
function policy(): BaremetalPolicy {
  const cfg = config();
  if (policyCache?.cfg !== cfg) {
    policyCache = { cfg, policy: baremetalPolicy(cfg.baremetal.policy, cfg.authStrategy === 'authorizer' ? 'secure-rbac' : 'noauth') };
  }
  return policyCache.policy;
}

/**
 * Ironic's noauth context: no token needed; oslo.context still reads the identity
 * headers keystonemiddleware would have set, so a caller can act as a project.
 */
export function noauthBaremetalIdentity(h: Record<string, string>): Identity {
  const roles = (h['x-roles'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const systemScope = h['openstack-system-scope'] || undefined;
  const projectId = h['x-project-id'] || h['x-tenant-id'] || h['x-tenant'] || undefined;
  return {
    userId: h['x-user-id'] || h['x-user'] || undefined,
    projectId,
    domainId: systemScope || projectId ? undefined : h['x-domain-id'] || undefined,
    roles,
    systemScope,
    source: 'noauth',
  };
}

export function credentialsOf(identity: Identity, h: Record<string, string>): Credentials {
  // noauth: the headers keystonemiddleware would have set. Behind an authorizer only the
  // verified identity counts: a client's X-Project-Name / X-Is-Admin-Project must not
  // satisfy rules such as service_role (role:service and project_name:<service project>).
  const fromHeaders = identity.source === 'noauth';
  return {
    roles: identity.roles,
    userId: identity.userId,
    projectId: identity.projectId,
    domainId: identity.domainId,
    systemScope: identity.systemScope,
    extra: fromHeaders
      ? {
          project_name: h['x-project-name'] || undefined,
          project_domain_id: h['x-project-domain-id'] || undefined,
          is_admin_project: h['x-is-admin-project'] ?? 'True',
        }
      : {
          project_name: identity.projectName,
          project_domain_id: identity.projectDomainId,
          // oslo.context's default when the token says nothing
          is_admin_project: identity.isAdminProject === false ? 'False' : 'True',
        },
  };
}

/**
 * context.to_policy_values(): what every target dict starts from, including Ironic's
 * reserved `config.service_project_name` (CONF.service_project_name, default
 * "service") that the service_role rule interpolates.
 */
export function policyValues(creds: Credentials, serviceProjectName = config().baremetal.serviceProjectName): Record<string, unknown> {
  return {
    user_id: creds.userId ?? null,
    project_id: creds.projectId ?? null,
    domain_id: creds.domainId ?? null,
    system_scope: creds.systemScope ?? null,
    roles: creds.roles,
    ...creds.extra,
    'config.service_project_name': serviceProjectName,
  };
}

function requestIdHeaders(res: HttpResponse, id: string): HttpResponse {
  res.headers['openstack-request-id'] = id;
  return res;
}

/**
 * Every 500: a generic faultstring with the request id. What went wrong (a stack, an AWS
 * SDK message naming an account or a role) is logged under that id, never sent.
 */
export function internalError(req: HttpRequest, message: string, e: unknown, headers: Record<string, string> = {}): HttpResponse {
  log.error(message, { request_id: req.requestId, path: req.path, error: String((e as Error)?.stack ?? e) });
  return requestIdHeaders(faultResponse(new IronicError(500, internalErrorText('Request', req.requestId)), headers), req.requestId);
}

/** Build the pipeline for one resource family (or all of them, locally and in tests). */
export function baremetalApp(handlers: FamilyRoutes): App {
  const app: App = async (req: HttpRequest) => {
    try {
      return await pipeline(req, handlers);
    } catch (e) {
      if (e instanceof WebobError) return webobResponse(e);
      return internalError(req, 'baremetal request failed', e);
    }
  };
  app.crash = (requestId) => faultResponse(new IronicError(500, internalErrorText('Request', requestId)));
  app.tooLarge = (req, size) => {
    const how = size.compressed ? 'even compressed' : 'uncompressed (send Accept-Encoding: gzip to receive it compressed)';
    const e = new IronicError(
      400,
      `The answer to ${req.method} ${req.path} is ${mb(size.bytes)} and does not fit ${how} in the ${mb(size.limit)} a response may carry here: ask for it in pages with limit and marker, or with fewer fields.`,
    );
    return requestIdHeaders(faultResponse(e), req.requestId);
  };
  return app;
}

async function pipeline(req: HttpRequest, handlers: FamilyRoutes): Promise<HttpResponse> {
  const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') || '/' : req.path;
  const cfg = config();
  // oslo.middleware's sizelimit (Ironic's [oslo_middleware] max_request_body_size), before
  // anything reads the body; the bound is the same MAX_BODY_BYTES as Placement's
  if (req.body !== undefined && Buffer.byteLength(req.body) > cfg.maxBodyBytes) throw new WebobError(413, 'Request is too large.');
  const open = path === '/' || path === '/v1';
  let identity: Identity | undefined;
  if (cfg.authStrategy === 'refused') {
    // fail closed: a missing or unknown AUTH_STRATEGY identifies nobody (config.ts)
    if (!open) return internalError(req, 'identity configuration refused', cfg.authProblem);
    identity = { roles: [], source: 'none' };
  } else if (cfg.authStrategy === 'authorizer') {
    // behind an authorizer only its verified identity counts, never a header
    identity = verifiedIdentity(req, cfg);
    if (!identity) {
      if (!open) throw new WebobError(401, 'The request you have made requires authentication.');
      identity = { roles: [], source: 'none' };
    }
  }
  identity ??= noauthBaremetalIdentity(req.headers);

  const versioned = path === '/v1' || path.startsWith('/v1/');
  let version: ApiVersion = { major: 1, minor: 1 };
  if (versioned) {
    try {
      version = parseVersionHeader(req.headers[HEADER]);
      checkVersion(version);
    } catch (e) {
      // the version document negotiates inside its API method: a fault body
      if (path === '/v1' && e instanceof WebobError) {
        return requestIdHeaders(faultResponse(new IronicError(e.status, e.description), e.headers), req.requestId);
      }
      throw e;
    }
  }
  const m = matchRoute(BAREMETAL_ROUTES, path);
  if (!m) throw new WebobError(404);
  if (!m.route.methods.includes(req.method)) {
    if (path === '/v1') {
      // Controller.index answers other methods itself, with the version headers
      const e = new IronicError(405, 'The server could not comply with the request since it is either malformed or otherwise incorrect.');
      return requestIdHeaders(faultResponse(e, rangeHeaders()), req.requestId);
    }
    throw new WebobError(405, '', { allow: [...m.route.methods].sort().join(', ') });
  }
  const fn = handlers[m.route.path]?.[req.method];
  if (!fn && path !== req.path) {
    // ironicclient lists with filters as /v1/nodes/?...: API Gateway (and the local
    // adapter) route a trailing slash to the $default function, which does not serve
    // the family; send the client to the canonical path (keystoneauth follows 308s)
    const location = `${req.baseUrl}${path}${req.rawQuery ? `?${req.rawQuery}` : ''}`;
    return requestIdHeaders({ status: 308, headers: { location, 'content-length': '0' }, body: '' }, req.requestId);
  }
  if (!fn) throw new Error(`route ${req.method} ${m.route.path} is not served by this function`);

  const creds = credentialsOf(identity, req.headers);
  const cdict = policyValues(creds);
  const pol = policy();
  const vheaders: Record<string, string> = versioned ? { ...rangeHeaders(), [HEADER]: `${version.major}.${version.minor}` } : {};
  let query: Query | undefined;
  let parsedBody: { v: unknown } | undefined;
  const r: BmRequest = {
    http: req,
    version,
    minor: version.minor,
    identity,
    creds,
    params: m.params,
    url: req.baseUrl,
    policy: pol,
    cdict,
    headers: {},
    get query() {
      if (!query) {
        try {
          query = Query.parse(req.rawQuery);
        } catch (e) {
          if (e instanceof QueryDecodeError) throw Err.invalid(e.message);
          throw e;
        }
      }
      return query;
    },
    authorize(rule, target) {
      if (!pol.allowed(rule, { ...cdict, ...target }, creds)) throw Err.forbidden(rule);
    },
    allowed(rule, target) {
      return pol.allowed(rule, { ...cdict, ...target }, creds);
    },
    check(rule, target) {
      return pol.check(rule, { ...cdict, ...target }, creds);
    },
    body() {
      if (!parsedBody) {
        const text = req.body ?? '';
        if (!text.length) parsedBody = { v: {} };
        else {
          let v: unknown;
          try {
            v = JSON.parse(text);
          } catch (e) {
            throw Err.invalid(`Malformed JSON in request body: ${(e as Error).message}`);
          }
          const problem = jsonDocumentProblem(v);
          if (problem !== undefined) throw Err.invalid(`Malformed JSON in request body: ${problem}`);
          parsedBody = { v };
        }
      }
      return parsedBody.v;
    },
  };
  try {
    // a table in a layout this release does not serve (yet): 503, nothing read or written
    const refused = await layoutRefusal(req.path, { ownItemsOnly: cfg.baremetal.scheduler === 'database' });
    if (refused) throw new IronicError(503, refused.message, 'Server', refused.headers);
    // the caller's request budget (RATE_LIMIT): every authenticated request counts
    if (!open && identity.source !== 'none') {
      const limited = await checkLimit('baremetal', identity, cfg.rateLimit, cfg.rateLimitExemptRoles);
      if (limited) {
        if (limited.error === 'unavailable') log.error('request limit unavailable', { request_id: req.requestId, error: String(limited.cause) });
        throw new IronicError(limited.error === 'limited' ? 429 : 503, limited.text, undefined, { 'retry-after': String(limited.retryAfterS) });
      }
    }
    const res = await fn(r);
    Object.assign(res.headers, vheaders, r.headers);
    return requestIdHeaders(res, req.requestId);
  } catch (e) {
    if (e instanceof WebobError) throw e;
    if (!(e instanceof Problem)) return internalError(req, 'baremetal handler failed', e, vheaders);
    return requestIdHeaders(faultResponse(e, vheaders), req.requestId);
  }
}

// ---- helpers handlers share ----

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: pyDumps(body) };
}

/** the one 204 both APIs answer with (functions/http/types.ts) */
export { noContent } from '../../http/types.js';

export function accepted(): HttpResponse {
  return { status: 202, headers: { 'content-length': '0' }, body: '' };
}

/** args.validate's check that no unknown query parameter was given */
export function queryArgs(r: BmRequest, allowed: readonly string[]): Record<string, string> {
  const d = r.query.toDict();
  const extra = Object.keys(d).filter((k) => !allowed.includes(k));
  if (extra.length) throw Err.invalid(`Unexpected arguments: ${extra.join(', ')}`);
  return d;
}

/** link.build_url */
export function buildUrl(r: BmRequest, resource: string, args: string, bookmark = false): string {
  const base = bookmark ? `${r.url}/${resource}` : `${r.url}/v1/${resource}`;
  return args.startsWith('?') ? `${base}${args}` : `${base}/${args}`;
}

export function makeLink(r: BmRequest, rel: string, resource: string, args: string, bookmark = false): { href: string; rel: string } {
  return { href: buildUrl(r, resource, args, bookmark), rel };
}

/** self + bookmark links of a resource */
export function selfLinks(r: BmRequest, resource: string, args: string) {
  return [makeLink(r, 'self', resource, args), makeLink(r, 'bookmark', resource, args, true)];
}
