/**
 * Property-based HTTP fuzzing of EVERY bare-metal route (Ironic-compatible nodes and
 * allocations): generated methods, paths with valid and invalid node / allocation
 * idents (uuids, names, garbage), query strings, headers (API versions, identities)
 * and bodies derived from the request schemas (node, JSON patch, traits, states,
 * allocation), then mutated, plus raw garbage bytes.
 * Properties: never a 5xx; a refused request (4xx) leaves the whole table unchanged
 * (asynchronous executions started by accepted requests are let finish first) and
 * answers in Ironic's error format.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { availableNode, startBaremetal, type BmApi } from '../integration/baremetal/harness.js';
import { NODE_JSON, NODE_PATCH_FIELDS } from '../../schemas/baremetal/nodes.js';
import { ALLOCATION_JSON } from '../../schemas/baremetal/allocations.js';
import { RAID_CONFIG_JSON, VIF_JSON } from '../../schemas/baremetal/raid.js';
import { BAREMETAL_ROUTES } from '../../functions/baremetal/routes.js';
import { calls, denied, installRecorder } from '../integration/security/ddb-recorder.js';
import { baremetalFamilyRules } from '../../cdk/lib/permissions.js';
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
import { anyJson, bodyDoc, headerValue, nastyString, pathSegment, queryString, rawBody, renderJson, type Pools } from './arbitraries.js';

let api: BmApi;
let table: string;
let endpoint: string;
const ids = { nodes: [] as string[], names: ['fuzz-node-0', 'fuzz-node-1', 'fuzz-node-2'], allocations: [] as string[] };

const uuidPool = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...ids.nodes, ...ids.allocations) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-000000000000', ids.nodes[0]!.toUpperCase()) },
    { weight: 1, arbitrary: nastyString },
  );
const identPool = () => fc.oneof({ weight: 3, arbitrary: uuidPool() }, { weight: 2, arbitrary: fc.constantFrom(...ids.names, 'alloc-fuzz') });
let pools: Pools;

const TRAITS = ['CUSTOM_FUZZ', 'HW_CPU_X86_AVX', 'CUSTOM_GOLD'];
const patchDoc = (fields: readonly string[]) =>
  fc.array(
    fc.record(
      {
        op: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('add', 'replace', 'remove') },
          { weight: 1, arbitrary: fc.constantFrom('move', 'copy', 'test', 'bogus') },
        ),
        path: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...fields).map((f) => `/${f}`) },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              '/extra/a',
              '/properties/cpus',
              '/instance_info/x',
              '/driver_info/ipmi_address',
              '/uuid',
              '/provision_state',
              '/',
              '',
              'name',
              '/extra/a/b/c',
            ),
          },
          { weight: 1, arbitrary: nastyString },
        ),
        value: anyJson,
      },
      { requiredKeys: ['op', 'path'] },
    ),
    { maxLength: 3 },
  );

function bodiesFor(method: string, path: string): fc.Arbitrary<unknown> | undefined {
  const key = `${method} ${path}`;
  switch (key) {
    case 'POST /v1/nodes':
      return bodyDoc([NODE_JSON], pools);
    case 'PATCH /v1/nodes/{node}':
      return patchDoc([...NODE_PATCH_FIELDS, 'driver', 'maintenance', 'protected', 'protected_reason']);
    case 'PUT /v1/nodes/{node}/traits':
      return bodyDoc(
        [{ type: 'object', properties: { traits: { type: 'array', items: { type: 'string', pattern: '^CUSTOM_[A-Z0-9_]+$' } } } }],
        pools,
      );
    case 'PUT /v1/nodes/{node}/states/power':
      return fc.record(
        {
          target: fc.oneof(fc.constantFrom('power on', 'power off', 'rebooting', 'soft power off', 'bogus'), nastyString),
          timeout: fc.oneof(fc.constantFrom(1, 0, -1, 2147483648, 2 ** 53 + 2), anyJson),
        },
        { requiredKeys: ['target'] },
      );
    case 'PUT /v1/nodes/{node}/states/provision':
      return fc.record(
        {
          target: fc.oneof(
            fc.constantFrom('manage', 'provide', 'active', 'deleted', 'rebuild', 'inspect', 'clean', 'adopt', 'abort', 'rescue', 'unrescue', 'bogus'),
            nastyString,
          ),
          configdrive: anyJson,
          clean_steps: anyJson,
          disable_ramdisk: anyJson,
        },
        { requiredKeys: ['target'] },
      );
    case 'PUT /v1/nodes/{node}/maintenance':
      return fc.record({ reason: fc.oneof(nastyString, anyJson) }, { requiredKeys: [] });
    case 'PUT /v1/nodes/{node}/states/raid':
      return bodyDoc([RAID_CONFIG_JSON], pools);
    case 'POST /v1/nodes/{node}/vifs':
      return bodyDoc([VIF_JSON], pools);
    case 'POST /v1/allocations':
      return bodyDoc([ALLOCATION_JSON], pools);
    case 'PATCH /v1/allocations/{allocation}':
      return patchDoc(['name', 'extra', 'extra/a', 'owner', 'node', 'uuid']);
    default:
      return undefined;
  }
}

const NODE_LIST_KEYS = [
  'chassis_uuid',
  'instance_uuid',
  'associated',
  'maintenance',
  'retired',
  'provision_state',
  'marker',
  'limit',
  'sort_key',
  'sort_dir',
  'driver',
  'resource_class',
  'fault',
  'conductor_group',
  'conductor',
  'owner',
  'lessee',
  'description_contains',
  'fields',
  'detail',
  'shard',
  'sharded',
  'parent_node',
  'include_children',
];
const ALLOC_LIST_KEYS = ['node', 'resource_class', 'state', 'marker', 'limit', 'sort_key', 'sort_dir', 'fields', 'owner'];
const queryValue = () =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'true',
        'false',
        'True',
        '1',
        '0',
        '-1',
        '2147483648',
        '99999999999999999999',
        'asc',
        'desc',
        'name',
        'uuid',
        'id',
        'created_at',
        'available',
        'name,uuid',
        'bogus',
        '',
      ),
    },
    { weight: 2, arbitrary: uuidPool() },
    { weight: 1, arbitrary: nastyString },
  );
const queryKeys = (path: string): Record<string, fc.Arbitrary<string>> => {
  const names =
    path === '/v1/nodes' || path === '/v1/nodes/detail'
      ? NODE_LIST_KEYS
      : path === '/v1/allocations'
        ? ALLOC_LIST_KEYS
        : path === '/v1/drivers'
          ? ['type', 'detail', 'fields']
          : path.endsWith('/validate')
            ? ['node_uuid']
            : ['fields'];
  return Object.fromEntries(names.map((k) => [k, queryValue()]));
};

const VERSIONS = ['1.1', '1.2', '1.20', '1.31', '1.37', '1.50', '1.52', '1.58', '1.60', '1.65', '1.69', '1.75', '1.78', '1.80', 'latest'];
const identity: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { 'x-project-id': 'proj-a', 'x-roles': 'member,reader' },
      { 'openstack-system-scope': 'all', 'x-roles': 'admin' },
    ),
  },
  { weight: 1, arbitrary: fc.record({ 'x-project-id': headerValue, 'x-roles': headerValue }) },
);

function caseFor(route: { path: string; methods: readonly string[] }): fc.Arbitrary<RawReq> {
  const segs = route.path.split('/').filter(Boolean);
  const path = fc
    .tuple(
      ...segs.map((s) =>
        s === '{node}' || s === '{allocation}' || s === '{vif}'
          ? pathSegment(identPool())
          : s === '{trait}'
            ? pathSegment(fc.constantFrom(...TRAITS, 'lower'))
            : s === '{driver}'
              ? pathSegment(fc.oneof(fc.constantFrom('fake-hardware', 'ipmi', 'FAKE-HARDWARE'), nastyString))
              : fc.constant(s),
      ),
    )
    .map((xs) => `/${xs.join('/')}`);
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...route.methods) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'HEAD') },
  );
  return method.chain((method) => {
    const body = bodiesFor(method, route.path);
    return fc
      .record({
        method: fc.constant(method),
        path,
        query: fc.oneof({ weight: 2, arbitrary: fc.constant('') }, { weight: 2, arbitrary: queryString(queryKeys(route.path)) }),
        version: fc.oneof(
          { weight: 10, arbitrary: fc.constantFrom(...VERSIONS) },
          { weight: 10, arbitrary: fc.constantFrom('latest', '1.80', '1.75', '1.60') },
          { weight: 1, arbitrary: fc.constantFrom('', '1.0', '1.81', '2.1', 'x', '1.') },
          { weight: 1, arbitrary: headerValue },
        ),
        contentType: fc.oneof(
          { weight: 10, arbitrary: fc.constant('application/json') },
          { weight: 1, arbitrary: fc.constantFrom('text/plain', '') },
        ),
        id: identity,
        body: body
          ? fc.oneof(
              { weight: 6, arbitrary: body.map((d) => Buffer.from(renderJson(d))) },
              { weight: 2, arbitrary: rawBody([], pools) },
              { weight: 1, arbitrary: fc.constant(undefined) },
            )
          : fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rawBody([], pools) }),
      })
      .map((c): RawReq => {
        const headers: Record<string, string> = { ...c.id, accept: 'application/json' };
        if (c.version) headers['x-openstack-ironic-api-version'] = c.version;
        if (c.body && c.contentType) headers['content-type'] = c.contentType;
        const full = c.query ? `${c.path}?${c.query}` : c.path;
        return { method: c.method === 'HEAD' && full.length > 8000 ? 'GET' : c.method, path: full, headers, body: c.body };
      });
  });
}

/** A refusal is Ironic's error document ({"error_message": "<json>"}) or the gateway's own. */
function checkErrorFormat(req: RawReq, res: RawRes, what: string): void {
  if (gatewayError(res) || req.method === 'HEAD' || !res.text) return;
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new Error(`error body is not JSON: ${what}`);
  }
  if (typeof body.error_message !== 'string') throw new Error(`not an Ironic error document: ${what}`);
}

