/**
 * Answers too large to send: the error that names the answer and how to narrow it, given
 * when a Lambda response would exceed its limit (functions/http/encoding.ts) and, before
 * rendering, when even the smallest rendering could not fit (refuseHopeless).
 */
import { mb } from '../../http/encoding.js';
import { matchRoute } from '../../http/router.js';
import type { HttpRequest, HttpResponse } from '../../http/types.js';
import { RequestVersion, versionString } from '../../core/microversion.js';
import { PlacementError } from '../../core/placement/errors.js';
import { PLACEMENT_ROUTES } from '../routes.js';
import { renderError } from './errors.js';
import { contentTypeOf, requestIdHeaders, type PlacementRequest } from './request.js';
import { PLACEMENT_VERSIONS } from './versions.js';

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
export function answerTooLarge(req: HttpRequest, size: { bytes: number; limit: number; compressed: boolean }): HttpResponse {
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
