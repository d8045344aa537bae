/**
 * The Placement request pipeline, in Placement's own middleware order:
 *   request id -> CORS -> auth (noauth2 / authorizer) -> microversion -> routing
 *   (404 / 405 with Allow) -> the resource family's handler
 * and the response decoration on the way out (OpenStack-API-Version, Vary,
 * request ids, CORS). Each resource family Lambda is `placementApp(its routes)`.
 * What handlers are given is framework/request.ts; what they call, framework/guards.ts;
 * answers too large to send, framework/too-large.ts.
 */
import { noauthIdentity, verifiedIdentity } from '../../http/identity.js';
import { matchRoute } from '../../http/router.js';
import type { App } from '../../http/apigw.js';
import { Query, QueryDecodeError, type HttpRequest, type HttpResponse } from '../../http/types.js';
import type { Identity } from '../../core/policy/identity.js';
import { MicroversionFormatError, MicroversionRangeError, RequestVersion, versionString } from '../../core/microversion.js';
import { PLACEMENT_VERSIONS } from './versions.js';
import { config, type Config } from '../../config.js';
import { PLACEMENT_ROUTES } from '../routes.js';
import { ErrorCodes, PlacementError } from '../../core/placement/errors.js';
import { renderError, unauthorizedResponse, type RenderEnv } from './errors.js';
import { RetriesExhausted } from '../../store/ddb/retry.js';
import { layoutHeader, layoutRefusal } from '../../store/layout/state.js';
import { checkLimit } from '../../store/ratelimit.js';
import { applyCors, corsSettings } from './cors.js';
import { placementPolicy } from '../policy.js';
import type { PolicyEngine } from '../../core/policy/engine.js';
import { log } from '../../observability/log.js';
import { internalErrorText, Problem } from '../../core/errors.js';
import { contentTypeOf, requestIdHeaders, type FamilyRoutes, type PlacementRequest } from './request.js';
import { answerTooLarge } from './too-large.js';

/** a write that lost its race too many times in a row (store/ddb/retry.ts) */
const CONCURRENT_UPDATE_RETRY_TEXT = 'Another request changed the same data at the same time; please retry.';

let policyEngine: { settings: Config['placementPolicy']; engine: PolicyEngine } | undefined;
function policy(): PolicyEngine {
  const settings = config().placementPolicy;
  if (policyEngine?.settings !== settings) policyEngine = { settings, engine: placementPolicy(settings) };
  return policyEngine.engine;
}

/** Behind an authorizer only its verified identity counts; noauth2 reads the headers. */
function identityOf(req: HttpRequest, cfg: Config): Identity | undefined {
  if (cfg.authStrategy === 'authorizer') return verifiedIdentity(req, cfg);
  if (cfg.authStrategy === 'noauth2') return noauthIdentity(req.headers);
  return undefined;
}

function internalError(req: HttpRequest, message: string, e: unknown, version?: RequestVersion): HttpResponse {
  log.error(message, { request_id: req.requestId, path: req.path, error: String((e as Error)?.stack ?? e) });
  return renderError(new PlacementError(500, internalErrorText('Request', req.requestId)), {
    method: req.method,
    accept: req.headers.accept,
    contentType: contentTypeOf(req),
    requestId: req.requestId,
    version,
  });
}

/** Build the pipeline for one resource family (or for all of them, locally/tests). */
export function placementApp(handlers: FamilyRoutes): App {
  const app: App = async (req: HttpRequest) => {
    let res: HttpResponse;
    try {
      const cfg = config();
      const cors = corsSettings(cfg);
      res = await authenticated(req, cfg, handlers);
      if (cors) res = applyCors(req, res, cors);
    } catch (e) {
      res = internalError(req, 'placement request failed', e);
    }
    return requestIdHeaders(res, req.requestId);
  };
  app.tooLarge = answerTooLarge;
  app.crash = (requestId) => renderError(new PlacementError(500, internalErrorText('Request', requestId)), { method: '', requestId });
  return app;
}

async function authenticated(req: HttpRequest, cfg: Config, handlers: FamilyRoutes): Promise<HttpResponse> {
  // The version document at '/' needs no token (whatever the method).
  let identity: Identity | undefined;
  if (req.path !== '/' && req.path !== '') {
    // fail closed: a missing or unknown AUTH_STRATEGY identifies nobody (config.ts)
    if (cfg.authStrategy === 'refused') return internalError(req, 'identity configuration refused', cfg.authProblem);
    identity = identityOf(req, cfg);
    if (!identity || (identity.userId === undefined && identity.source === 'noauth')) return unauthorizedResponse();
  }
  identity ??= { roles: [], source: 'none' };
  return versioned(req, cfg, identity, handlers);
}