const settings = fuzzSettings(Number(process.env.FUZZ_BAREMETAL_RUNS) || 1000);

beforeAll(async () => {
  api = await startBaremetal();
  await installRecorder(); // every DynamoDB request, checked against the bare-metal IAM rules below
  table = process.env.TABLE_NAME!;
  endpoint = process.env.DDB_ENDPOINT!;
  for (let i = 0; i < 3; i++)
    ids.nodes.push((await availableNode(api, { name: ids.names[i], resource_class: 'fuzz-rc' }, { traits: ['CUSTOM_FUZZ'] })).uuid);
  const a = await api.req('POST', '/v1/allocations', { body: { resource_class: 'fuzz-rc', name: 'alloc-fuzz' } });
  if (a.status !== 201) throw new Error(`allocation failed: ${a.text}`);
  ids.allocations.push(a.json.uuid);
  await api.settle();
  pools = {
    uuid: uuidPool(),
    upper: fc.oneof(fc.constantFrom(...TRAITS, 'FUZZ_RC'), nastyString),
    custom: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...TRAITS) },
      { weight: 1, arbitrary: fc.stringMatching(/^CUSTOM_[A-Z0-9_]{1,12}$/) },
      { weight: 1, arbitrary: nastyString },
    ),
    text: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('fake-hardware', 'fuzz-rc', 'proj-a', ...ids.names, ids.nodes[0]!, 'CUSTOM_FUZZ') },
      { weight: 2, arbitrary: nastyString },
    ),
  };
});
afterAll(async () => {
  await api?.close();
});

