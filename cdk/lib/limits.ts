/**
 * Limits per client (docs/operating.md, "Operating in AWS"; docs/security.md, "Limits per client"):
 *
 *   -c throttle=RATE:BURST        each API stage's default route throttle (API Gateway; 1000:2000)
 *   -c routeThrottle='{"placement:/allocation_candidates":"100:200", …}'
 *                                 one route's throttle (API Gateway route settings); the
 *                                 routes are those of functions/*\/routes.ts, `$default` too
 *   -c publicThrottle=RATE:BURST  the unauthenticated routes (`/`, bare metal's `/v1`,
 *                                 `$default`): a flood of them is answered 429 by API Gateway
 *                                 without invoking a function (100:200)
 *   -c projectRateLimit=RATE[:BURST]
 *                                 a token bucket per project in the table, answered in each
 *                                 API's own 429 format with Retry-After (functions/store/
 *                                 ratelimit.ts); off unless set
 *   -c rateLimitExemptRoles=service,…   callers with any of these roles skip the bucket
 *
 * API Gateway's throttles are per route over all clients (HTTP APIs have no usage plans or
 * WAF); the project bucket is the per-client limit. A WAF needs CloudFront in front
 * (cdk/lib/api-front.ts, `-c wafWebAclArn`).
 */
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';

export interface Throttle {
  /** steady requests per second */
  rate: number;
  /** requests admitted at once above the steady rate */
  burst: number;
}

export interface LimitOptions {
  stage: Throttle;
  /** per route: `<api>:<path>` (an API's route table path, or `$default`) */
  routes: Record<string, Throttle>;
  /** the routes that need no token */
  publicRoutes: Throttle;
  /** the per-project token bucket (off: undefined) */
  project?: Throttle;
  /** roles whose callers the project bucket lets through */
  exemptRoles: string[];
}

/** the paths each API serves without a token (its version documents); `$default` is public too */
export const PUBLIC_PATHS: Record<'placement' | 'baremetal', readonly string[]> = { placement: ['/'], baremetal: ['/', '/v1'] };

export const DEFAULT_STAGE_THROTTLE: Throttle = { rate: 1000, burst: 2000 };
export const DEFAULT_PUBLIC_THROTTLE: Throttle = { rate: 100, burst: 200 };
/**
 * a project's bucket is one DynamoDB item, written once per request: a partition takes
 * 1,000 write units a second, so a project limit above half of it would make its own hot key
 */
export const MAX_PROJECT_RATE = 500;
/** API Gateway's default account quota per region (adjustable): a stage beyond it is capped by it */
const ACCOUNT_RATE = 10_000;
const ACCOUNT_BURST = 5_000;

export class LimitsConfigError extends Error {}

