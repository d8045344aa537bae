/**
 * oslo.middleware's CORS filter with Placement's defaults, enabled when an allowed
 * origin is configured (PLACEMENT_CORS_ALLOWED_ORIGIN). Without it OPTIONS is just
 * another method (405) and no CORS header is ever sent.
 */
import type { Config } from '../../config.js';
import type { HttpRequest, HttpResponse } from '../../http/types.js';

export interface CorsSettings {
  origins: string[];
  allowCredentials: boolean;
  exposeHeaders: string[];
  maxAge: number;
  allowMethods: string[];
  allowHeaders: string[];
}

const SIMPLE_HEADERS = ['Accept', 'Accept-Language', 'Content-Type', 'Cache-Control', 'Content-Language', 'Expires', 'Last-Modified', 'Pragma'];

export function corsSettings(cfg: Config): CorsSettings | undefined {
  if (!cfg.corsAllowedOrigins.length) return undefined;
  return {
    origins: cfg.corsAllowedOrigins,
    allowCredentials: true,
    exposeHeaders: ['X-Auth-Token', 'X-Openstack-Request-Id', 'X-Subject-Token', 'X-Service-Token', 'OpenStack-API-Version'],
    maxAge: 3600,
    allowMethods: ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'],
    allowHeaders: cfg.corsAllowHeaders ?? [
      'X-Auth-Token',
      'X-Openstack-Request-Id',
      'X-Identity-Status',
      'X-Roles',
      'X-Service-Catalog',
      'X-User-Id',
      'X-Tenant-Id',
      'OpenStack-API-Version',
    ],
  };
}

function originOk(s: CorsSettings, origin: string): string | undefined {
  if (s.origins.includes(origin)) return origin;
  if (s.origins.includes('*')) return '*';
  return undefined;
}

function splitHeader(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

export function applyCors(req: HttpRequest, res: HttpResponse, s: CorsSettings): HttpResponse {
  if (Object.keys(res.headers).some((h) => h.toLowerCase() === 'access-control-allow-origin')) return res;
  const origin = req.headers.origin;
  if (req.method === 'OPTIONS') {
    // Preflight (CORS 6.2): a non-2xx answer from the app becomes an empty 200.
    let out = res;
    if (res.status < 200 || res.status >= 300) out = { status: 200, headers: {}, body: '' };
    if (origin === undefined) return out;
    const allowed = originOk(s, origin);
    if (!allowed) return out;
    const method = req.headers['access-control-request-method'];
    if (method === undefined) return out;
    const reqHeaders = splitHeader(req.headers['access-control-request-headers']);
    if (!s.allowMethods.includes(method)) return out;
    const permitted = [...s.allowHeaders, ...SIMPLE_HEADERS].map((h) => h.toUpperCase());
    if (reqHeaders.some((h) => !permitted.includes(h.toUpperCase()))) return out;
    out.headers.vary = 'Origin';
    out.headers['access-control-allow-origin'] = allowed;
    if (s.allowCredentials) out.headers['access-control-allow-credentials'] = 'true';
    if (s.maxAge) out.headers['access-control-max-age'] = String(s.maxAge);
    out.headers['access-control-allow-methods'] = method;
    if (reqHeaders.length) out.headers['access-control-allow-headers'] = reqHeaders.join(',');
    return out;
  }
  if (origin === undefined) return res;
  const allowed = originOk(s, origin);
  if (!allowed) return res;
  res.headers.vary = res.headers.vary ? `${res.headers.vary},Origin` : 'Origin';
  res.headers['access-control-allow-origin'] = allowed;
  if (s.allowCredentials) res.headers['access-control-allow-credentials'] = 'true';
  if (s.exposeHeaders.length) res.headers['access-control-expose-headers'] = s.exposeHeaders.join(',');
  return res;
}
