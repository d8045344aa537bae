/**
 * Placement's RBAC persona matrix over HTTP, for EVERY route, in `secure-rbac` and
 * `legacy-rbac` modes (the behaviour upstream master's *-secure-rbac / *-legacy-rbac
 * gabbits encode; only two of those files are visible here).
 *
 * The expectations are written out from master's check strings, independently of the
 * engine: the rule kinds are
 *   admin_or_service  `role:admin or role:service`           (almost every API)
 *   service           `role:service`                         (POST /reshaper)
 *   usages            `project_reader_api or admin_or_service` with target
 *                     {project_id: <the queried project>}    (GET /usages)
 * all scoped to `project` with scope enforced (a system-scoped token is refused), and in
 * legacy-rbac each OR-ed with the deprecated `role:admin`.
 *
 * An allowed persona gets the route's success status from a real request; a denied
 * one gets 403 with Placement's policy message and nothing changes (the whole table
 * compared before and after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api, type Res } from '../harness.js';
import { tableState } from '../../fuzz/harness.js';
import { resetConfig } from '../../../functions/config.js';

const PROJECT = 'project-a';
const OTHER = 'project-b';

type Persona = 'admin' | 'service' | 'systemAdmin' | 'systemReader' | 'projectAdmin' | 'projectMember' | 'projectReader' | 'otherReader';
const HEADERS: Record<Persona, Record<string, string>> = {
  admin: { 'x-auth-token': 'user', 'x-roles': 'admin', 'x-project-id': 'admin_project_id' },
  service: { 'x-auth-token': 'user', 'x-roles': 'service', 'x-project-id': 'service_project_id' },
  systemAdmin: { 'x-auth-token': 'user', 'x-roles': 'admin,member,reader', 'openstack-system-scope': 'all' },
  systemReader: { 'x-auth-token': 'user', 'x-roles': 'reader', 'openstack-system-scope': 'all' },
  projectAdmin: { 'x-auth-token': 'user', 'x-roles': 'admin,member,reader', 'x-project-id': PROJECT },
  projectMember: { 'x-auth-token': 'user', 'x-roles': 'member,reader', 'x-project-id': PROJECT },
  projectReader: { 'x-auth-token': 'user', 'x-roles': 'reader', 'x-project-id': PROJECT },
  otherReader: { 'x-auth-token': 'user', 'x-roles': 'reader', 'x-project-id': OTHER },
};
const PERSONAS = Object.keys(HEADERS) as Persona[];

type Kind = 'none' | 'admin_or_service' | 'service' | 'usages';
type Mode = 'secure-rbac' | 'legacy-rbac';

/** Who may call a rule of this kind, spelled out from master's defaults. */
function allowed(kind: Kind, mode: Mode, p: Persona): boolean {
  if (kind === 'none') return true;
  // every rule is scope_types=['project'] and scope is enforced in both modes
  if (p === 'systemAdmin' || p === 'systemReader') return false;
  const hasAdmin = p === 'admin' || p === 'projectAdmin';
  if (mode === 'legacy-rbac' && hasAdmin) return true; // deprecated `role:admin`
  switch (kind) {
    case 'admin_or_service':
      return hasAdmin || p === 'service';
    case 'service':
      return p === 'service';
    case 'usages':
      // readers of the queried project (PROJECT); project admin/member carry `reader`
      return hasAdmin || p === 'service' || p === 'projectMember' || p === 'projectReader';
  }
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
  version?: string;
}
interface Route {
  method: string;
  path: string;
  rule: string;
  kind: Kind;
  ok: number;
  /** builds the request, creating whatever it consumes (as the fixture admin) */
  call: () => Promise<Call>;
}

let api: Api;
let rp: string; // a provider with inventory, a trait and an aggregate
let consumer: string; // a consumer with allocations on rp, project PROJECT
const CLASS = `CUSTOM_PM_${randomUUID().slice(0, 8).toUpperCase().replace(/-/g, '')}`;
const TRAIT = `CUSTOM_PMT_${randomUUID().slice(0, 8).toUpperCase().replace(/-/g, '')}`;

