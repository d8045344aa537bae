/**
 * API Gateway HTTP API (payload format 2.0) <-> HttpRequest/HttpResponse, and the
 * middy wrapper every Lambda entry point uses. The local runtime builds the very same
 * v2 events, so handlers cannot tell the two apart.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse } from './types.js';
import { encodeResult, mb, type TooLarge } from './encoding.js';
import { config } from '../config.js';
import { internalErrorText } from '../core/errors.js';
import { log } from '../observability/log.js';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { logger, metrics, tracer } from '../observability/powertools.js';

/**
 * An API's request pipeline, with the renderers its framework registers for the
 * failures met outside it: `tooLarge` for an answer too big to send, `crash` for an
 * error that escaped the pipeline (a 500 in the API's own format, only the request id).
 */
export type App = ((req: HttpRequest) => Promise<HttpResponse>) & { tooLarge?: TooLarge; crash?: Crash };
export type Crash = (requestId: string) => HttpResponse;

/** Without an API-specific renderer: a plain JSON 500. */
const genericCrash: Crash = (requestId) => ({
  status: 500,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: internalErrorText('Request', requestId) }),
});

/** Without an API-specific renderer: a plain JSON error. */
const genericTooLarge: TooLarge = (_req, size) => ({
  status: 400,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: `The answer (${mb(size.bytes)}) is larger than a response may be (${mb(size.limit)}); narrow the request.` }),
});

export function toHttpRequest(event: APIGatewayProxyEventV2): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
  if (event.cookies?.length) headers.cookie = event.cookies.join('; ');
  let body: string | undefined;
  let bodyError: string | undefined;
  if (event.body !== undefined && event.body !== null) {
    if (event.isBase64Encoded) {
      const bytes = Buffer.from(event.body, 'base64');
      try {
        body = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        body = bytes.toString('utf8');
        bodyError = 'the request body is not valid UTF-8';
      }
    } else body = event.body;
  }
  // links and Location headers name the API's own domain (API Gateway's domainName; the
  // local adapter puts the checked Host there), never a client's X-Forwarded-Host
  const host = event.requestContext?.domainName || headers.host || 'localhost';
  const fwdProto = headers['x-forwarded-proto'];
  const proto = fwdProto === 'http' || fwdProto === 'https' ? fwdProto : 'https';
  const stage = event.requestContext?.stage;
  let path = event.rawPath || '/';
  if (stage && stage !== '$default' && path.startsWith(`/${stage}`)) path = path.slice(stage.length + 1) || '/';
  const authorizer = (event.requestContext as { authorizer?: Record<string, unknown> } | undefined)?.authorizer;
  return {
    method: (event.requestContext?.http?.method ?? 'GET').toUpperCase(),
    path,
    rawQuery: event.rawQueryString ?? '',
    headers,
    body,
    bodyError,
    baseUrl: `${proto}://${host}`,
    requestId: newRequestId(),
    authorizer,
    sourceIp: event.requestContext?.http?.sourceIp,
  };
}

export function newRequestId(): string {
  return `req-${randomUUID()}`;
}

/** each event being handled: its request and when it began (the access line of a crash needs both) */
const inFlight = new WeakMap<object, { req: HttpRequest; started: number }>();

/**
 * The access line: one per request, `request` with function, method, path, status and
 * time taken. A server-side failure (5xx) is an ERROR line, written at every level; any
 * other answer is INFO, so at AWS's default level (WARN) it is written only for the
 * sampled share of invocations (LOG_SAMPLE_RATE, which switch to DEBUG); API Gateway's
 * access log has every request either way.
 */
function accessLine(name: string, req: Pick<HttpRequest, 'requestId' | 'method' | 'path'>, status: number, started: number, error?: string): void {
  const fields = { fn: name, request_id: req.requestId, method: req.method, path: req.path, status, ms: Date.now() - started, error };
  if (status >= 500) log.error('request', fields);
  else log.info('request', fields);
}

/** A 500 that says nothing but its request id, in the API's own error format (its registered `crash`). */
function internalErrorResult(app: App, requestId: string): APIGatewayProxyStructuredResultV2 {
  const res = (app.crash ?? genericCrash)(requestId);
  return { statusCode: res.status, headers: { ...res.headers, 'openstack-request-id': requestId }, body: res.body };
}

/** The Lambda result for an answer: compressed when the client accepts it, within Lambda's response limit. */
export function toResult(req: HttpRequest, res: HttpResponse, tooLarge: TooLarge = genericTooLarge): APIGatewayProxyStructuredResultV2 {
  return encodeResult(req, res, config().maxResponseBytes, tooLarge);
}

/** Wrap an App as a Lambda handler (API Gateway HTTP API, payload v2). */
export function httpLambda(app: App, name: string) {
  return (
    middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context>({ timeoutEarlyInMillis: 0 })
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      // never log the event (it carries X-Auth-Token and the body), whatever POWERTOOLS_LOGGER_LOG_EVENT says
      .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
      .use({
        // publish EMF metrics only when the request recorded some (most requests do not)
        after: async () => {
          if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
        },
        onError: async () => {
          if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
        },
      })
      .use({
        // the last line of defence: anything that escaped the API's own error
        // handling is answered as a 500, its access line carrying the error.
        onError: async (request) => {
          const event = request.event as APIGatewayProxyEventV2 | undefined;
          const seen = event ? inFlight.get(event) : undefined;
          const req = seen?.req ?? {
            requestId: newRequestId(),
            method: event?.requestContext?.http?.method ?? '?',
            path: event?.rawPath ?? '?',
          };
          accessLine(name, req, 500, seen?.started ?? Date.now(), String(request.error?.stack ?? request.error));
          request.response = internalErrorResult(app, req.requestId);
        },
      })
      .handler(async (event) => {
        const started = Date.now();
        const req = toHttpRequest(event);
        inFlight.set(event, { req, started });
        logger.appendKeys({ request_id: req.requestId });
        tracer.putAnnotation('request_id', req.requestId);
        const res = await app(req);
        accessLine(name, req, res.status, started);
        return toResult(req, res, app.tooLarge);
      })
  );
}
