/**
 * BAREMETAL_SCHEDULER=placement: every DynamoDB request the bare-metal families, the
 * state machines' steps and the maintenance migration make while a whole node and
 * allocation life runs (recorded per function, per item, as IAM authorises it) must be
 * allowed by that function's rules in that mode — its bare-metal actions
 * (cdk/lib/baremetal.ts) and BAREMETAL_PLACEMENT_ACCESS (cdk/lib/permissions.ts). A
 * function that starts touching a Placement item it is not granted fails here, not with
 * AccessDenied in AWS. (The default scheduler's bare-metal functions stay on bare-metal
 * items: test/fuzz/baremetal.fuzz.test.ts, test/unit/cdk/permissions.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { asFamily, calls, denied, serveRecorded } from './ddb-recorder.js';
import { activeBaremetal, useBaremetalTable, type BmApi } from '../baremetal/harness.js';
import {
  BAREMETAL_PLACEMENT_ACCESS,
  MAINTENANCE_ACCESS,
  baremetalFamilyRules,
  baremetalRules,
  type AccessRule,
} from '../../../cdk/lib/permissions.js';
import { FAMILY_ACTIONS, PLACEMENT_STEP_ACTIONS, STEP_ACTIONS } from '../../../cdk/lib/baremetal.js';

let server: Server;
let url: string;
let settle: () => Promise<void>;

beforeAll(async () => {
  await useBaremetalTable({ BAREMETAL_SCHEDULER: 'placement' });
  const { BAREMETAL_ROUTES, BAREMETAL_DEFAULT_FAMILY } = await import('../../../functions/baremetal/routes.js');
  const { BAREMETAL_FAMILY_MODULES } = await import('../../../functions/baremetal/index.js');
  const { handlersOf } = await import('../../../functions/http/family.js');
  const { localRunner } = await import('../../../local/state-machines.js');
  const s = await serveRecorded('baremetal', BAREMETAL_ROUTES, handlersOf(BAREMETAL_FAMILY_MODULES) as never, BAREMETAL_DEFAULT_FAMILY);
  server = s.server;
  url = s.url;
  const runner = localRunner();
  runner.stepContext = (step, run) => asFamily(`step ${step}`, run);
  settle = () => runner.idle();
  // the shared agreement check settles this API after every test
  activeBaremetal.api = { url, runner, settle, req: async () => ({}) as never, close: async () => undefined } as BmApi;
});
afterAll(async () => {
  server.closeAllConnections?.();
  await new Promise((r) => server.close(r));
});

async function req(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url + path, {
    method,
    headers: { 'x-openstack-ironic-api-version': '1.80', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : undefined };
}

async function node(rc: string, name?: string): Promise<string> {
  const c = await req('POST', '/v1/nodes', { driver: 'fake-hardware', resource_class: rc, ...(name ? { name } : {}) });
  expect(c.status).toBe(201);
  for (const target of ['manage', 'provide']) {
    expect((await req('PUT', `/v1/nodes/${c.json.uuid}/states/provision`, { target })).status).toBe(202);
    await settle();
  }
  expect((await req('PUT', `/v1/nodes/${c.json.uuid}/states/power`, { target: 'power off' })).status).toBe(202);
  await settle();
  return c.json.uuid as string;
}

function grants(): Record<string, AccessRule[]> {
  const g: Record<string, AccessRule[]> = {};
  for (const [f, rules] of Object.entries(BAREMETAL_PLACEMENT_ACCESS.families))
    g[f] = [...baremetalFamilyRules(f, FAMILY_ACTIONS[f] ?? []), ...rules];
  for (const [s, rules] of Object.entries(BAREMETAL_PLACEMENT_ACCESS.steps)) {
    g[`step ${s}`] = [...baremetalRules([...(STEP_ACTIONS[s] ?? []), ...(PLACEMENT_STEP_ACTIONS[s] ?? [])]), ...rules];
  }
  g.maintenance = [
    ...MAINTENANCE_ACCESS,
    ...baremetalRules(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem']),
    ...BAREMETAL_PLACEMENT_ACCESS.maintenance,
  ];
  return g;
}

it('a node and allocation life, the placement scheduler: every request within its function’s rules', async () => {
  const tag = randomUUID().slice(0, 6);
  const rc = `iam-${tag}`;
  const a = await node(rc, `iam-node-${tag}`);
  const b = await node(rc);
  // traits (a custom one the catalog does not know yet), owner, maintenance, a VIF
  expect((await req('PUT', `/v1/nodes/${a}/traits`, { traits: [`CUSTOM_IAM_${tag.toUpperCase()}`] })).status).toBe(204);
  expect((await req('PATCH', `/v1/nodes/${b}`, [{ op: 'add', path: '/owner', value: 'iam-project' }])).status).toBe(200);
  expect((await req('PUT', `/v1/nodes/${b}/maintenance`, {})).status).toBe(202);
  expect((await req('DELETE', `/v1/nodes/${b}/maintenance`)).status).toBe(202);
  expect((await req('POST', `/v1/nodes/${a}/vifs`, { id: randomUUID() })).status).toBe(204);
  // allocations: one named like a node (the name look-up), one racing, one released
  const one = await req('POST', '/v1/allocations', { resource_class: rc, name: `iam-node-${tag}` });
  const two = await req('POST', '/v1/allocations', { resource_class: rc, owner: 'iam-project' });
  const three = await req('POST', '/v1/allocations', { resource_class: rc });
  expect([one.status, two.status, three.status]).toEqual([201, 201, 201]);
  await settle();
  const states = await Promise.all([one, two, three].map(async (x) => (await req('GET', `/v1/allocations/${x.json.uuid}`)).json.state));
  expect(states.filter((s) => s === 'active')).toHaveLength(2);
  // deploy and tear down (the teardown releases the consumer), delete an allocation
  expect((await req('PUT', `/v1/nodes/${a}/states/provision`, { target: 'active' })).status).toBe(202);
  await settle();
  expect((await req('PUT', `/v1/nodes/${a}/states/provision`, { target: 'deleted' })).status).toBe(202);
  await settle();
  // the allocation b holds (two, or whichever won b in the race): b must be free for the backfill
  // below, whose uuid is otherwise b's instance_uuid (an allocation that already exists: a 409)
  const onB = await req('GET', `/v1/nodes/${b}/allocation`);
  expect(onB.status).toBe(200);
  expect((await req('DELETE', `/v1/allocations/${onB.json.uuid}`)).status).toBe(204);
  // a backfill, a node deleted in maintenance with its allocation
  expect((await req('PUT', `/v1/nodes/${b}/states/provision`, { target: 'active' })).status).toBe(202);
  await settle();
  expect((await req('POST', '/v1/allocations', { node: b })).status).toBe(201);
  expect((await req('PUT', `/v1/nodes/${b}/maintenance`, {})).status).toBe(202);
  expect((await req('DELETE', `/v1/nodes/${b}`)).status).toBe(204);
  // the maintenance migration: a node written while the deployment still ran the database scheduler
  const { resetConfig } = await import('../../../functions/config.js');
  process.env.BAREMETAL_SCHEDULER = 'database';
  resetConfig();
  const old = await node(`${rc}-old`);
  process.env.BAREMETAL_SCHEDULER = 'placement';
  resetConfig();
  const { forgetSchedulerState } = await import('../../../functions/bridge/migration.js');
  const { tableName } = await import('../../../functions/store/ddb/client.js');
  const { ddb } = await import('../../../functions/store/ddb/reads.js');
  const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
  await ddb().send(new DeleteCommand({ TableName: tableName(), Key: { pk: 'META', sk: 'baremetal-scheduler' } }));
  forgetSchedulerState();
  const { runMaintenance } = await import('../../../functions/maintenance/handler.js');
  const reports = await asFamily('maintenance', () => runMaintenance());
  expect(reports.find((r) => r.task === 'baremetal-placement')).toMatchObject({ complete: true, synced: 1 });
  expect((await req('GET', `/v1/nodes/${old}`)).status).toBe(200);

  const families = new Set(calls.map((c) => c.family));
  for (const f of [
    'nodes',
    'node-traits',
    'node-states',
    'node-vifs',
    'allocations',
    'step find-candidates',
    'step reserve-node',
    'step advance-node',
    'maintenance',
  ]) {
    expect(families, f).toContain(f);
  }
  // they did touch Placement's items (the rules are not trivially met)
  expect(calls.some((c) => c.family === 'step reserve-node' && c.pk?.startsWith('CONS#'))).toBe(true);
  expect(calls.some((c) => c.family === 'step find-candidates' && c.pk?.startsWith('LOG#'))).toBe(true);
  expect(calls.some((c) => c.family === 'node-traits' && c.pk?.startsWith('TRAITS#'))).toBe(true);
  expect(
    denied(
      calls.filter((c) => c.family !== '(outside a request)'),
      grants(),
    ),
  ).toEqual([]);
});
