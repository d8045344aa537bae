/**
 * OpenAPI 3.1 documents of both APIs, built from the route tables
 * (functions/placement/routes.ts, functions/baremetal/routes.ts: every path, method and
 * what it does) and the zod request schemas they name (through jsonSchemaOf, i.e.
 * exactly the JSON Schema requests are validated against), at each API's newest
 * microversion. This module is only the builder, plus what holds for a whole API (title,
 * version header, error envelope). `npm run openapi` writes
 * schemas/openapi/{placement,baremetal}.json (scripts/openapi.ts); the APIs serve them at
 * GET /openapi.json; test/unit/openapi keeps them in sync.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as z from 'zod';
import { jsonSchemaOf } from '../schemas/json-schema.js';
import { PLACEMENT_ROUTES } from '../functions/placement/routes.js';
import { BAREMETAL_ROUTES } from '../functions/baremetal/routes.js';
import { SchemaRef, type Operation, type Route } from '../functions/http/router.js';
import { MAX_VERSION as PLACEMENT_MAX, MIN_VERSION as PLACEMENT_MIN } from '../functions/placement/framework/versions.js';
import { MAX_VERSION as IRONIC_MAX, MIN_VERSION as IRONIC_MIN } from '../functions/baremetal/framework/versions.js';

type Json = Record<string, unknown>;

export type ApiName = 'placement' | 'baremetal';

const SCHEMAS = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');

/** every schema module the route tables name, loaded once (they name exports, not imports: see SchemaRef) */
const SCHEMA_MODULES = new Map<string, Record<string, unknown>>();
for (const route of [...PLACEMENT_ROUTES, ...BAREMETAL_ROUTES]) {
  for (const op of Object.values(route.ops)) {
    for (const ref of [op.body, op.query, op.body && 'patchOf' in op.body ? op.body.patchOf : undefined]) {
      if (!(ref instanceof SchemaRef) || SCHEMA_MODULES.has(ref.module)) continue;
      const file = pathToFileURL(join(SCHEMAS, `${ref.module}.ts`)).href;
      SCHEMA_MODULES.set(ref.module, await import(file));
    }
  }
}

function resolveRef(ref: SchemaRef): unknown {
  const value = SCHEMA_MODULES.get(ref.module)?.[ref.name];
  if (value === undefined) throw new Error(`schemas/${ref.module}.ts has no export ${ref.name} (named in a route table)`);
  return value;
}

const PATCH_OPS = (fields: readonly string[]): Json => ({
  type: 'array',
  description: `An RFC 6902 JSON Patch. Patchable fields: ${fields.join(', ')} (and paths under their objects).`,
  items: {
    type: 'object',
    properties: { op: { type: 'string', enum: ['add', 'replace', 'remove'] }, path: { type: 'string', pattern: '^/' }, value: {} },
    required: ['op', 'path'],
  },
});

/** an operation's request body as a JSON Schema */
function bodySchema(body: NonNullable<Operation['body']>): Json {
  if (body instanceof SchemaRef) return schemaOf(resolveRef(body) as z.ZodType | Json);
  if ('patchOf' in body && body.patchOf instanceof SchemaRef) return schemaOf(PATCH_OPS(resolveRef(body.patchOf) as readonly string[]));
  return schemaOf(body as Json);
}

