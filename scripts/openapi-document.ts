/**
 * OpenAPI 3.1 documents of both APIs, built from the same sources the servers use:
 * the route tables (functions/placement/routes.ts, functions/baremetal/routes.ts: every
 * path and method) and the zod request schemas (through jsonSchemaOf, i.e. exactly the
 * JSON Schema requests are validated against), at each API's newest microversion.
 * `npm run openapi` writes schemas/openapi/{placement,baremetal}.json (scripts/openapi.ts);
 * the APIs serve them at GET /openapi.json; test/unit/openapi keeps them in sync.
 *
 * What is not a zod schema here is documentation: summaries, success statuses, the
 * query parameters of the bare-metal lists (the handlers' allowed-argument lists) and the
 * small bodies the bare-metal handlers check argument by argument.
 */
import type * as z from 'zod';
import { jsonSchemaOf } from '../schemas/json-schema.js';
import { PLACEMENT_ROUTES } from '../functions/placement/routes.js';
import { BAREMETAL_ROUTES } from '../functions/baremetal/routes.js';
import type { RouteSpec } from '../functions/http/router.js';
import { MAX_VERSION as PLACEMENT_MAX, MIN_VERSION as PLACEMENT_MIN } from '../functions/placement/framework/versions.js';
import { MAX_VERSION as IRONIC_MAX, MIN_VERSION as IRONIC_MIN } from '../functions/baremetal/framework/versions.js';
import * as RP from '../schemas/placement/resource-providers.js';
import * as INV from '../schemas/placement/inventories.js';
import * as AGG from '../schemas/placement/aggregates.js';
import * as ALLOC from '../schemas/placement/allocations.js';
import * as AC from '../schemas/placement/allocation-candidates.js';
import * as RC from '../schemas/placement/resource-classes.js';
import * as TR from '../schemas/placement/traits.js';
import * as US from '../schemas/placement/usages.js';
import * as RS from '../schemas/placement/reshaper.js';
import * as NODES from '../schemas/baremetal/nodes.js';
import * as BMA from '../schemas/baremetal/allocations.js';
import * as BMT from '../schemas/baremetal/traits.js';
import * as RAID from '../schemas/baremetal/raid.js';

type Json = Record<string, unknown>;

/** What a route's method does, beyond what the route table and the schemas say. */
export interface OperationDoc {
  summary: string;
  /** success status(es) at the newest microversion */
  ok: number[];
  /** the oldest microversion serving it (omitted: every version) */
  since?: string;
  /** request body (application/json), as validated at the newest microversion */
  body?: z.ZodType | Json;
  /** query string: a zod/JSON schema of the query dict, or named parameters */
  query?: z.ZodType | Record<string, string>;
  /** documents a JSON body (GET responses, 200/201 writes) */
  returnsJson?: boolean;
}

export type ApiName = 'placement' | 'baremetal';

const newestCandidatesQuery = AC.GET_SCHEMAS[0]![2];

