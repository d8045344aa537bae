/**
 * What a Placement handler is given and how it is registered: the request as the
 * pipeline (framework/app.ts) hands it over, its content type, and the request-id headers
 * every answer carries.
 */
import type { HttpRequest, HttpResponse, Query } from '../../http/types.js';
import type { Identity } from '../../core/policy/identity.js';
import type { RequestVersion } from '../../core/microversion.js';
import type { Config } from '../../config.js';

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

export function contentTypeOf(req: HttpRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** the request ids Placement answers with, under both of its names */
export function requestIdHeaders(res: HttpResponse, id: string): HttpResponse {
  res.headers['x-openstack-request-id'] = id;
  res.headers['openstack-request-id'] = id;
  return res;
}
