/**
 * The Placement request pipeline, in Placement's own middleware order:
 *   request id -> CORS -> auth (noauth2 / authorizer) -> microversion -> routing
 *   (404 / 405 with Allow) -> the resource family's handler
 * and the response decoration on the way out (OpenStack-API-Version, Vary,
 * request ids, CORS). Each resource family Lambda is `placementApp(its routes)`.
 */
import { acceptableOffers } from '../../http/accept.js';
import { noauthIdentity, verifiedIdentity } from '../../http/identity.js';
import { matchRoute } from '../../http/router.js';
import type { App } from '../../http/apigw.js';
import { mb } from '../../http/encoding.js';
import { Query, QueryDecodeError, type HttpRequest, type HttpResponse } from '../../http/types.js';
import type { Identity } from '../../core/policy/identity.js';
import { MicroversionFormatError, MicroversionRangeError, RequestVersion, versionString } from '../../core/microversion.js';
import { CACHE_HEADERS_SINCE, PLACEMENT_VERSIONS, reaches } from './versions.js';
import { validate, SchemaValidationError } from '../../core/compat/jsonschema.js';
import type { JsonSchema } from '../../core/compat/jsonschema-keywords.js';
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
import { jsonDocumentProblem } from '../../core/compat/unicode.js';
import { floatLiteralPaths, pyJson } from '../../core/compat/pyfloat.js';

/** a write that lost its race too many times in a row (store/ddb/retry.ts) */
const CONCURRENT_UPDATE_RETRY_TEXT = 'Another request changed the same data at the same time; please retry.';

export interface PlacementRequest {
  http: HttpRequest;
  version: RequestVersion;
  identity: Identity;
  params: Record<string, string>;
  config: Config;
  /** webob's req.GET; a query that is not valid UTF-8 fails with 400 when read */
  readonly query: Query;
  /** Check a policy rule; raises 403 the way Placement does. */
  authorize(rule: string, target?: Record<string, unknown>): void;
}

export type PlacementHandler = (r: PlacementRequest) => Promise<HttpResponse>;
export type FamilyRoutes = Record<string, Partial<Record<string, PlacementHandler>>>;

let policyEngine: { settings: Config['placementPolicy']; engine: PolicyEngine } | undefined;
function policy(): PolicyEngine {
  const settings = config().placementPolicy;
  if (policyEngine?.settings !== settings) policyEngine = { settings, engine: placementPolicy(settings) };
  return policyEngine.engine;
}