export const PLACEMENT_OPERATIONS: Record<string, OperationDoc> = {
  'GET /': { summary: 'Version document (no token needed)', ok: [200], returnsJson: true },
  'GET /openapi.json': { summary: 'This OpenAPI document', ok: [200], returnsJson: true },
  'GET /resource_classes': { summary: 'List resource classes', ok: [200], since: '1.2', returnsJson: true },
  'POST /resource_classes': { summary: 'Create a custom resource class', ok: [201], since: '1.2', body: RC.postResourceClass },
  'GET /resource_classes/{name}': { summary: 'Show a resource class', ok: [200], since: '1.2', returnsJson: true },
  'PUT /resource_classes/{name}': {
    summary: 'Create a custom resource class unless it exists (201 created, 204 existed)',
    ok: [201, 204],
    since: '1.7',
  },
  'DELETE /resource_classes/{name}': { summary: 'Delete a custom resource class (409 while in use)', ok: [204], since: '1.2' },
  'GET /resource_providers': { summary: 'List resource providers', ok: [200], query: RP.listProvidersQuery1_18, returnsJson: true },
  'POST /resource_providers': {
    summary: 'Create a resource provider (returns it from 1.20)',
    ok: [200],
    body: RP.createProviderV1_14,
    returnsJson: true,
  },
  'GET /resource_providers/{uuid}': { summary: 'Show a resource provider', ok: [200], returnsJson: true },
  'DELETE /resource_providers/{uuid}': { summary: 'Delete a resource provider (409 with children or allocations)', ok: [204] },
  'PUT /resource_providers/{uuid}': { summary: 'Rename / re-parent a resource provider', ok: [200], body: RP.updateProviderV1_14, returnsJson: true },
  'GET /resource_providers/{uuid}/inventories': { summary: "List a provider's inventories", ok: [200], returnsJson: true },
  'POST /resource_providers/{uuid}/inventories': { summary: 'Add one inventory', ok: [201], body: INV.postInventory, returnsJson: true },
  'PUT /resource_providers/{uuid}/inventories': {
    summary: "Replace all of a provider's inventories (generation-guarded)",
    ok: [200],
    body: INV.putInventories,
    returnsJson: true,
  },
  'DELETE /resource_providers/{uuid}/inventories': { summary: "Delete all of a provider's inventories (409 while in use)", ok: [204], since: '1.5' },
  'GET /resource_providers/{uuid}/inventories/{resource_class}': { summary: 'Show one inventory', ok: [200], returnsJson: true },
  'PUT /resource_providers/{uuid}/inventories/{resource_class}': {
    summary: 'Update one existing inventory (generation-guarded)',
    ok: [200],
    body: INV.putInventory,
    returnsJson: true,
  },
  'DELETE /resource_providers/{uuid}/inventories/{resource_class}': { summary: 'Delete one inventory (409 while in use)', ok: [204] },
  'GET /resource_providers/{uuid}/usages': { summary: "A provider's usage per resource class", ok: [200], returnsJson: true },
  'GET /resource_providers/{uuid}/aggregates': { summary: "A provider's aggregates", ok: [200], since: '1.1', returnsJson: true },
  'PUT /resource_providers/{uuid}/aggregates': {
    summary: "Replace a provider's aggregates (generation-guarded from 1.19)",
    ok: [200],
    since: '1.1',
    body: AGG.putAggregatesV1_19,
    returnsJson: true,
  },
  'GET /resource_providers/{uuid}/allocations': { summary: 'Allocations against a provider, by consumer', ok: [200], returnsJson: true },
  'POST /allocations': { summary: 'Set the allocations of several consumers atomically', ok: [204], since: '1.13', body: ALLOC.postAllocationsV1_38 },
  'GET /allocations/{consumer_uuid}': { summary: "A consumer's allocations", ok: [200], returnsJson: true },
  'PUT /allocations/{consumer_uuid}': {
    summary: "Replace a consumer's allocations (consumer-generation-guarded from 1.28)",
    ok: [204],
    body: ALLOC.putAllocationsV1_38,
  },
  'DELETE /allocations/{consumer_uuid}': { summary: "Delete a consumer's allocations", ok: [204] },
  'GET /allocation_candidates': {
    summary: 'Allocation candidates and provider summaries for a request',
    ok: [200],
    since: '1.10',
    query: newestCandidatesQuery,
    returnsJson: true,
  },
  'GET /traits': { summary: 'List traits', ok: [200], since: '1.6', query: TR.listTraitsQuery, returnsJson: true },
  'GET /traits/{name}': { summary: 'Check a trait exists', ok: [204], since: '1.6' },
  'PUT /traits/{name}': { summary: 'Create a custom trait unless it exists (201 created, 204 existed)', ok: [201, 204], since: '1.6' },
  'DELETE /traits/{name}': { summary: 'Delete a custom trait (409 while in use)', ok: [204], since: '1.6' },
  'GET /resource_providers/{uuid}/traits': { summary: "A provider's traits", ok: [200], since: '1.6', returnsJson: true },
  'PUT /resource_providers/{uuid}/traits': {
    summary: "Replace a provider's traits (generation-guarded)",
    ok: [200],
    since: '1.6',
    body: TR.setProviderTraits,
    returnsJson: true,
  },
  'DELETE /resource_providers/{uuid}/traits': { summary: "Remove all of a provider's traits", ok: [204], since: '1.6' },
  'GET /usages': {
    summary: 'Usage of a project (and user), by consumer type from 1.38',
    ok: [200],
    since: '1.9',
    query: US.usagesQuery1_38,
    returnsJson: true,
  },
  'POST /reshaper': { summary: 'Move inventories and allocations atomically', ok: [204], since: '1.30', body: RS.reshapeV1_38 },
};

const PATCH_OPS = (fields: readonly string[]): Json => ({
  type: 'array',
  description: `An RFC 6902 JSON Patch. Patchable fields: ${fields.join(', ')} (and paths under their objects).`,
  items: {
    type: 'object',
    properties: { op: { type: 'string', enum: ['add', 'replace', 'remove'] }, path: { type: 'string', pattern: '^/' }, value: {} },
    required: ['op', 'path'],
  },
});