const API = {
  placement: {
    routes: PLACEMENT_ROUTES,
    title: 'Berth — OpenStack Placement API',
    min: PLACEMENT_MIN,
    max: PLACEMENT_MAX,
    server: 'http://127.0.0.1:8778',
    versionHeader: {
      name: 'OpenStack-API-Version',
      description: `The microversion: \`placement <major>.<minor>\` (${PLACEMENT_MIN}–${PLACEMENT_MAX}) or \`placement latest\`. Absent: ${PLACEMENT_MIN}. Request bodies and query parameters here are those of ${PLACEMENT_MAX}.`,
      example: `placement ${PLACEMENT_MAX}`,
    },
    error: {
      type: 'object',
      description: 'Placement error envelope (one error; `code` from 1.23)',
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              status: { type: 'integer' },
              title: { type: 'string' },
              detail: { type: 'string' },
              code: {
                type: 'string',
                examples: ['placement.undefined_code', 'placement.concurrent_update', 'placement.inventory.inuse', 'placement.duplicate_name'],
              },
              request_id: { type: 'string' },
            },
            required: ['status', 'title', 'detail'],
          },
        },
      },
      required: ['errors'],
    },
    errorStatuses: {
      400: 'Bad request (schema, query or microversion format)',
      401: 'No or invalid token',
      403: 'Policy does not allow it',
      404: 'Not found (or not at this microversion)',
      405: 'Method not allowed (Allow header lists the others)',
      406: 'Microversion out of range, or not acceptable',
      409: 'Conflict: generation mismatch, capacity exceeded, in use, duplicate',
      413: 'Request body too large (MAX_BODY_BYTES)',
      414: 'Query string too long',
      415: 'Not application/json',
    },
  },
  baremetal: {
    routes: BAREMETAL_ROUTES,
    title: 'Berth — bare-metal API (Ironic-compatible nodes, drivers and allocations)',
    min: IRONIC_MIN,
    max: IRONIC_MAX,
    server: 'http://127.0.0.1:6385',
    versionHeader: {
      name: 'X-OpenStack-Ironic-API-Version',
      description: `The API version: \`<major>.<minor>\` (${IRONIC_MIN}–${IRONIC_MAX}) or \`latest\`. Absent: ${IRONIC_MIN}. Request bodies and query parameters here are those of ${IRONIC_MAX}.`,
      example: IRONIC_MAX,
    },
    error: {
      type: 'object',
      description: 'Ironic error envelope: `error_message` is itself a JSON document',
      properties: {
        error_message: {
          type: 'string',
          contentMediaType: 'application/json',
          contentSchema: {
            type: 'object',
            properties: {
              faultstring: { type: 'string' },
              faultcode: { type: 'string', enum: ['Client', 'Server'] },
              debuginfo: { type: ['string', 'null'] },
            },
          },
        },
      },
      required: ['error_message'],
    },
    errorStatuses: {
      400: 'Invalid input',
      401: 'No or invalid token',
      403: 'Policy does not allow it',
      404: 'Not found',
      405: 'Method not allowed',
      406: 'API version out of range or too old for this',
      409: 'Conflict: node locked, state transition not allowed, duplicate name',
      413: 'Request body too large (MAX_BODY_BYTES)',
    },
  },
} as const;

function schemaOf(s: z.ZodType | Json): Json {
  const js = 'safeParse' in s && typeof s.safeParse === 'function' ? jsonSchemaOf(s as z.ZodType) : s;
  const out = structuredClone(js) as Json;
  delete out.$schema;
  return out;
}

function pascal(s: string): string {
  return s
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

export function operationId(method: string, path: string): string {
  const words = path === '/' ? 'Root' : pascal(path.replace(/\{([^}]+)\}/g, ' by $1 '));
  return `${method.toLowerCase()}${words}`;
}

function pathParams(path: string): Json[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: /uuid/.test(name!) ? { type: 'string', format: 'uuid' } : { type: 'string' },
  }));
}

/** Query parameters from a query-dict schema (properties and patternProperties) or a name → description map. */
function queryParams(query: Operation['query']): Json[] {
  if (!query) return [];
  const q = query instanceof SchemaRef ? (resolveRef(query) as z.ZodType) : query;
  if (!('safeParse' in q)) {
    return Object.entries(q as Record<string, string>).map(([name, description]) => ({
      name,
      in: 'query',
      required: false,
      description,
      schema: { type: 'string' },
    }));
  }
  const js = schemaOf(q as z.ZodType);
  const required = new Set((js.required as string[] | undefined) ?? []);
  const out: Json[] = [];
  for (const [name, schema] of Object.entries((js.properties as Record<string, Json>) ?? {})) {
    out.push({ name, in: 'query', required: required.has(name), schema });
  }
  for (const [pattern, schema] of Object.entries((js.patternProperties as Record<string, Json>) ?? {})) {
    const m = /^\^([a-z_]+)\((.*)\)\?\$$/.exec(pattern);
    const name = m ? m[1]! : pattern;
    out.push({
      name,
      in: 'query',
      required: false,
      description: m
        ? `Also \`${name}<suffix>\` for a granular request group, the suffix matching \`${m[2]}\`.`
        : `Any parameter matching \`${pattern}\`.`,
      schema,
    });
  }
  return out;
}