const adminReq = (method: string, path: string, body?: unknown) => api.req(method, path, { body });
async function ok(r: Promise<Res>, status: number): Promise<Res> {
  const res = await r;
  expect(res.status, res.text).toBe(status);
  return res;
}
async function newProvider(inventory = false): Promise<string> {
  const uuid = randomUUID();
  await ok(adminReq('POST', '/resource_providers', { name: `pm-${uuid}`, uuid }), 200);
  if (inventory)
    await ok(
      adminReq('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } }),
      200,
    );
  return uuid;
}
async function generation(uuid: string): Promise<number> {
  return (await ok(adminReq('GET', `/resource_providers/${uuid}`), 200)).json.generation;
}
function allocBody(provider: string) {
  return {
    allocations: { [provider]: { resources: { VCPU: 1 } } },
    project_id: PROJECT,
    user_id: 'u1',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  };
}
async function newConsumer(): Promise<string> {
  const c = randomUUID();
  await ok(adminReq('PUT', `/allocations/${c}`, allocBody(rp)), 204);
  return c;
}
const name = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;

const ROUTES: Route[] = [
  { method: 'GET', path: '/', rule: '(none)', kind: 'none', ok: 200, call: async () => ({ method: 'GET', path: '/' }) },
  // Berth's own OpenAPI document: any authenticated caller
  { method: 'GET', path: '/openapi.json', rule: '(none)', kind: 'none', ok: 200, call: async () => ({ method: 'GET', path: '/openapi.json' }) },
  // resource classes
  {
    method: 'GET',
    path: '/resource_classes',
    rule: 'placement:resource_classes:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: '/resource_classes' }),
  },
  {
    method: 'POST',
    path: '/resource_classes',
    rule: 'placement:resource_classes:create',
    kind: 'admin_or_service',
    ok: 201,
    call: async () => ({ method: 'POST', path: '/resource_classes', body: { name: name('CUSTOM_PMC') } }),
  },
  {
    method: 'GET',
    path: '/resource_classes/{name}',
    rule: 'placement:resource_classes:show',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_classes/${CLASS}` }),
  },
  {
    method: 'PUT',
    path: '/resource_classes/{name}',
    rule: 'placement:resource_classes:update',
    kind: 'admin_or_service',
    ok: 201,
    call: async () => ({ method: 'PUT', path: `/resource_classes/${name('CUSTOM_PMC')}` }),
  },
  {
    method: 'DELETE',
    path: '/resource_classes/{name}',
    rule: 'placement:resource_classes:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => {
      const n = name('CUSTOM_PMC');
      await ok(adminReq('PUT', `/resource_classes/${n}`), 201);
      return { method: 'DELETE', path: `/resource_classes/${n}` };
    },
  },
  // resource providers
  {
    method: 'GET',
    path: '/resource_providers',
    rule: 'placement:resource_providers:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: '/resource_providers' }),
  },
  {
    method: 'POST',
    path: '/resource_providers',
    rule: 'placement:resource_providers:create',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'POST', path: '/resource_providers', body: { name: `pm-${randomUUID()}` } }),
  },
  {
    method: 'GET',
    path: '/resource_providers/{uuid}',
    rule: 'placement:resource_providers:show',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}` }),
  },
  {
    method: 'PUT',
    path: '/resource_providers/{uuid}',
    rule: 'placement:resource_providers:update',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'PUT', path: `/resource_providers/${await newProvider()}`, body: { name: `pm-${randomUUID()}` } }),
  },
  {
    method: 'DELETE',
    path: '/resource_providers/{uuid}',
    rule: 'placement:resource_providers:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'DELETE', path: `/resource_providers/${await newProvider()}` }),
  },
  // inventories
  {
    method: 'GET',
    path: '/resource_providers/{uuid}/inventories',
    rule: 'placement:resource_providers:inventories:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}/inventories` }),
  },
  {
    method: 'POST',
    path: '/resource_providers/{uuid}/inventories',
    rule: 'placement:resource_providers:inventories:create',
    kind: 'admin_or_service',
    ok: 201,
    call: async () => ({
      method: 'POST',
      path: `/resource_providers/${await newProvider()}/inventories`,
      body: { resource_class: 'VCPU', total: 4 },
    }),
  },
  {
    method: 'PUT',
    path: '/resource_providers/{uuid}/inventories',
    rule: 'placement:resource_providers:inventories:update',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({
      method: 'PUT',
      path: `/resource_providers/${await newProvider()}/inventories`,
      body: { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } },
    }),
  },
  {
    method: 'DELETE',
    path: '/resource_providers/{uuid}/inventories',
    rule: 'placement:resource_providers:inventories:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'DELETE', path: `/resource_providers/${await newProvider(true)}/inventories` }),
  },
  {
    method: 'GET',
    path: '/resource_providers/{uuid}/inventories/{resource_class}',
    rule: 'placement:resource_providers:inventories:show',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}/inventories/VCPU` }),
  },
  {
    method: 'PUT',
    path: '/resource_providers/{uuid}/inventories/{resource_class}',
    rule: 'placement:resource_providers:inventories:update',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => {
      const u = await newProvider(true);
      return {
        method: 'PUT',
        path: `/resource_providers/${u}/inventories/VCPU`,
        body: { resource_provider_generation: await generation(u), total: 16 },
      };
    },
  },
  {
    method: 'DELETE',
    path: '/resource_providers/{uuid}/inventories/{resource_class}',
    rule: 'placement:resource_providers:inventories:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'DELETE', path: `/resource_providers/${await newProvider(true)}/inventories/VCPU` }),
  },
  // provider usages, aggregates, allocations, traits
  {
    method: 'GET',
    path: '/resource_providers/{uuid}/usages',
    rule: 'placement:resource_providers:usages',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}/usages` }),
  },
  {
    method: 'GET',
    path: '/resource_providers/{uuid}/aggregates',
    rule: 'placement:resource_providers:aggregates:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}/aggregates` }),
  },
  {
    method: 'PUT',
    path: '/resource_providers/{uuid}/aggregates',
    rule: 'placement:resource_providers:aggregates:update',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({
      method: 'PUT',
      path: `/resource_providers/${await newProvider()}/aggregates`,
      body: { aggregates: [randomUUID()], resource_provider_generation: 0 },
    }),
  },
  {
    method: 'GET',
    path: '/resource_providers/{uuid}/allocations',
    rule: 'placement:resource_providers:allocations:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}/allocations` }),
  },
  {
    method: 'GET',
    path: '/resource_providers/{uuid}/traits',
    rule: 'placement:resource_providers:traits:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/resource_providers/${rp}/traits` }),
  },
  {
    method: 'PUT',
    path: '/resource_providers/{uuid}/traits',
    rule: 'placement:resource_providers:traits:update',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({
      method: 'PUT',
      path: `/resource_providers/${await newProvider()}/traits`,
      body: { traits: ['HW_CPU_X86_AVX', TRAIT], resource_provider_generation: 0 },
    }),
  },
  {
    method: 'DELETE',
    path: '/resource_providers/{uuid}/traits',
    rule: 'placement:resource_providers:traits:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => {
      const u = await newProvider();
      await ok(adminReq('PUT', `/resource_providers/${u}/traits`, { traits: [TRAIT], resource_provider_generation: 0 }), 200);
      return { method: 'DELETE', path: `/resource_providers/${u}/traits` };
    },
  },
  // allocations
  {
    method: 'POST',
    path: '/allocations',
    rule: 'placement:allocations:manage',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'POST', path: '/allocations', body: { [randomUUID()]: allocBody(rp) } }),
  },
  {
    method: 'GET',
    path: '/allocations/{consumer_uuid}',
    rule: 'placement:allocations:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/allocations/${consumer}` }),
  },
  {
    method: 'PUT',
    path: '/allocations/{consumer_uuid}',
    rule: 'placement:allocations:update',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'PUT', path: `/allocations/${randomUUID()}`, body: allocBody(rp) }),
  },
  {
    method: 'DELETE',
    path: '/allocations/{consumer_uuid}',
    rule: 'placement:allocations:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'DELETE', path: `/allocations/${await newConsumer()}` }),
  },
  {
    method: 'GET',
    path: '/allocation_candidates',
    rule: 'placement:allocation_candidates:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: '/allocation_candidates?resources=VCPU:1' }),
  },
  // traits
  {
    method: 'GET',
    path: '/traits',
    rule: 'placement:traits:list',
    kind: 'admin_or_service',
    ok: 200,
    call: async () => ({ method: 'GET', path: '/traits' }),
  },
  {
    method: 'GET',
    path: '/traits/{name}',
    rule: 'placement:traits:show',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => ({ method: 'GET', path: `/traits/${TRAIT}` }),
  },
  {
    method: 'PUT',
    path: '/traits/{name}',
    rule: 'placement:traits:update',
    kind: 'admin_or_service',
    ok: 201,
    call: async () => ({ method: 'PUT', path: `/traits/${name('CUSTOM_PMT')}` }),
  },
  {
    method: 'DELETE',
    path: '/traits/{name}',
    rule: 'placement:traits:delete',
    kind: 'admin_or_service',
    ok: 204,
    call: async () => {
      const t = name('CUSTOM_PMT');
      await ok(adminReq('PUT', `/traits/${t}`), 201);
      return { method: 'DELETE', path: `/traits/${t}` };
    },
  },
  // usages (target: the queried project) and reshaper (service only)
  {
    method: 'GET',
    path: '/usages',
    rule: 'placement:usages',
    kind: 'usages',
    ok: 200,
    call: async () => ({ method: 'GET', path: `/usages?project_id=${PROJECT}` }),
  },
  {
    method: 'POST',
    path: '/reshaper',
    rule: 'placement:reshaper:reshape',
    kind: 'service',
    ok: 204,
    call: async () => ({
      method: 'POST',
      path: '/reshaper',
      body: { inventories: { [await newProvider()]: { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } } }, allocations: {} },
    }),
  },
];