async function versioned(req: HttpRequest, cfg: Config, identity: Identity, handlers: FamilyRoutes): Promise<HttpResponse> {
  const env: RenderEnv = {
    method: req.method,
    accept: req.headers.accept,
    contentType: contentTypeOf(req),
    requestId: req.requestId,
  };
  let version: RequestVersion;
  try {
    version = RequestVersion.of(PLACEMENT_VERSIONS.extract(req.headers));
  } catch (e) {
    if (e instanceof MicroversionRangeError) return renderError(new PlacementError(406, `Invalid microversion: ${e.message}`), env);
    if (e instanceof MicroversionFormatError) return renderError(new PlacementError(400, `Invalid microversion: ${e.message}`), env);
    throw e;
  }
  env.version = version;
  const vheader = `placement ${versionString(version)}`;
  try {
    const res = await dispatch(req, cfg, identity, version, handlers);
    res.headers['openstack-api-version'] = vheader;
    res.headers.vary = 'openstack-api-version';
    return res;
  } catch (e) {
    let err: Problem;
    if (e instanceof Problem) err = e;
    else if (e instanceof RetriesExhausted) err = new PlacementError(409, CONCURRENT_UPDATE_RETRY_TEXT, ErrorCodes.CONCURRENT_UPDATE);
    else {
      const res = internalError(req, 'placement handler failed', e, version);
      res.headers['openstack-api-version'] = vheader;
      res.headers.vary = 'openstack-api-version';
      return res;
    }
    const res = renderError(err, env);
    res.headers['openstack-api-version'] = vheader;
    if (!(err instanceof PlacementError && err.escaped)) res.headers.vary = 'openstack-api-version';
    return res;
  }
}

async function dispatch(req: HttpRequest, cfg: Config, identity: Identity, version: RequestVersion, handlers: FamilyRoutes): Promise<HttpResponse> {
  // Request size limits: Placement bodies are small JSON documents; refuse anything
  // bigger before parsing it (API Gateway's own limit is 10 MB).
  if (req.body !== undefined && Buffer.byteLength(req.body) > cfg.maxBodyBytes) {
    throw new PlacementError(413, `Request body is larger than ${cfg.maxBodyBytes} bytes.`);
  }
  if (req.rawQuery.length > cfg.maxQueryBytes) {
    throw new PlacementError(414, `Query string is longer than ${cfg.maxQueryBytes} characters.`);
  }
  // PlacementHandler: a body needs a content type; content-length must be an integer.
  const clen = req.headers['content-length'];
  if (clen !== undefined && clen !== '') {
    if (!/^\s*[+-]?\d+\s*$/.test(clen)) throw new PlacementError(400, 'content-length header must be an integer');
    if (Number.parseInt(clen, 10) > 0 && !req.headers['content-type']) {
      throw new PlacementError(400, 'content-type header required when content-length > 0');
    }
  }
  const m = matchRoute(PLACEMENT_ROUTES, req.path);
  if (!m) {
    const e = new PlacementError(404);
    e.escaped = true;
    throw e;
  }
  const fn = handlers[m.route.path]?.[req.method];
  if (!m.route.methods.includes(req.method)) {
    throw new PlacementError(405, 'The method specified is not allowed for this resource.', undefined, {
      allow: m.route.methods.join(', '),
    });
  }
  if (!fn) throw new Error(`route ${req.method} ${m.route.path} is not served by this function`);
  // a table in a layout this release does not serve (yet): 503, nothing read or written
  const refused = await layoutRefusal(req.path);
  if (refused) throw new PlacementError(503, refused.message, undefined, { ...refused.headers, 'x-berth-layout': await layoutHeader() });
  // the caller's request budget (RATE_LIMIT), before the request is read (after the
  // layout check, which reads and writes nothing): every authenticated request to a
  // route counts, a 400 as much as a success. Unmatched paths
  // are API Gateway's $default route (no authorizer, the public throttle), served by the
  // root family, which has no bucket.
  if (identity.source !== 'none') {
    const limited = await checkLimit('placement', identity, cfg.rateLimit, cfg.rateLimitExemptRoles);
    if (limited) {
      if (limited.error === 'unavailable') log.error('request limit unavailable', { request_id: req.requestId, error: String(limited.cause) });
      const status = limited.error === 'limited' ? 429 : 503;
      throw new PlacementError(status, limited.text, ErrorCodes.DEFAULT, { 'retry-after': String(limited.retryAfterS) });
    }
  }
  let query: Query | undefined;
  const r: PlacementRequest = {
    http: req,
    version,
    identity,
    params: m.params,
    config: cfg,
    get query() {
      if (!query) {
        try {
          query = Query.parse(req.rawQuery);
        } catch (e) {
          if (e instanceof QueryDecodeError) throw new PlacementError(400, `Invalid query string parameters: ${e.message}`);
          throw e;
        }
      }
      return query;
    },
    authorize(rule, target) {
      const engine = policy();
      const creds = {
        roles: identity.roles,
        userId: identity.userId,
        projectId: identity.projectId,
        domainId: identity.domainId,
        systemScope: identity.systemScope,
      };
      const t = target ?? { project_id: identity.projectId, user_id: identity.userId };
      if (!engine.scopeOk(rule, creds) || !engine.check(rule, t, creds)) {
        const e = new PlacementError(403, `Policy does not allow ${rule} to be performed.`);
        e.escaped = true;
        throw e;
      }
    },
  };
  const res = await fn(r);
  // where the table's item layout is (the dashboard shows a migration from it): the record
  // the layout check above read, cached
  if (!TABLELESS.has(req.path)) res.headers['x-berth-layout'] = await layoutHeader();
  return res;
}

/** the documents that need no table carry no layout header */
const TABLELESS = new Set(['/', '', '/openapi.json']);
