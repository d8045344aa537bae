/**
 * Ironic's error bodies. Ironic's ParsableErrorMiddleware wraps every error response
 * body in {"error_message": "<text>"}, where <text> is itself JSON:
 *   - errors raised inside an API method (WSME-style, ironic/api/method.py):
 *       {"faultcode": "Client"|"Server", "faultstring": "...", "debuginfo": null}
 *     sent with the version headers and Openstack-Request-Id;
 *   - errors raised while routing (pecan aborts, webob exceptions: unknown path,
 *     method not allowed, microversion refused):
 *       {"code": 404, "title": "Not Found", "description": "..."}
 *     sent without them.
 * Texts are Ironic's (ironic/common/exception.py).
 */
import type { HttpResponse } from '../../http/types.js';
import { pyDumps } from './pyjson.js';
import type { IronicError } from '../../core/baremetal/errors.js';
import { STATUS_TITLES as TITLES } from '../../http/status-titles.js';

/** A webob HTTP exception raised while routing. */
export class WebobError extends Error {
  constructor(
    readonly status: number,
    readonly description = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(description || TITLES[status] || String(status));
  }
}

export function faultResponse(e: IronicError, headers: Record<string, string> = {}): HttpResponse {
  const inner = pyDumps({ faultcode: e.faultcode, faultstring: e.faultstring, debuginfo: null });
  return { status: e.status, headers: { ...headers, ...e.headers, 'content-type': 'application/json' }, body: pyDumps({ error_message: inner }) };
}

export function webobResponse(e: WebobError): HttpResponse {
  const inner = pyDumps({ code: e.status, title: TITLES[e.status] ?? 'Error', description: e.description });
  return { status: e.status, headers: { ...e.headers, 'content-type': 'application/json' }, body: pyDumps({ error_message: inner }) };
}
