/**
 * Calling the real Lambda handlers of both APIs the way API Gateway does behind an
 * authorizer: a payload-v2 event whose requestContext.authorizer holds what the Keystone
 * Lambda authorizer returns (functions/authorizer/keystone.ts) or what a JWT authorizer
 * exposes (claims), so the persona tests drive exactly the deployed identity path.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { authorizerContext } from '../../../functions/authorizer/keystone.js';
import { renderedClaim } from '../../../functions/http/identity.js';

/** A Keystone token as the authorizer passes it on (all strings; '' = absent). */
export interface KeystoneWho {
  userId: string;
  projectId?: string;
  domainId?: string;
  roles: string[];
  systemScope?: string;
  projectName?: string;
  isAdminProject?: string;
}
export type Who = { keystone: KeystoneWho } | { jwt: Record<string, unknown> } | { none: true };

export const ks = (w: KeystoneWho): Who => ({ keystone: w });
/** a JWT with these claims (their JSON types, as the token holds them) */
export const jwt = (claims: Record<string, unknown>): Who => ({ jwt: claims });

/** An (unsigned) JWT carrying `claims`: what the client sends; API Gateway verified the signature. */
export function bearerToken(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `Bearer ${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

export function authorizerOf(who: Who): Record<string, unknown> | undefined {
  if ('none' in who) return undefined;
  // an HTTP API JWT authorizer passes every claim as a string, a list as "[a b c]"
  if ('jwt' in who) return { jwt: { claims: Object.fromEntries(Object.entries(who.jwt).map(([k, v]) => [k, renderedClaim(v)])), scopes: null } };
  const w = who.keystone;
  // exactly what the Keystone authorizer returns for such a token
  return {
    lambda: authorizerContext({
      userId: w.userId,
      projectId: w.projectId,
      domainId: w.domainId,
      roles: w.roles,
      systemScope: w.systemScope,
      projectName: w.projectName,
      projectDomainId: w.projectId ? 'default' : undefined,
      isAdminProject: w.isAdminProject === undefined || w.isAdminProject === '' ? undefined : w.isAdminProject === 'true',
      source: 'keystone',
    }),
  };
}

export interface CallOptions {
  body?: unknown;
  raw?: string;
  query?: string;
  headers?: Record<string, string>;
  domain?: string;
}

export function lambdaEvent(who: Who, method: string, path: string, opts: CallOptions = {}): APIGatewayProxyEventV2 {
  const domain = opts.domain ?? 'api.example.com';
  const authorizer = authorizerOf(who);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: opts.query ?? '',
    headers: {
      host: domain,
      ...('jwt' in who ? { authorization: bearerToken(who.jwt) } : {}),
      ...(opts.body !== undefined || opts.raw !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: domain,
      domainPrefix: 'api',
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'persona-test' },
      ...(authorizer ? { authorizer } : {}),
    },
    body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

export const lambdaContext = {
  functionName: 'persona',
  awsRequestId: 'r',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:persona',
  memoryLimitInMB: '128',
  functionVersion: '1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

export type LambdaHandler = (e: APIGatewayProxyEventV2, c: Context) => Promise<any>;

export interface Res {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

export async function invoke(handler: LambdaHandler, who: Who, method: string, path: string, opts: CallOptions = {}): Promise<Res> {
  const res = await handler(lambdaEvent(who, method, path, opts), lambdaContext);
  const text = String(res.body ?? '');
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode as number, headers: res.headers ?? {}, text, json };
}

/** One API as API Gateway deploys it: each path reaches its family's Lambda handler. */
export async function deployedApi(kind: 'placement' | 'baremetal') {
  const { matchRoute } = await import('../../../functions/http/router.js');
  const [routes, modules, fallback] =
    kind === 'placement'
      ? [
          (await import('../../../functions/placement/routes.js')).PLACEMENT_ROUTES,
          (await import('../../../functions/placement/index.js')).PLACEMENT_FAMILY_MODULES,
          'root',
        ]
      : [
          (await import('../../../functions/baremetal/routes.js')).BAREMETAL_ROUTES,
          (await import('../../../functions/baremetal/index.js')).BAREMETAL_FAMILY_MODULES,
          'root',
        ];
  return (who: Who, method: string, path: string, opts: CallOptions = {}) => {
    const family = matchRoute(routes, path)?.route.family ?? fallback;
    const headers =
      kind === 'placement'
        ? { accept: 'application/json', 'openstack-api-version': 'placement latest', ...opts.headers }
        : { 'x-openstack-ironic-api-version': '1.80', ...opts.headers };
    return invoke(modules[family]!.handler as LambdaHandler, who, method, path, { ...opts, headers });
  };
}
