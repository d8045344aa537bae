/**
 * Placement's error responses. Placement raises WebOb HTTP exceptions and formats
 * them with its json_error_formatter; clients and the conformance suite read the
 * resulting text, so the same templates are reproduced here:
 *   {"errors": [{"status", "title", "detail", "code" (>= 1.23), "request_id"}]}
 * `detail` is WebOb's body template with tags stripped:
 *   "<explanation>\n\n <detail>  ".
 * Error codes are Placement's (placement/errors.py).
 */
import { acceptableOffers } from '../../http/accept.js';
import type { Problem } from '../../core/errors.js';
import { ErrorCodes, type PlacementError } from '../../core/placement/errors.js';
import type { HttpResponse } from '../../http/types.js';
import { STATUS_TITLES as TITLES } from '../../http/status-titles.js';
import { ERROR_CODES_SINCE, MAX_VERSION, MIN_VERSION, reaches } from './versions.js';

const EXPLANATIONS: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  401: 'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The body of your request was too large for this server.',
  414: 'The request URI was too long for this server.',
  429: 'The client has sent too many requests in a given amount of time.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
};

export interface RenderEnv {
  method: string;
  accept?: string;
  contentType?: string;
  requestId: string;
  /** the request's microversion, when it was parsed before the error */
  version?: { major: number; minor: number };
}

function statusLine(status: number): string {
  return `${status} ${TITLES[status] ?? 'Error'}`;
}

/** The template text before tags are stripped. */
function bodyTemplate(e: Problem, env: RenderEnv): string {
  switch (e.status) {
    case 405:
      return `The method ${env.method} is not allowed for this resource. <br /><br />\n${e.detail}`;
    case 406:
      return `The resource could not be generated that was acceptable to your browser\n(content of type ${env.accept ?? ''}. <br /><br />\n${e.detail}`;
    case 415:
      return `The request media type ${env.contentType || 'None'} is not supported by this server.\n<br /><br />\n${e.detail}`;
    default:
      return `${EXPLANATIONS[e.status] ?? ''}<br /><br />\n${e.detail}\n\n`;
  }
}

export function stripTags(v: string): string {
  return v
    .replace(/\n/g, ' ')
    .replace(/\r/g, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<[^>]*>/g, '');
}

function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Pick JSON / HTML / plain text as WebOb does for error bodies. */
export function errorContentType(accept: string | undefined): 'application/json' | 'text/html' | 'text/plain' {
  // Placement's request log middleware turns a missing or '*/*' Accept into JSON.
  const a = !accept || accept === '*/*' ? 'application/json' : accept;
  const offers = acceptableOffers(a, ['text/html', 'application/json']);
  return (offers[0] as 'text/html' | 'application/json' | undefined) ?? 'text/plain';
}

/** Any Problem as Placement's error body (one without a code has Placement's default code) */
export function renderError(e: Problem, env: RenderEnv): HttpResponse {
  const ct = errorContentType(env.accept);
  const headers: Record<string, string> = { ...e.headers };
  if (ct === 'application/json') {
    const detail = stripTags(bodyTemplate(e, env));
    const err: Record<string, unknown> = { status: e.status, title: TITLES[e.status] ?? 'Error', detail };
    const v = env.version;
    if (v && reaches(v, ERROR_CODES_SINCE)) err.code = e.code ?? ErrorCodes.DEFAULT;
    err.request_id = env.requestId;
    if (e.status === 406 && !v) {
      err.max_version = MAX_VERSION;
      err.min_version = MIN_VERSION;
    }
    headers['content-type'] = 'application/json';
    return { status: e.status, headers, body: JSON.stringify({ errors: [err] }) };
  }
  if (ct === 'text/html') {
    const body = bodyTemplate({ ...e, detail: htmlEscape(e.detail) } as PlacementError, env);
    headers['content-type'] = 'text/html; charset=UTF-8';
    return {
      status: e.status,
      headers,
      body: `<html>\n <head>\n  <title>${statusLine(e.status)}</title>\n </head>\n <body>\n  <h1>${statusLine(e.status)}</h1>\n  ${body}\n </body>\n</html>`,
    };
  }
  headers['content-type'] = 'text/plain; charset=UTF-8';
  return { status: e.status, headers, body: `${statusLine(e.status)}\n\n${stripTags(bodyTemplate(e, env))}` };
}

/** WebOb's default JSON for the 401 that noauth2 returns before Placement's formatter is in play. */
export function unauthorizedResponse(): HttpResponse {
  return {
    status: 401,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      message: `${EXPLANATIONS[401]}<br /><br />\n\n\n`,
      code: '401 Unauthorized',
      title: 'Unauthorized',
    }),
  };
}