it(
  'every route: no 5xx, and a refused request changes nothing',
  async () => {
    const stats = newStats();
    await api.settle();
    let state = await tableState(endpoint, table);
    const arb = fc.oneof(
      { weight: 30, arbitrary: fc.constantFrom(...BAREMETAL_ROUTES).chain((r) => caseFor(r)) },
      {
        weight: 1,
        arbitrary: fc
          .array(pathSegment(fc.constantFrom('v1', 'nodes', 'allocations', 'x')), { minLength: 1, maxLength: 5 })
          .map((s): RawReq => ({ method: 'GET', path: `/${s.join('/')}`, headers: { 'x-openstack-ironic-api-version': 'latest' } })),
      },
    );
    await runFuzz('baremetal', arb, settings, stats, async (req) => {
      stats.cases++;
      const res = await send(api.url, req);
      stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
      const what = describeReq(req, res);
      if (res.status >= 500) throw new Error(`5xx: ${what}`);
      if (process.env.FUZZ_DEBUG) process.stdout.write(`[case] ${what.slice(0, 300)}\n`);
      if (res.status < 400) await api.settle();
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

it('lone surrogates and deep nesting in a body are a 400, and nothing is stored', async () => {
  for (const raw of [
    '{"driver": "fake-hardware", "name": "\\ud800"}',
    '{"driver": "fake-hardware", "extra": {"\\udc00": 1}}',
    `{"driver": "fake-hardware", "extra": ${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`,
  ]) {
    const before = await tableState(endpoint, table);
    const r = await send(api.url, {
      method: 'POST',
      path: '/v1/nodes',
      headers: { 'x-openstack-ironic-api-version': 'latest', 'content-type': 'application/json' },
      body: Buffer.from(raw),
    });
    if (r.status !== 400 || !r.text.includes('Malformed JSON')) throw new Error(`expected 400 Malformed JSON, got ${r.status} ${r.text}`);
    if ((await tableState(endpoint, table)) !== before) throw new Error('state changed');
  }
  const ok = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', name: `fuzz-${randomUUID()}`, extra: { emoji: '😀' } } });
  if (ok.status !== 201) throw new Error(ok.text);
});

it('every DynamoDB request of the bare-metal functions stays on bare-metal items (their IAM rules)', () => {
  expect(calls.length).toBeGreaterThan(100);
  // families and steps run in one process here: check against the union of their actions
  // (and a family's read of the table's layout record)
  const all = baremetalFamilyRules('nodes', [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
  ]);
  expect(denied(calls, { '(outside a request)': all })).toEqual([]);
});