/** Everything a denied request might have changed: the whole table, item by item. */
async function state(_call: Call): Promise<string> {
  return tableState(process.env.DDB_ENDPOINT!, process.env.TABLE_NAME!);
}

const savedEnv = process.env.PLACEMENT_POLICY_MODE;
beforeAll(async () => {
  api = await startPlacement({ PLACEMENT_POLICY_MODE: 'default' });
  rp = await newProvider(true);
  await ok(
    adminReq('PUT', `/resource_providers/${rp}/inventories`, {
      resource_provider_generation: await generation(rp),
      inventories: { VCPU: { total: 100000 } },
    }),
    200,
  );
  await ok(adminReq('PUT', `/resource_classes/${CLASS}`), 201);
  await ok(adminReq('PUT', `/traits/${TRAIT}`), 201);
  await ok(adminReq('PUT', `/resource_providers/${rp}/traits`, { traits: [TRAIT], resource_provider_generation: await generation(rp) }), 200);
  await ok(
    adminReq('PUT', `/resource_providers/${rp}/aggregates`, { aggregates: [randomUUID()], resource_provider_generation: await generation(rp) }),
    200,
  );
  consumer = await newConsumer();
});
afterAll(async () => {
  if (savedEnv === undefined) delete process.env.PLACEMENT_POLICY_MODE;
  else process.env.PLACEMENT_POLICY_MODE = savedEnv;
  resetConfig();
  await api.close();
});