function requestIdHeaders(res: HttpResponse, id: string): HttpResponse {
  res.headers['x-openstack-request-id'] = id;
  res.headers['openstack-request-id'] = id;
  return res;
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

/** How to narrow each kind of answer that can grow with the cloud. */
const NARROW: Record<string, string> = {
  '/resource_providers':
    'filter it (name, uuid, member_of, in_tree, resources, required) and ask for the providers in parts, for example one aggregate or one tree at a time',
  '/allocation_candidates': 'ask for fewer candidates with limit (Nova asks for 1000) or narrow the groups',
  '/resource_providers/{uuid}/allocations': 'read the consumers one at a time with GET /allocations/{consumer_uuid}',
  '/traits': 'filter the list with name=startswith:... or name=in:...',
};

/** The text of Placement's error for an answer too large to send: what it is and how to narrow it. */
export function answerTooLargeDetail(req: HttpRequest, size: { bytes: number; limit: number; compressed: boolean }, atLeast = false): string {
  const route = matchRoute(PLACEMENT_ROUTES, req.path)?.route.path ?? req.path;
  const hint = NARROW[route] ?? 'narrow the request';
  const how = size.compressed ? 'even compressed' : 'uncompressed (send Accept-Encoding: gzip to receive it compressed)';
  return `The answer to ${req.method} ${req.path} is ${atLeast ? 'at least ' : ''}${mb(size.bytes)} and does not fit ${how} in the ${mb(size.limit)} a response may carry here: ${hint}.`;
}

/**
 * An answer over a large cloud (all candidates, all providers) can run to hundreds of MB:
 * when even its smallest rendering (`count` items of at least `minBytesEach`) could not be
 * sent compressed (JSON compresses < 16x), refuse before rendering it, with the error the
 * response limit would give.
 */
export function refuseHopeless(r: PlacementRequest, count: number, minBytesEach: number): void {
  const limit = r.config.maxResponseBytes;
  const bytes = count * minBytesEach;
  if (limit > 0 && bytes > limit * 16) {
    throw new PlacementError(400, answerTooLargeDetail(r.http, { bytes, limit, compressed: true }, true));
  }
}

/** Placement's error for an answer larger than a Lambda may return (functions/http/encoding.ts). */
function answerTooLarge(req: HttpRequest, size: { bytes: number; limit: number; compressed: boolean }): HttpResponse {
  const detail = answerTooLargeDetail(req, size);
  let version: RequestVersion | undefined;
  try {
    version = RequestVersion.of(PLACEMENT_VERSIONS.extract(req.headers));
  } catch {
    version = undefined;
  }
  const res = renderError(new PlacementError(400, detail), {
    method: req.method,
    accept: req.headers.accept,
    contentType: contentTypeOf(req),
    requestId: req.requestId,
    version,
  });
  if (version) {
    res.headers['openstack-api-version'] = `placement ${versionString(version)}`;
    res.headers.vary = 'openstack-api-version';
  }
  return requestIdHeaders(res, req.requestId);
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

export function contentTypeOf(req: HttpRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
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

// ---- guards handlers call, in the order Placement's decorators apply them ----

/** microversion.version_handler: outside [min, max] the route answers `status` (404 by default). */
export function requireVersion(r: PlacementRequest, min: string, max?: string, status = 404): void {
  const [a, b] = min.split('.').map(Number) as [number, number];
  let ok = r.version.atLeast(a, b);
  if (max) {
    const [c, d] = max.split('.').map(Number) as [number, number];
    ok = ok && !r.version.atLeast(c, d + 1);
  }
  if (!ok) throw new PlacementError(status, status === 405 ? 'The method specified is not allowed for this resource.' : '');
}

/**
 * The value for the newest microversion the request reaches, from a table ordered
 * newest first: [[1, 38, schemaA], [1, 28, schemaB], [1, 0, schemaC]].
 */
export function forVersion<T>(r: PlacementRequest, table: ReadonlyArray<readonly [number, number, T]>): T {
  const hit = table.find(([major, minor]) => r.version.atLeast(major, minor));
  if (!hit) throw new Error(`no entry for microversion ${r.version}`);
  return hit[2];
}

/** util.check_accept('application/json') */
export function checkAccept(r: PlacementRequest): void {
  const accept = r.http.headers.accept;
  if (accept) {
    if (!acceptableOffers(accept, ['application/json']).length) throw new PlacementError(406, 'Only application/json is provided');
  }
}

/** util.require_content('application/json') */
export function requireJsonContent(r: PlacementRequest): void {
  const ct = contentTypeOf(r.http);
  if (ct !== 'application/json') {
    throw new PlacementError(415, `The media type ${ct || 'None'} is not supported, use application/json`);
  }
}

/** util.extract_json: parse the body, validate against a JSON schema (generated from zod). */
export function extractJson<T>(r: PlacementRequest, schema: JsonSchema): T {
  let data: unknown;
  if (r.http.bodyError) throw new PlacementError(400, `Malformed JSON: ${r.http.bodyError}`);
  try {
    data = JSON.parse(r.http.body ?? '');
  } catch (e) {
    throw new PlacementError(400, `Malformed JSON: ${(e as Error).message}`);
  }
  const problem = jsonDocumentProblem(data);
  if (problem !== undefined) throw new PlacementError(400, `Malformed JSON: ${problem}`);
  try {
    validate(data, schema);
  } catch (e) {
    if (e instanceof SchemaValidationError) throw new PlacementError(400, `JSON does not validate: ${e.message}`);
    throw e;
  }
  return data as T;
}

/** util.validate_query_params over dict(req.GET) */
export function validateQuery(r: PlacementRequest, schema: JsonSchema): Record<string, string> {
  const d = r.query.toDict();
  try {
    validate(d, schema);
  } catch (e) {
    if (e instanceof SchemaValidationError) throw new PlacementError(400, `Invalid query string parameters: ${e.message}`);
    throw e;
  }
  return d;
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** jsonResponse for bodies with Python floats in them (PyFloat values, core/compat/pyfloat.ts) */
export function pyJsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: pyJson(body) };
}

/**
 * The request body's numbers Python parses as floats (`2.0`, `1e3`), by path (keys
 * joined by '/'): an echo of the client's value keeps the type upstream parsed.
 */
export function floatsInBody(r: PlacementRequest): Set<string> {
  return floatLiteralPaths(r.http.body ?? '');
}

/** HTTP-date as Placement's last-modified uses it. */
export function httpDate(d: Date): string {
  return d.toUTCString();
}

/**
 * The one cache-header rule: from 1.15 GET responses carry cache-control: no-cache and
 * last-modified — the given time, now when there is none (upstream punts to now for
 * things without a timestamp), or no last-modified at all when given null (nothing to
 * date, as an empty inventory list).
 */
export function cacheHeaders(r: PlacementRequest, res: HttpResponse, lastModified: Date | string | undefined | null): HttpResponse {
  if (reaches(r.version, CACHE_HEADERS_SINCE)) {
    res.headers['cache-control'] = 'no-cache';
    if (lastModified !== null) {
      const d = lastModified === undefined ? new Date() : new Date(lastModified);
      res.headers['last-modified'] = httpDate(Number.isNaN(d.getTime()) ? new Date() : d);
    }
  }
  return res;
}