/** `RATE:BURST` (or `RATE` alone where a burst may default to it) */
export function parseThrottle(name: string, v: string, burstOptional = false): Throttle {
  const m = /^(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(v.trim());
  if (!m || (m[2] === undefined && !burstOptional)) {
    throw new LimitsConfigError(`${name} ${JSON.stringify(v)}: expected RATE:BURST (requests per second, burst), e.g. 100:200`);
  }
  const rate = Number(m[1]);
  const burst = m[2] === undefined ? Math.max(1, Math.ceil(rate)) : Number(m[2]);
  return checkThrottle(name, { rate, burst });
}

function checkThrottle(name: string, t: Throttle): Throttle {
  if (!(Number.isFinite(t.rate) && t.rate > 0)) throw new LimitsConfigError(`${name}: the rate must be a number of requests per second above 0`);
  if (!(Number.isInteger(t.burst) && t.burst >= 1)) throw new LimitsConfigError(`${name}: the burst must be a whole number of requests, at least 1`);
  if (t.rate > ACCOUNT_RATE || t.burst > ACCOUNT_BURST) {
    throw new LimitsConfigError(
      `${name}: ${t.rate}:${t.burst} is above API Gateway's account quota (${ACCOUNT_RATE}:${ACCOUNT_BURST} per region); raise the quota first, then this check with it`,
    );
  }
  return t;
}

/** `-c routeThrottle`: a JSON object `{"<api>:<path>": "RATE:BURST"}` */
export function parseRouteThrottles(v: string | undefined): Record<string, Throttle> {
  if (v === undefined || v.trim() === '') return {};
  let o: unknown;
  try {
    o = JSON.parse(v);
  } catch {
    throw new LimitsConfigError(`routeThrottle is not JSON: expected {"placement:/allocation_candidates":"100:200"}`);
  }
  if (!o || typeof o !== 'object' || Array.isArray(o))
    throw new LimitsConfigError('routeThrottle must be a JSON object of "<api>:<path>": "RATE:BURST"');
  return Object.fromEntries(
    Object.entries(o as Record<string, unknown>).map(([k, t]) => {
      if (typeof t !== 'string') throw new LimitsConfigError(`routeThrottle ${k}: expected "RATE:BURST"`);
      return [k, parseThrottle(`routeThrottle ${k}`, t)];
    }),
  );
}

/**
 * The limits, checked against the APIs' route tables (`api` → its paths): every route a
 * setting names must exist, so a typo cannot leave a route unthrottled.
 */
export function validateLimits(o: Partial<LimitOptions> | undefined, apis: Record<string, readonly string[]>): LimitOptions {
  const stage = checkThrottle('throttle', o?.stage ?? DEFAULT_STAGE_THROTTLE);
  const publicRoutes = checkThrottle('publicThrottle', o?.publicRoutes ?? DEFAULT_PUBLIC_THROTTLE);
  const routes: Record<string, Throttle> = {};
  for (const [key, t] of Object.entries(o?.routes ?? {})) {
    const i = key.indexOf(':');
    const api = i < 0 ? '' : key.slice(0, i);
    const path = i < 0 ? key : key.slice(i + 1);
    const paths = apis[api];
    if (!paths)
      throw new LimitsConfigError(
        `routeThrottle ${JSON.stringify(key)}: name the API first, one of ${Object.keys(apis)
          .map((a) => `${a}:<path>`)
          .join(', ')}`,
      );
    if (path !== '$default' && !paths.includes(path)) {
      throw new LimitsConfigError(
        `routeThrottle ${JSON.stringify(key)}: ${api} has no route ${path} (its routes: functions/${api}/routes.ts, or $default)`,
      );
    }
    routes[`${api}:${path}`] = checkThrottle(`routeThrottle ${key}`, t);
  }
  const project = o?.project;
  if (project) {
    checkThrottle('projectRateLimit', project);
    if (project.rate > MAX_PROJECT_RATE) {
      throw new LimitsConfigError(
        `projectRateLimit ${project.rate}/s: a project's bucket is one DynamoDB item written per request, whose partition takes 1,000 writes a second; keep it at most ${MAX_PROJECT_RATE}/s (use -c throttle / routeThrottle for more)`,
      );
    }
  }
  const exemptRoles = (o?.exemptRoles ?? []).map((r) => r.trim()).filter(Boolean);
  if (exemptRoles.length && !project) throw new LimitsConfigError('rateLimitExemptRoles applies to -c projectRateLimit only');
  return { stage, routes, publicRoutes, project, exemptRoles };
}

/** The route key API Gateway's stage route settings name a route by (every Berth route is ANY). */
export function routeKey(path: string): string {
  return path === '$default' ? '$default' : `ANY ${path}`;
}

/**
 * The stage's throttles: the default route settings, the public routes' and the
 * overrides (an override of a public route wins).
 */
export function stageThrottles(
  api: string,
  publicPaths: readonly string[],
  limits: LimitOptions,
): { defaultRouteSettings: apigw.CfnStage.RouteSettingsProperty; routeSettings: Record<string, unknown> } {
  const settings = (t: Throttle) => ({ throttlingRateLimit: t.rate, throttlingBurstLimit: t.burst });
  // RouteSettings is a free-form map in the CloudFormation schema: CDK passes it as it is,
  // so its entries are written as CloudFormation spells them
  const cfn = (t: Throttle) => ({ ThrottlingRateLimit: t.rate, ThrottlingBurstLimit: t.burst });
  const routeSettings: Record<string, unknown> = {};
  for (const p of [...publicPaths, '$default']) routeSettings[routeKey(p)] = cfn(limits.publicRoutes);
  for (const [key, t] of Object.entries(limits.routes)) {
    if (key.startsWith(`${api}:`)) routeSettings[routeKey(key.slice(api.length + 1))] = cfn(t);
  }
  return { defaultRouteSettings: settings(limits.stage), routeSettings };
}

/** The API functions' environment for the project bucket (functions/config.ts reads it). */
export function rateLimitEnvironment(limits: LimitOptions): Record<string, string> {
  if (!limits.project) return {};
  return {
    RATE_LIMIT: `${limits.project.rate}:${limits.project.burst}`,
    ...(limits.exemptRoles.length ? { RATE_LIMIT_EXEMPT_ROLES: limits.exemptRoles.join(',') } : {}),
  };
}
