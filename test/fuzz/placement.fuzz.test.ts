/**
 * Property-based HTTP fuzzing of EVERY Placement route: generated methods, paths with
 * valid and invalid ids, query strings (known keys, duplicates, garbage, huge),
 * headers (microversions, Accept, Content-Type, identities) and bodies derived from
 * the handlers' JSON Schemas, then mutated, plus raw garbage bytes.
 * Properties: never a 5xx; a refused request (4xx) leaves the whole table unchanged
 * and answers in Placement's error format.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { client, useTable, type Api } from '../integration/harness.js';
import { calls, denied, serveRecorded } from '../integration/security/ddb-recorder.js';
import { PLACEMENT_ACCESS } from '../../cdk/lib/permissions.js';
import type { Server } from 'node:http';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as rc from '../../schemas/placement/resource-classes.js';
import * as rps from '../../schemas/placement/resource-providers.js';
import * as inv from '../../schemas/placement/inventories.js';
import * as agg from '../../schemas/placement/aggregates.js';
import * as alloc from '../../schemas/placement/allocations.js';
import * as tr from '../../schemas/placement/traits.js';
import * as resh from '../../schemas/placement/reshaper.js';
import { PLACEMENT_ROUTES } from '../../functions/placement/routes.js';
import {
  describeReq,
  fc,
  fuzzSettings,
  fuzzTimeout,
  gatewayError,
  newStats,
  runFuzz,
  send,
  stateDiff,
  tableState,
  type RawReq,
  type RawRes,
} from './harness.js';
import { encodeSegment, headerValue, nastyString, pathSegment, queryString, rawBody, type Pools } from './arbitraries.js';
import { resetConfig } from '../../functions/config.js';

let api: Api;
let server: Server;
let table: string;
let endpoint: string;
const ids = { root: randomUUID(), child: randomUUID(), other: randomUUID(), consumer: randomUUID(), agg: randomUUID() };
const CLASS = 'CUSTOM_FUZZ_A';
const TRAIT = 'CUSTOM_FUZZ_T';

const pools: Pools = {
  uuid: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(ids.root, ids.child, ids.other, ids.consumer, ids.agg) },
    { weight: 2, arbitrary: fc.uuid() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ids.root.toUpperCase(),
        ids.root.replace(/-/g, ''),
        'not-a-uuid',
        '00000000-0000-0000-0000-000000000000',
        `${ids.root}x`,
      ),
    },
    { weight: 1, arbitrary: nastyString },
  ),
  upper: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('VCPU', 'MEMORY_MB', 'DISK_GB', CLASS, 'INSTANCE', 'MIGRATION', 'HW_CPU_X86_AVX', TRAIT) },
    { weight: 1, arbitrary: fc.stringMatching(/^CUSTOM_[A-Z0-9_]{1,12}$/) },
    { weight: 1, arbitrary: nastyString },
  ),
  custom: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(CLASS, TRAIT, 'CUSTOM_FUZZ_B') },
    { weight: 2, arbitrary: fc.stringMatching(/^CUSTOM_[A-Z0-9_]{1,12}$/) },
    { weight: 1, arbitrary: nastyString },
  ),
  text: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('rp-fuzz', 'VCPU', TRAIT, 'HW_CPU_X86_AVX', 'project-a', 'user-a', ids.root) },
    { weight: 2, arbitrary: nastyString },
  ),
};

const zs = (...xs: Parameters<typeof jsonSchemaOf>[0][]) => xs.map((x) => jsonSchemaOf(x) as Record<string, unknown>);
const BODIES: Record<string, Record<string, unknown>[]> = {
  'POST /resource_classes': zs(rc.postResourceClass),
  'PUT /resource_classes/{name}': zs(rc.putResourceClass),
  'POST /resource_providers': zs(rps.createProvider, rps.createProviderV1_14),
  'PUT /resource_providers/{uuid}': zs(rps.updateProvider, rps.updateProviderV1_14),
  'POST /resource_providers/{uuid}/inventories': zs(inv.postInventory),
  'PUT /resource_providers/{uuid}/inventories': zs(inv.putInventories),
  'PUT /resource_providers/{uuid}/inventories/{resource_class}': zs(inv.putInventory),
  'PUT /resource_providers/{uuid}/aggregates': zs(agg.putAggregatesV1_1, agg.putAggregatesV1_19),
  'POST /allocations': zs(alloc.postAllocationsV1_13, alloc.postAllocationsV1_28, alloc.postAllocationsV1_34, alloc.postAllocationsV1_38),
  'PUT /allocations/{consumer_uuid}': zs(
    alloc.putAllocationsList,
    alloc.putAllocationsListV1_8,
    alloc.putAllocationsV1_12,
    alloc.putAllocationsV1_28,
    alloc.putAllocationsV1_34,
    alloc.putAllocationsV1_38,
  ),
  'PUT /resource_providers/{uuid}/traits': zs(tr.setProviderTraits),
  'POST /reshaper': zs(resh.reshape, resh.reshapeV1_34, resh.reshapeV1_38),
};

const resourcesValue = fc.oneof(
  fc.constantFrom(
    'VCPU:1',
    'VCPU:1,MEMORY_MB:512',
    `${CLASS}:1`,
    'VCPU:0',
    'VCPU:-1',
    'VCPU:2147483648',
    'VCPU:99999999999999999999',
    'VCPU',
    ':1',
    'VCPU:1,VCPU:2',
    'NOPE:1',
    'VCPU:1.5',
    '',
  ),
  nastyString,
);
const traitsValue = fc.oneof(
  fc.constantFrom('HW_CPU_X86_AVX', `!${TRAIT}`, `in:${TRAIT},HW_CPU_X86_AVX`, '!', 'in:', 'HW_CPU_X86_AVX,!HW_CPU_X86_AVX', 'NOPE'),
  nastyString,
);
const memberOf = fc.oneof(
  fc.constantFrom(ids.agg, `in:${ids.agg},${randomUUID()}`, `!${ids.agg}`, `!in:${ids.agg}`, 'in:', 'in:nope'),
  pools.uuid,
  nastyString,
);
const QUERY: Record<string, Record<string, fc.Arbitrary<string>>> = {
  '/resource_providers': {
    name: pools.text,
    uuid: pools.uuid,
    member_of: memberOf,
    resources: resourcesValue,
    in_tree: pools.uuid,
    required: traitsValue,
  },
  '/allocation_candidates': {
    resources: resourcesValue,
    resources1: resourcesValue,
    resources_X: resourcesValue,
    required: traitsValue,
    required1: traitsValue,
    member_of: memberOf,
    member_of1: memberOf,
    in_tree: pools.uuid,
    limit: fc.oneof(fc.constantFrom('1', '0', '-1', '2147483648', '99999999999999999999', 'x'), nastyString),
    group_policy: fc.constantFrom('none', 'isolate', 'bogus'),
    root_required: traitsValue,
    same_subtree: fc.constantFrom('_X', '_X,1', '', 'x'),
  },
  '/traits': {
    name: fc.oneof(fc.constantFrom('startswith:CUSTOM', `in:${TRAIT},HW_CPU_X86_AVX`, 'in:', 'startswith:', 'bogus'), nastyString),
    associated: fc.constantFrom('true', 'false', 'yes', ''),
  },
  '/usages': {
    project_id: fc.oneof(fc.constantFrom('project-a', 'project-b'), nastyString),
    user_id: fc.oneof(fc.constantFrom('user-a'), nastyString),
    consumer_type: fc.oneof(fc.constantFrom('INSTANCE', 'all', 'unknown', 'lower'), nastyString),
  },
  '/resource_providers/{uuid}/inventories': {},
};

const PARAM: Record<string, fc.Arbitrary<string>> = {
  uuid: pools.uuid,
  consumer_uuid: pools.uuid,
  name: fc.oneof(pools.custom, pools.upper),
  resource_class: pools.upper,
};

const VERSIONS = [
  'latest',
  '1.0',
  '1.1',
  '1.2',
  '1.5',
  '1.7',
  '1.8',
  '1.10',
  '1.12',
  '1.13',
  '1.14',
  '1.15',
  '1.17',
  '1.19',
  '1.20',
  '1.21',
  '1.22',
  '1.25',
  '1.28',
  '1.31',
  '1.33',
  '1.34',
  '1.36',
  '1.37',
  '1.38',
  '1.39',
];
const versionHeader = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...VERSIONS).map((v) => `placement ${v}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'placement 1.40',
      'placement 2.0',
      'placement 1.x',
      'placement',
      'compute 1.2',
      'placement 1.99999999999999999999',
      '',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);
const identity: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ 'x-auth-token': 'admin' }) },
  { weight: 1, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { 'x-auth-token': 'user', 'x-roles': 'reader', 'x-project-id': 'project-a' },
      { 'x-auth-token': 'user', 'x-roles': 'admin', 'openstack-system-scope': 'all' },
      { 'x-auth-token': 'user' },
    ),
  },
  { weight: 1, arbitrary: fc.record({ 'x-auth-token': headerValue, 'x-roles': headerValue, 'x-project-id': headerValue }) },
);

interface Spec {
  path: string;
  methods: readonly string[];
}
function caseFor(route: Spec): fc.Arbitrary<RawReq> {
  const segs = route.path.split('/').filter(Boolean);
  const path = fc
    .tuple(...segs.map((s) => (s.startsWith('{') ? pathSegment(PARAM[s.slice(1, -1)] ?? pools.text) : fc.constant(s))))
    .map((xs) => `/${xs.join('/')}`);
  const keys = QUERY[route.path] ?? {};
  return fc
    .record({
      method: fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom(...route.methods) },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS') },
      ),
      path,
      query: fc.oneof({ weight: 2, arbitrary: fc.constant('') }, { weight: 3, arbitrary: queryString(keys) }),
      version: versionHeader,
      accept: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: fc.constantFrom('text/html', '*/*', 'application/xml', '') },
        { weight: 1, arbitrary: headerValue },
      ),
      contentType: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin-1', '') },
        { weight: 1, arbitrary: headerValue },
      ),
      id: identity,
      body: fc.oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: rawBody(BODIES[`PUT ${route.path}`] ?? BODIES[`POST ${route.path}`] ?? [], pools) },
      ),
    })
    .map((c) => {
      const headers: Record<string, string> = { ...c.id };
      if (c.version) headers['openstack-api-version'] = c.version;
      if (c.accept) headers.accept = c.accept;
      if (c.body && c.contentType) headers['content-type'] = c.contentType;
      const full = c.query ? `${c.path}?${c.query}` : c.path;
      // node's parser rejects an oversized HEAD in a way its client cannot read back (the local gateway stand-in)
      return { method: c.method === 'HEAD' && full.length > 8000 ? 'GET' : c.method, path: full, headers, body: c.body };
    });
}