const LIST = {
  marker: 'uuid of the last item of the previous page',
  limit: 'page size',
  sort_key: 'field to sort by',
  sort_dir: 'asc or desc',
};
const NODE_LIST = {
  chassis_uuid: 'only nodes of this chassis',
  instance_uuid: 'only the node with this instance',
  associated: 'true/false: nodes with/without an instance',
  maintenance: 'true/false',
  retired: 'true/false',
  provision_state: 'only nodes in this provision state',
  driver: 'only nodes of this driver',
  resource_class: 'only nodes of this resource class',
  fault: 'only nodes with this fault',
  conductor_group: 'only nodes of this conductor group',
  conductor: 'only nodes of this conductor',
  owner: 'only nodes owned by this project',
  lessee: 'only nodes leased to this project',
  project: 'nodes owned by or leased to this project',
  description_contains: 'substring of the description',
  shard: 'only nodes of these shards',
  sharded: 'true/false',
  ...LIST,
};

export const BAREMETAL_OPERATIONS: Record<string, OperationDoc> = {
  'GET /': { summary: 'Version document (no token needed)', ok: [200], returnsJson: true },
  'GET /openapi.json': { summary: 'This OpenAPI document', ok: [200], returnsJson: true },
  'GET /v1': { summary: 'API v1 document with the negotiated version', ok: [200], returnsJson: true },
  'GET /v1/nodes': {
    summary: 'List nodes',
    ok: [200],
    query: { ...NODE_LIST, fields: 'comma-separated fields to return', detail: 'true: full records' },
    returnsJson: true,
  },
  'POST /v1/nodes': { summary: 'Enroll a node', ok: [201], body: NODES.createNode, returnsJson: true },
  'GET /v1/nodes/detail': { summary: 'List nodes with every field', ok: [200], query: NODE_LIST, returnsJson: true },
  'GET /v1/nodes/{node}': {
    summary: 'Show a node (by uuid or name)',
    ok: [200],
    query: { fields: 'comma-separated fields to return' },
    returnsJson: true,
  },
  'PATCH /v1/nodes/{node}': {
    summary: 'Update a node (JSON Patch)',
    ok: [200],
    query: { reset_interfaces: 'true: reset interfaces to the new driver’s defaults' },
    body: PATCH_OPS(NODES.NODE_PATCH_FIELDS),
    returnsJson: true,
  },
  'DELETE /v1/nodes/{node}': { summary: 'Delete a node', ok: [204] },
  'GET /v1/nodes/{node}/validate': {
    summary: "Each driver interface's verdict on the node ({result, reason})",
    ok: [200],
    query: { node_uuid: 'validate this node instead (a UUID)' },
    returnsJson: true,
  },
  'PUT /v1/nodes/{node}/states/raid': {
    summary: "Set the node's target RAID configuration ({} clears it)",
    ok: [204],
    since: '1.12',
    body: RAID.raidConfig,
  },
  'GET /v1/nodes/{node}/vifs': { summary: 'The VIFs attached to a node', ok: [200], since: '1.28', returnsJson: true },
  'POST /v1/nodes/{node}/vifs': { summary: 'Attach a VIF (kept on the node: Berth has no ports)', ok: [204], since: '1.28', body: RAID.vifAttach },
  'DELETE /v1/nodes/{node}/vifs/{vif}': { summary: 'Detach a VIF', ok: [204], since: '1.28' },
  'GET /v1/drivers': {
    summary: 'The enabled hardware types',
    ok: [200],
    query: {
      type: 'classic or dynamic (1.30)',
      detail: 'true: default and enabled interfaces (1.30)',
      fields: 'comma-separated fields to return (1.77)',
    },
    returnsJson: true,
  },
  'GET /v1/drivers/{driver}': {
    summary: 'A hardware type with its default and enabled interfaces',
    ok: [200],
    query: { fields: 'comma-separated fields to return (1.77)' },
    returnsJson: true,
  },
  'GET /v1/drivers/{driver}/properties': { summary: 'The driver_info properties a hardware type reads', ok: [200], returnsJson: true },
  'GET /v1/nodes/{node}/traits': { summary: "A node's traits", ok: [200], since: '1.37', returnsJson: true },
  'PUT /v1/nodes/{node}/traits': { summary: "Replace a node's traits", ok: [204], since: '1.37', body: BMT.nodeTraitsBody },
  'DELETE /v1/nodes/{node}/traits': { summary: "Remove all of a node's traits", ok: [204], since: '1.37' },
  'PUT /v1/nodes/{node}/traits/{trait}': { summary: 'Add one trait', ok: [204], since: '1.37' },
  'DELETE /v1/nodes/{node}/traits/{trait}': { summary: 'Remove one trait', ok: [204], since: '1.37' },
  'GET /v1/nodes/{node}/states': { summary: "A node's power and provision states", ok: [200], returnsJson: true },
  'PUT /v1/nodes/{node}/states/power': {
    summary: 'Change the power state (asynchronous)',
    ok: [202],
    body: {
      type: 'object',
      properties: {
        target: { type: 'string', enum: ['power on', 'power off', 'rebooting', 'soft power off', 'soft rebooting'] },
        timeout: { type: 'integer', minimum: 1 },
      },
      required: ['target'],
      additionalProperties: false,
    },
  },
  'PUT /v1/nodes/{node}/states/provision': {
    summary: 'Change the provision state (asynchronous: manage, provide, active, deleted, clean, …)',
    ok: [202],
    body: {
      type: 'object',
      properties: {
        target: { type: 'string' },
        configdrive: { type: ['string', 'object', 'null'] },
        clean_steps: { type: ['array', 'null'] },
        deploy_steps: { type: ['array', 'null'] },
        rescue_password: { type: 'string' },
        disable_ramdisk: { type: 'boolean' },
      },
      required: ['target'],
      additionalProperties: false,
    },
  },
  'PUT /v1/nodes/{node}/maintenance': {
    summary: 'Put a node into maintenance',
    ok: [202],
    body: { type: 'object', properties: { reason: { type: 'string' } }, additionalProperties: false },
  },
  'DELETE /v1/nodes/{node}/maintenance': { summary: 'Take a node out of maintenance', ok: [202] },
  'GET /v1/nodes/{node}/allocation': {
    summary: "The node's allocation",
    ok: [200],
    since: '1.52',
    query: { fields: 'comma-separated fields to return' },
    returnsJson: true,
  },
  'DELETE /v1/nodes/{node}/allocation': { summary: "Delete the node's allocation", ok: [204], since: '1.52' },
  'GET /v1/allocations': {
    summary: 'List allocations',
    ok: [200],
    since: '1.52',
    query: {
      node: 'uuid or name of the node',
      resource_class: 'only of this class',
      state: 'allocating, active or error',
      owner: 'only of this owner (1.60)',
      fields: 'comma-separated fields to return',
      ...LIST,
    },
    returnsJson: true,
  },
  'POST /v1/allocations': {
    summary: 'Create an allocation (asynchronous: allocating → active or error)',
    ok: [201],
    since: '1.52',
    body: BMA.ALLOCATION_DOC_JSON,
    returnsJson: true,
  },
  'GET /v1/allocations/{allocation}': {
    summary: 'Show an allocation (by uuid or name)',
    ok: [200],
    since: '1.52',
    query: { fields: 'comma-separated fields to return' },
    returnsJson: true,
  },
  'PATCH /v1/allocations/{allocation}': {
    summary: 'Update an allocation (JSON Patch; 1.57)',
    ok: [200],
    since: '1.57',
    body: PATCH_OPS(BMA.ALLOCATION_PATCH_FIELDS),
    returnsJson: true,
  },
  'DELETE /v1/allocations/{allocation}': { summary: 'Delete an allocation (frees its node)', ok: [204], since: '1.52' },
};

