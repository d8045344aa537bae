/**
 * A node:http server that speaks to the real Lambda handlers exactly as API Gateway
 * HTTP APIs do: it matches the request against the same route table cdk/ deploys,
 * builds a payload-format-2.0 event (routeKey, rawPath, rawQueryString, lowercased
 * headers, pathParameters, requestContext) and turns the handler's result back into
 * an HTTP response. Unmatched paths go to the $default route's function.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { LambdaHandler } from '../functions/http/family.js';
import { matchRoute, type RouteSpec } from '../functions/http/router.js';
import { fitsPayload, LAMBDA_RESPONSE_LIMIT, payloadBytes } from '../functions/http/encoding.js';

export interface ApiDefinition {
  name: string;
  routes: readonly RouteSpec[];
  /** family -> handler */
  handlers: Record<string, LambdaHandler>;
  defaultFamily: string;
  /** API Gateway's payload limit: bigger bodies get 413 before any function runs */
  maxBodyBytes?: number;
  /**
   * Lambda's response payload limit, enforced as AWS does (a 502 from the gateway when a
   * function answers more); 0 lifts it (`npm start -- --no-response-limit`). The handlers
   * keep their answers under the same limit themselves (functions/http/encoding.ts), so a
   * 502 here is a bug a test can see.
   */
  responseLimit?: number;
  /** the API's own error for requests Node's HTTP parser rejects (e.g. a non-integer content-length) */
  malformed?: (code: string) => { status: number; headers: Record<string, string>; body: string };
}

export function fakeContext(name: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function buildEvent(
  api: ApiDefinition,
  req: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: Buffer; remote?: string },
) {
  const url = req.url || '/';
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const rawQueryString = q < 0 ? '' : url.slice(q + 1);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;
  }
  const m = matchRoute(api.routes, rawPath);
  const family = m ? m.route.family : api.defaultFamily;
  const queryStringParameters: Record<string, string> = {};
  for (const part of rawQueryString.split('&')) {
    if (!part) continue;
    const [k, v = ''] = part.split('=');
    try {
      const key = decodeURIComponent(k!.replace(/\+/g, ' '));
      const val = decodeURIComponent(v.replace(/\+/g, ' '));
      queryStringParameters[key] = key in queryStringParameters ? `${queryStringParameters[key]},${val}` : val;
    } catch {
      // API Gateway passes undecodable parameters through raw; so does rawQueryString
    }
  }
  const now = new Date();
  const isText = req.body.length === 0 || isUtf8(req.body);
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: m ? `ANY ${m.route.path}` : '$default',
    rawPath,
    rawQueryString,
    headers,
    queryStringParameters: Object.keys(queryStringParameters).length ? queryStringParameters : undefined,
    pathParameters: m && Object.keys(m.params).length ? m.params : undefined,
    requestContext: {
      accountId: '000000000000',
      apiId: `local-${api.name}`,
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: { method: req.method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: req.remote ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: m ? `ANY ${m.route.path}` : '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: req.body.length ? (isText ? req.body.toString('utf8') : req.body.toString('base64')) : undefined,
    isBase64Encoded: req.body.length > 0 && !isText,
  };
  if (headers['x-forwarded-proto'] === undefined) event.headers['x-forwarded-proto'] = 'http';
  return { event, family };
}

function isUtf8(b: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) return 'too_large';
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * DNS rebinding defence for the local servers (they trust `x-auth-token: admin`): a
 * browser page on a name that resolves to this machine sends that name as Host. Only an
 * IP address, localhost, the name the server was bound to, and the names listed in
 * BERTH_ALLOWED_HOSTS (comma-separated) are served.
 */
export function hostAllowed(hostHeader: string | undefined, bindHost: string, extra = process.env.BERTH_ALLOWED_HOSTS ?? ''): boolean {
  if (hostHeader === undefined) return true; // HTTP/1.0 without Host: no browser sends that
  let name: string;
  try {
    name = new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return false;
  }
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(bare)) return true;
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const allowed = [bindHost, ...extra.split(',')].map((h) => h.trim().toLowerCase()).filter(Boolean);
  return allowed.includes(bare);
}

export function refuseHost(res: ServerResponse, host: string | undefined): void {
  res.writeHead(403, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message: `Host ${JSON.stringify(host)} is not served here (set BERTH_ALLOWED_HOSTS to allow a name)` }));
}

export function serve(api: ApiDefinition, port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (!hostAllowed(req.headers.host, host)) return refuseHost(res, req.headers.host);
    try {
      const body = await readBody(req, api.maxBodyBytes ?? 10 * 1024 * 1024);
      if (body === 'too_large') {
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Request Entity Too Large' }));
        return;
      }
      const { event, family } = buildEvent(api, {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body,
        remote: req.socket.remoteAddress,
      });
      const handler = api.handlers[family] ?? api.handlers[api.defaultFamily]!;
      const result = await handler(event, fakeContext(`${api.name}-${family}`));
      const limit = api.responseLimit ?? LAMBDA_RESPONSE_LIMIT;
      if (!fitsPayload(result, limit)) {
        process.stderr.write(`[berth] ${api.name}-${family} answered ${payloadBytes(result)} bytes, over Lambda's limit: API Gateway answers 502\n`);
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Internal Server Error' }));
        return;
      }
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
      if (result.cookies?.length) headers['set-cookie'] = result.cookies;
      const payload = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
      const status = result.statusCode ?? 200;
      if (status !== 204 && status !== 304) headers['content-length'] = String(payload.length);
      res.writeHead(status, headers);
      res.end(status === 204 || status === 304 || req.method === 'HEAD' ? undefined : payload);
    } catch (e) {
      // API Gateway's answer when the integration fails
      process.stderr.write(`[berth] integration error: ${String((e as Error)?.stack ?? e)}\n`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    }
  });
  server.on('clientError', (err: Error & { code?: string }, socket) => {
    if (!socket.writable) return socket.destroy();
    const r = api.malformed?.(err.code ?? '') ?? { status: 400, headers: { 'content-type': 'application/json' }, body: '{"message":"Bad Request"}' };
    const head = [
      `HTTP/1.1 ${r.status} Bad Request`,
      ...Object.entries({ ...r.headers, 'content-length': String(Buffer.byteLength(r.body)), connection: 'close' }).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${r.body}`);
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
