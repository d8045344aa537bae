/**
 * Path-template routing shared by the Lambda dispatchers, the local HTTP adapter and
 * the CDK stack (which turns the same tables into API Gateway routes).
 * A `{name}` segment matches one non-empty path segment.
 */

export interface RouteSpec {
  /** '/resource_providers/{uuid}' */
  path: string;
  /** methods in the order the API's Allow header lists them */
  methods: string[];
  /** the Lambda (resource family) that serves the route */
  family: string;
}

export interface RouteMatch {
  route: RouteSpec;
  params: Record<string, string>;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function matchTemplate(template: string, path: string): Record<string, string> | undefined {
  const t = template.split('/');
  const p = path.split('/');
  if (t.length !== p.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < t.length; i++) {
    const ts = t[i]!;
    const ps = p[i]!;
    if (ts.startsWith('{') && ts.endsWith('}')) {
      if (ps === '') return undefined;
      params[ts.slice(1, -1).replace(/\+$/, '')] = decodeSegment(ps);
    } else if (ts !== ps) {
      return undefined;
    }
  }
  return params;
}

export function matchRoute(routes: readonly RouteSpec[], path: string): RouteMatch | undefined {
  for (const route of routes) {
    const params = matchTemplate(route.path, path);
    if (params) return { route, params };
  }
  return undefined;
}