const API = {
  placement: {
    routes: PLACEMENT_ROUTES,
    ops: PLACEMENT_OPERATIONS,
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
    ops: BAREMETAL_OPERATIONS,
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
function queryParams(q: z.ZodType | Record<string, string> | undefined): Json[] {
  if (!q) return [];
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

/** Every route and method of `api` that has no operation doc (the sync test wants none). */
export function undocumented(api: ApiName): string[] {
  const { routes, ops } = API[api];
  return routes.flatMap((r: RouteSpec) => r.methods.map((m) => `${m} ${r.path}`)).filter((k) => !(k in ops));
}

/** Operation docs that name no route (stale docs). */
export function unrouted(api: ApiName): string[] {
  const { routes, ops } = API[api];
  const keys = new Set(routes.flatMap((r: RouteSpec) => r.methods.map((m) => `${m} ${r.path}`)));
  return Object.keys(ops).filter((k) => !keys.has(k));
}

export function buildOpenApi(api: ApiName): Json {
  const a = API[api];
  const missing = undocumented(api);
  if (missing.length) throw new Error(`no OpenAPI operation doc for ${missing.join(', ')} (scripts/openapi-document.ts)`);
  const schemas: Record<string, Json> = { Error: a.error as Json };
  const paths: Record<string, Json> = {};
  for (const route of a.routes) {
    const item: Json = {};
    const params = pathParams(route.path);
    if (params.length) item.parameters = params;
    for (const method of route.methods) {
      const doc = (a.ops as Record<string, OperationDoc>)[`${method} ${route.path}`]!;
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
        schemas[name] = schemaOf(doc.body);
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
