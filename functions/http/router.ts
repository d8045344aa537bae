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

/**
 * An export of a module under schemas/ (`placement/allocations`, `putAllocationsV1_38`),
 * named rather than imported: the route tables are bundled into every Lambda of their
 * API, which must not carry the schemas of the families it does not serve. The OpenAPI
 * builder (scripts/openapi-document.ts) imports what it names; a name that is not there
 * fails the build and its unit test.
 */
export class SchemaRef {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
}

/** Names in one schema module, checked against its exports: `const rc = schemasIn<typeof RC>('placement/resource-classes')`. */
export function schemasIn<M>(module: string): (name: Extract<keyof M, string>) => SchemaRef {
  return (name) => new SchemaRef(module, name);
}

/** A JSON Patch body whose paths are the fields a schema module lists (`NODE_PATCH_FIELDS`). */
export interface PatchOf {
  patchOf: SchemaRef;
}

/** What one method of a route does: what the OpenAPI document says of it and what cdk/ needs to know. */
export interface Operation {
  summary: string;
  /** success status(es) at the newest microversion */
  ok: number[];
  /** the oldest microversion serving it (omitted: every version) */
  since?: string;
  /** request body (application/json) as validated at the newest microversion: a schema, a patch, or a JSON Schema written here */
  body?: SchemaRef | PatchOf | Record<string, unknown>;
  /** query string: a schema of the query dict, or named parameters (name -> description) */
  query?: SchemaRef | Record<string, string>;
  /** documents a JSON body (GET responses, 200/201 writes) */
  returnsJson?: boolean;
  /** answers from the provider forest: the family's Lambda loads it while it initialises (cdk/, FOREST_FAMILIES) */
  forest?: boolean;
}

/** A route as an API's table writes it: its methods are its operations' keys, in the Allow header's order. */
export interface RouteEntry {
  path: string;
  family: string;
  ops: Record<string, Operation>;
}

export interface Route extends RouteSpec {
  ops: Record<string, Operation>;
}

export function routeTable(entries: readonly RouteEntry[]): readonly Route[] {
  return entries.map((e) => ({ path: e.path, methods: Object.keys(e.ops), family: e.family, ops: e.ops }));
}

/** the families with an operation that answers from the provider forest */
export function forestFamilies(routes: readonly Route[]): string[] {
  return [...new Set(routes.filter((r) => Object.values(r.ops).some((op) => op.forest)).map((r) => r.family))];
}