/** Every route and method of `api` that has no operation (the sync test wants none). */
export function undocumented(api: ApiName): string[] {
  return API[api].routes.flatMap((r: Route) => r.methods.filter((m) => !r.ops[m]).map((m) => `${m} ${r.path}`));
}

/** Operations that name a method their route does not list (stale docs). */
export function unrouted(api: ApiName): string[] {
  return API[api].routes.flatMap((r: Route) =>
    Object.keys(r.ops)
      .filter((m) => !r.methods.includes(m))
      .map((m) => `${m} ${r.path}`),
  );
}

export function buildOpenApi(api: ApiName): Json {
  const a = API[api];
  const missing = undocumented(api);
  if (missing.length) throw new Error(`no operation for ${missing.join(', ')} in the route table`);
  const schemas: Record<string, Json> = { Error: a.error as Json };
  const paths: Record<string, Json> = {};
  for (const route of a.routes) {
    const item: Json = {};
    const params = pathParams(route.path);
    if (params.length) item.parameters = params;
    for (const method of route.methods) {
      const doc = route.ops[method]!;
      const id = operationId(method, route.path);
      const isPublic = route.path === '/' || (api === 'baremetal' && route.path === '/v1');
      const op: Json = {
        operationId: id,
        summary: doc.summary,
        tags: [route.family],
        parameters: [{ $ref: '#/components/parameters/ApiVersion' }, ...queryParams(doc.query)],
      };
      if (doc.since) op.description = `Available from microversion ${doc.since}.`;
      if (isPublic) op.security = [];
      if (doc.body) {
        const name = `${pascal(id)}Body`;
        schemas[name] = bodySchema(doc.body);
        op.requestBody = { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } };
      }
      const responses: Record<string, Json> = {};
      for (const s of doc.ok) {
        responses[String(s)] = {
          description: s === 204 ? 'Done, no body' : s === 202 ? 'Accepted: the change runs asynchronously' : s === 201 ? 'Created' : 'OK',
          ...(doc.returnsJson && s !== 204 && s !== 202 ? { content: { 'application/json': { schema: { type: 'object' } } } } : {}),
        };
      }
      for (const s of Object.keys(a.errorStatuses)) {
        if (isPublic && s !== '406') continue;
        if ((s === '415' || s === '413') && !doc.body) continue;
        if (s === '414' && !doc.query) continue;
        if (s === '409' && method === 'GET') continue;
        responses[s] = { $ref: `#/components/responses/E${s}` };
      }
      op.responses = responses;
      item[method.toLowerCase()] = op;
    }
    paths[route.path] = item;
  }
  const responses: Record<string, Json> = {};
  for (const [s, description] of Object.entries(a.errorStatuses)) {
    responses[`E${s}`] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: a.title,
      version: a.max,
      description: `Microversions ${a.min}–${a.max}, selected with the \`${a.versionHeader.name}\` header; this document describes ${a.max}. Generated from Berth's route table and request schemas (\`npm run openapi\`).`,
    },
    servers: [{ url: a.server, description: 'local (npm start)' }],
    security: [{ token: [] }],
    paths,
    components: {
      securitySchemes: {
        token: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Auth-Token',
          description: 'Keystone token (locally, noauth2: `admin`); with the JWT authorizer, an `Authorization: Bearer` token instead',
        },
      },
      parameters: {
        ApiVersion: {
          name: a.versionHeader.name,
          in: 'header',
          required: false,
          description: a.versionHeader.description,
          schema: { type: 'string', examples: [a.versionHeader.example] },
        },
      },
      schemas,
      responses,
    },
  };
}

/** The file `npm run openapi` writes (stable formatting: the sync test compares text). */
export function renderOpenApi(api: ApiName): string {
  return JSON.stringify(buildOpenApi(api), null, 2) + '\n';
}
