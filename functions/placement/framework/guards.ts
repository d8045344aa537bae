/**
 * What Placement's handlers call, in the order Placement's decorators apply them: the
 * microversion, Accept and content-type guards, the body and query validators, and the
 * JSON answers with their cache headers.
 */
import { acceptableOffers } from '../../http/accept.js';
import type { HttpResponse } from '../../http/types.js';
import { validate, SchemaValidationError } from '../../core/compat/jsonschema.js';
import type { JsonSchema } from '../../core/compat/jsonschema-keywords.js';
import { jsonDocumentProblem } from '../../core/compat/unicode.js';
import { floatLiteralPaths, pyJson } from '../../core/compat/pyfloat.js';
import { PlacementError } from '../../core/placement/errors.js';
import { contentTypeOf, type PlacementRequest } from './request.js';
import { CACHE_HEADERS_SINCE, reaches } from './versions.js';

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