/** A refusal is Placement's error document (JSON errors[] with the status), or the gateway's own. */
function checkErrorFormat(req: RawReq, res: RawRes, what: string): void {
  if (gatewayError(res)) return;
  const ct = String(res.headers['content-type'] ?? '');
  if (!ct.startsWith('application/json') || req.method === 'HEAD') return; // HTML / plain renderings for other Accept headers
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new Error(`error body is not JSON: ${what}`);
  }
  if (res.status === 401 && body.code === '401 Unauthorized') return; // the auth middleware's own document, as upstream
  if (body.errors?.[0]?.status !== res.status) throw new Error(`not a Placement error document: ${what}`);
}

const settings = fuzzSettings(Number(process.env.FUZZ_PLACEMENT_RUNS) || 1500);
const saved = process.env.PLACEMENT_POLICY_MODE;

beforeAll(async () => {
  // the real handlers behind the local gateway, every DynamoDB request recorded per family
  await useTable({ PLACEMENT_POLICY_MODE: 'default' });
  const { PLACEMENT_DEFAULT_FAMILY } = await import('../../functions/placement/routes.js');
  const { PLACEMENT_FAMILY_MODULES } = await import('../../functions/placement/index.js');
  const { handlersOf } = await import('../../functions/http/family.js');
  const handlers = handlersOf(PLACEMENT_FAMILY_MODULES);
  const s = await serveRecorded('placement', PLACEMENT_ROUTES, handlers as never, PLACEMENT_DEFAULT_FAMILY);
  server = s.server;
  api = client(s.url, async () => {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  });
  table = process.env.TABLE_NAME!;
  endpoint = process.env.DDB_ENDPOINT!;
  const ok = async (m: string, p: string, body?: unknown, version?: string) => {
    const r = await api.req(m, p, { body, version });
    expect(r.status, `${m} ${p}: ${r.text}`).toBeLessThan(300);
    return r;
  };
  await ok('PUT', `/resource_classes/${CLASS}`);
  await ok('PUT', `/traits/${TRAIT}`);
  await ok('POST', '/resource_providers', { name: 'fuzz-root', uuid: ids.root });
  await ok('POST', '/resource_providers', { name: 'fuzz-child', uuid: ids.child, parent_provider_uuid: ids.root });
  await ok('POST', '/resource_providers', { name: 'fuzz-other', uuid: ids.other });
  await ok('PUT', `/resource_providers/${ids.root}/inventories`, {
    resource_provider_generation: 0,
    inventories: { VCPU: { total: 64 }, MEMORY_MB: { total: 65536 }, [CLASS]: { total: 10 } },
  });
  await ok('PUT', `/resource_providers/${ids.child}/inventories`, { resource_provider_generation: 0, inventories: { DISK_GB: { total: 1000 } } });
  await ok('PUT', `/resource_providers/${ids.root}/traits`, { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX', TRAIT] });
  await ok('PUT', `/resource_providers/${ids.root}/aggregates`, { resource_provider_generation: 2, aggregates: [ids.agg] });
  await ok('PUT', `/allocations/${ids.consumer}`, {
    allocations: { [ids.root]: { resources: { VCPU: 2 } }, [ids.child]: { resources: { DISK_GB: 10 } } },
    project_id: 'project-a',
    user_id: 'user-a',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });
});
afterAll(async () => {
  if (saved === undefined) delete process.env.PLACEMENT_POLICY_MODE;
  else process.env.PLACEMENT_POLICY_MODE = saved;
  resetConfig();
  await api?.close();
});

it(
  `every route: no 5xx, and a refused request changes nothing (${settings.runs} cases, seed ${settings.seed})`,
  async () => {
    const stats = newStats();
    let state = await tableState(endpoint, table);
    const anyRoute = fc.constantFrom(...PLACEMENT_ROUTES).chain((r) => caseFor(r));
    const unknownPath = fc.tuple(fc.array(pathSegment(pools.text), { minLength: 1, maxLength: 4 }), fc.constantFrom('GET', 'POST', 'PUT')).map(
      ([segs, method]): RawReq => ({
        method,
        path: `/${segs.join('/')}`,
        headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', accept: 'application/json' },
      }),
    );
    await runFuzz('placement', fc.oneof({ weight: 20, arbitrary: anyRoute }, { weight: 1, arbitrary: unknownPath }), settings, stats, async (req) => {
      stats.cases++;
      const res = await send(api.url, req);
      stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
      const what = describeReq(req, res);
      if (res.status >= 500) throw new Error(`5xx: ${what}`);
      const after = await tableState(endpoint, table);
      if (res.status >= 400) {
        if (after !== state) throw new Error(`state changed after ${what}\n${stateDiff(state, after)}`);
        checkErrorFormat(req, res, what);
      }
      state = after;
    });
    expect(stats.cases).toBeGreaterThanOrEqual(settings.runs);
  },
  fuzzTimeout(settings),
);

it('lone surrogates in stored strings are a 4xx, never a 500, and nothing is stored', async () => {
  for (const name of ['\ud800', 'a\udc00', 'x\ud83d']) {
    const body = Buffer.from(`{"name": ${JSON.stringify(name)}}`);
    const before = await tableState(endpoint, table);
    const r = await send(api.url, {
      method: 'POST',
      path: '/resource_providers',
      headers: {
        'x-auth-token': 'admin',
        'openstack-api-version': 'placement latest',
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body,
    });
    expect(r.status, r.text).toBe(400);
    expect(await tableState(endpoint, table)).toBe(before);
  }
  // a well-formed astral character is fine
  const ok = await api.req('POST', '/resource_providers', { body: { name: `fuzz-😀-${randomUUID()}` } });
  expect(ok.status).toBe(200);
});

it('encodeSegment encodes lone surrogates as WTF-8 (the helper the cases rely on)', () => {
  expect(encodeSegment('\ud800')).toBe('%ED%A0%80');
  expect(encodeSegment('é')).toBe('%C3%A9');
});

it('every DynamoDB request the fuzzed handlers made is allowed by their family’s IAM rules', () => {
  expect(calls.length).toBeGreaterThan(100);
  expect(denied(calls, PLACEMENT_ACCESS)).toEqual([]);
});
