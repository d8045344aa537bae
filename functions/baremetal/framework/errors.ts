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
import { faultcodeOf, IronicError } from '../../core/baremetal/errors.js';
import { Problem } from '../../core/errors.js';
import { STATUS_TITLES as TITLES } from '../../http/status-titles.js';

/** A webob HTTP exception raised while routing: a Problem whose detail is the description. */
export class WebobError extends Problem {
  constructor(status: number, description = '', headers: Record<string, string> = {}) {
    super(status, description, undefined, headers);
  }

  get description(): string {
    return this.detail;
  }
}

/** Any Problem raised by an API method, as Ironic's fault body (an IronicError keeps its own fault code). */
export function faultResponse(e: Problem, headers: Record<string, string> = {}): HttpResponse {
  const faultcode = e instanceof IronicError ? e.faultcode : faultcodeOf(e.status);
  const inner = pyDumps({ faultcode, faultstring: e.detail, debuginfo: null });
  return { status: e.status, headers: { ...headers, ...e.headers, 'content-type': 'application/json' }, body: pyDumps({ error_message: inner }) };
}

export function webobResponse(e: WebobError): HttpResponse {
  const inner = pyDumps({ code: e.status, title: TITLES[e.status] ?? 'Error', description: e.description });
  return { status: e.status, headers: { ...e.headers, 'content-type': 'application/json' }, body: pyDumps({ error_message: inner }) };
}
