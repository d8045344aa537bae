/**
 * The OpenAPI documents: the committed files are what `npm run openapi` generates, every
 * route and method of both route tables has an operation (and no operation names a route
 * that does not exist), every $ref resolves, path parameters match the templates, and
 * the published request schemas are the ones requests are validated against (checked by
 * running the project's validator over them with accepted and refused bodies).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApi, renderOpenApi, undocumented, unrouted, type ApiName } from '../../../scripts/openapi-document.js';
import { PLACEMENT_ROUTES } from '../../../functions/placement/routes.js';
import { BAREMETAL_ROUTES } from '../../../functions/baremetal/routes.js';
import { validate, SchemaValidationError } from '../../../functions/core/compat/jsonschema.js';
import type { JsonSchema } from '../../../functions/core/compat/jsonschema-keywords.js';
import { jsonSchemaOf } from '../../../schemas/json-schema.js';
import * as ALLOC from '../../../schemas/placement/allocations.js';

const ROUTES = { placement: PLACEMENT_ROUTES, baremetal: BAREMETAL_ROUTES };
const APIS: ApiName[] = ['placement', 'baremetal'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function resolve(doc: any, ref: string): unknown {
  expect(ref.startsWith('#/')).toBe(true);
  return ref
    .slice(2)
    .split('/')
    .reduce((o: any, k) => (o === undefined ? undefined : o[k.replace(/~1/g, '/').replace(/~0/g, '~')]), doc);
}

function refs(x: unknown, out: string[] = []): string[] {
  if (Array.isArray(x)) for (const v of x) refs(v, out);
  else if (x && typeof x === 'object') {
    for (const [k, v] of Object.entries(x)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

function accepts(schema: JsonSchema, value: unknown): boolean {
  try {
    validate(value, schema);
    return true;
  } catch (e) {
    if (e instanceof SchemaValidationError) return false;
    throw e;
  }
}

for (const api of APIS) {
  describe(`${api} OpenAPI document`, () => {
    const doc = buildOpenApi(api) as any;

    it('is committed as generated (run `npm run openapi` after changing routes or schemas)', () => {
      const committed = readFileSync(join(process.cwd(), 'schemas', 'openapi', `${api}.json`), 'utf8');
      expect(committed).toBe(renderOpenApi(api));
    });

    it('has an operation for every route and method, and none for routes that do not exist', () => {
      expect(undocumented(api)).toEqual([]);
      expect(unrouted(api)).toEqual([]);
      const expected = ROUTES[api].flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).sort();
      const actual = Object.entries(doc.paths as Record<string, any>)
        .flatMap(([p, item]) =>
          Object.keys(item)
            .filter((k) => METHODS.includes(k))
            .map((m) => `${m.toUpperCase()} ${p}`),
        )
        .sort();
      expect(actual).toEqual(expected);
      const ids = actual.map((k) => {
        const [m, p] = k.split(' ');
        return doc.paths[p!][m!.toLowerCase()].operationId;
      });
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('is OpenAPI 3.1 with resolvable references, declared path parameters and error envelopes', () => {
      expect(doc.openapi).toBe('3.1.0');
      for (const ref of refs(doc)) expect(resolve(doc, ref), ref).toBeDefined();
      for (const [path, item] of Object.entries(doc.paths as Record<string, any>)) {
        const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        expect((item.parameters ?? []).map((p: any) => p.name)).toEqual(names);
        for (const m of METHODS.filter((k) => item[k])) {
          const op = item[m];
          expect(op.parameters[0]).toEqual({ $ref: '#/components/parameters/ApiVersion' });
          expect(Object.keys(op.responses).some((s) => s.startsWith('2'))).toBe(true);
          // the version document is public; everything else can answer 401/403
          if (path !== '/' && path !== '/v1') expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403']));
        }
      }
      const version = doc.components.parameters.ApiVersion;
      expect(version.in).toBe('header');
      expect(version.name).toBe(api === 'placement' ? 'OpenStack-API-Version' : 'X-OpenStack-Ironic-API-Version');
      expect(doc.components.schemas.Error.required).toEqual([api === 'placement' ? 'errors' : 'error_message']);
    });
  });
}

describe('published request schemas are the validated ones', () => {
  const doc = buildOpenApi('placement') as any;
  const bodyOf = (path: string, method: string): JsonSchema =>
    resolve(doc, doc.paths[path][method].requestBody.content['application/json'].schema.$ref) as JsonSchema;

  it('PUT /allocations/{consumer_uuid} at 1.38: the handler’s schema, byte for byte, and it behaves', () => {
    const schema = bodyOf('/allocations/{consumer_uuid}', 'put');
    expect(schema).toEqual(jsonSchemaOf(ALLOC.putAllocationsV1_38));
    const rp = '0c4e6d3b-8a3c-4a51-8f0b-5d3b5f1d0a11';
    const good = {
      allocations: { [rp]: { resources: { VCPU: 1 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    expect(accepts(schema, good)).toBe(true);
    // 1.38 requires consumer_type; a resource amount must be a positive integer
    const { consumer_type: _t, ...noType } = good;
    expect(accepts(schema, noType)).toBe(false);
    expect(accepts(schema, { ...good, allocations: { [rp]: { resources: { VCPU: 0 } } } })).toBe(false);
  });

  it('query parameters of GET /resource_providers are the 1.18 query schema', () => {
    const names = doc.paths['/resource_providers'].get.parameters
      .slice(1)
      .map((p: any) => p.name)
      .sort();
    expect(names).toEqual(['in_tree', 'member_of', 'name', 'required', 'resources', 'uuid']);
    const usages = doc.paths['/usages'].get.parameters.slice(1);
    expect(usages.find((p: any) => p.name === 'project_id').required).toBe(true);
  });

  it('bare-metal POST /v1/allocations publishes Ironic’s allocation schema', () => {
    const bm = buildOpenApi('baremetal') as any;
    const schema = resolve(bm, bm.paths['/v1/allocations'].post.requestBody.content['application/json'].schema.$ref) as JsonSchema;
    expect(accepts(schema, { resource_class: 'baremetal', traits: ['CUSTOM_GOLD'], name: 'a1' })).toBe(true);
    expect(accepts(schema, { resource_class: 'x'.repeat(81) })).toBe(false);
    expect(accepts(schema, { unknown_field: 1 })).toBe(false);
  });
});