it('covers every Placement route', async () => {
  const { PLACEMENT_ROUTES } = await import('../../../functions/placement/routes.js');
  const all = PLACEMENT_ROUTES.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).sort();
  expect(ROUTES.map((r) => `${r.method} ${r.path}`).sort()).toEqual(all);
});

it('names every rule the handlers use, and only registered rules', async () => {
  const { PLACEMENT_RULES } = await import('../../../functions/placement/policy.js');
  const registered = new Set(PLACEMENT_RULES.map((r) => r.name));
  for (const r of ROUTES) if (r.kind !== 'none') expect(registered.has(r.rule), r.rule).toBe(true);
  // every API rule of upstream is exercised by some route
  const used = new Set(ROUTES.map((r) => r.rule));
  const apiRules = [...registered].filter((n) => n.startsWith('placement:'));
  expect(apiRules.filter((n) => !used.has(n))).toEqual([]);
});

for (const mode of ['secure-rbac', 'legacy-rbac'] as const) {
  describe(`${mode} persona matrix`, () => {
    beforeAll(() => {
      process.env.PLACEMENT_POLICY_MODE = mode;
      resetConfig();
    });
    afterAll(() => {
      process.env.PLACEMENT_POLICY_MODE = 'default';
      resetConfig();
    });
    for (const route of ROUTES) {
      const who = PERSONAS.map((p) => `${p}:${allowed(route.kind, mode, p) ? 'y' : 'n'}`).join(' ');
      it(`${route.method} ${route.path} (${route.kind}) ${who}`, async () => {
        for (const p of PERSONAS) {
          const c = await route.call();
          const yes = allowed(route.kind, mode, p);
          const before = yes ? undefined : await state(c);
          const res = await api.req(c.method, c.path, { body: c.body, token: '', headers: HEADERS[p], version: c.version });
          if (yes) {
            expect(res.status, `${p} ${c.method} ${c.path}: ${res.text}`).toBe(route.ok);
          } else {
            expect(res.status, `${p} ${c.method} ${c.path}: ${res.text}`).toBe(403);
            expect(res.json.errors[0].detail).toContain(`Policy does not allow ${route.rule} to be performed.`);
            expect(await state(c), `${p} ${c.method} ${c.path} changed state`).toEqual(before);
          }
        }
      });
    }
  });
}

describe('GET /usages targets the queried project', () => {
  beforeAll(() => {
    process.env.PLACEMENT_POLICY_MODE = 'secure-rbac';
    resetConfig();
  });
  afterAll(() => {
    process.env.PLACEMENT_POLICY_MODE = 'default';
    resetConfig();
  });
  it('a project reader reads its own project only, and sees the real totals', async () => {
    const own = await api.req('GET', `/usages?project_id=${PROJECT}`, { token: '', headers: HEADERS.projectReader, version: '1.9' });
    expect(own.status).toBe(200);
    expect(own.json.usages.VCPU).toBeGreaterThanOrEqual(1);
    const other = await api.req('GET', `/usages?project_id=${PROJECT}`, { token: '', headers: HEADERS.otherReader });
    expect(other.status).toBe(403);
    const theirs = await api.req('GET', `/usages?project_id=${OTHER}`, { token: '', headers: HEADERS.otherReader });
    expect(theirs.status).toBe(200);
    expect(theirs.json.usages).toEqual({});
    // no project_id: the target has none, so a reader is refused before the query is validated
    const none = await api.req('GET', '/usages', { token: '', headers: HEADERS.projectReader });
    expect(none.status).toBe(403);
  });
});
