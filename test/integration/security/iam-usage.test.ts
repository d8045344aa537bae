/**
 * The IAM grants of cdk/lib/permissions.ts against what the code really does: every
 * DynamoDB request the Placement handlers make while serving every route (recorded
 * per family, per item, as IAM authorises it) must be allowed by that family's rules.
 * A handler that starts touching a new key prefix, action or index fails here before
 * it would fail with AccessDenied in AWS.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { client, useTable, type Api } from '../harness.js';
import { asFamily, calls, denied, serveRecorded } from './ddb-recorder.js';
import { randomUUID } from 'node:crypto';
import { placementWorkflow } from './placement-workflow.js';
import { MAINTENANCE_ACCESS, PLACEMENT_ACCESS, allows } from '../../../cdk/lib/permissions.js';

let api: Api;
let server: Server;
beforeAll(async () => {
  await useTable({ LEGACY_FLAG_TTL_MS: '0' });
  const { PLACEMENT_ROUTES, PLACEMENT_DEFAULT_FAMILY } = await import('../../../functions/placement/routes.js');
  const { PLACEMENT_FAMILY_MODULES } = await import('../../../functions/placement/index.js');
  const { handlersOf } = await import('../../../functions/http/family.js');
  const handlers = handlersOf(PLACEMENT_FAMILY_MODULES);
  const s = await serveRecorded('placement', PLACEMENT_ROUTES, handlers as never, PLACEMENT_DEFAULT_FAMILY);
  server = s.server;
  api = client(s.url, async () => undefined);
});
afterAll(async () => {
  server.closeAllConnections?.();
  await new Promise((r) => server.close(r));
});

it('every DynamoDB request of every Placement family is allowed by its IAM rules', async () => {
  const n = await placementWorkflow(api);
  expect(n).toBeGreaterThan(50);
  const families = new Set(calls.map((c) => c.family));
  // the workflow reaches every family that touches the table
  for (const f of Object.keys(PLACEMENT_ACCESS).filter((f) => PLACEMENT_ACCESS[f]!.length)) expect(families, f).toContain(f);
  expect(denied(calls, PLACEMENT_ACCESS)).toEqual([]);
});

it('the rules are not vacuous: requests outside a family’s grant are refused', () => {
  const t = PLACEMENT_ACCESS;
  expect(allows(t['allocation-candidates']!, 'dynamodb:PutItem', 'RP#x')).toBe(false);
  expect(allows(t['allocation-candidates']!, 'dynamodb:UpdateItem', 'RP#x')).toBe(false);
  expect(allows(t.traits!, 'dynamodb:GetItem', 'CONS#x')).toBe(false);
  expect(allows(t.traits!, 'dynamodb:BatchGetItem', 'CONS#x')).toBe(false);
  expect(allows(t.usages!, 'dynamodb:UpdateItem', 'RP#x')).toBe(false);
  // a provider's usages are read from its own items: never the change log
  expect(allows(t.usages!, 'dynamodb:Query', 'LOG#0')).toBe(false);
  expect(allows(t['resource-classes']!, 'dynamodb:GetItem', 'RP#x')).toBe(false);
  expect(allows(t.aggregates!, 'dynamodb:Query', 'RPS#1', 'gsi1')).toBe(false);
  expect(allows(t.root!, 'dynamodb:GetItem', 'RP#x')).toBe(false);
});

it('legacy data: claims on imported consumers and the maintenance migration stay within their rules', async () => {
  const rp = randomUUID();
  expect((await api.req('POST', '/resource_providers', { body: { name: `iam-${rp}`, uuid: rp } })).status).toBe(200);
  expect(
    (
      await api.req('PUT', `/resource_providers/${rp}/inventories`, {
        body: { resource_provider_generation: 0, inventories: { VCPU: { total: 100 } } },
      })
    ).status,
  ).toBe(200);
  const [a, b] = [randomUUID(), randomUUID()];
  // rows without consumer records, as the operators' import tool writes them (not a Lambda)
  const { importLegacyAllocations } = await import('../../../functions/store/placement/allocations.js');
  await asFamily('(import tool)', () =>
    importLegacyAllocations([
      { uuid: a, allocations: { [rp]: { VCPU: 1 } } },
      { uuid: b, allocations: { [rp]: { VCPU: 2 } } },
    ]),
  );
  // the allocations family reads a legacy consumer's rows (gsi1) when it claims for it
  const claim = await api.req('PUT', `/allocations/${a}`, {
    version: '1.28',
    body: { allocations: { [rp]: { resources: { VCPU: 3 } } }, project_id: 'p', user_id: 'u', consumer_generation: null },
  });
  expect(claim.status, claim.text).toBe(204);
  const start = calls.length;
  const { migrateIncompleteConsumers } = await import('../../../functions/maintenance/consumers.js');
  const report = await asFamily('maintenance', () => migrateIncompleteConsumers({}));
  expect(report).toMatchObject({ created: 1, done: true });
  const migration = calls.slice(start).filter((c) => c.family === 'maintenance');
  expect(migration.length).toBeGreaterThan(3);
  expect(denied(migration, { maintenance: MAINTENANCE_ACCESS })).toEqual([]);
  expect(
    denied(
      calls.filter((c) => c.family !== '(import tool)' && c.family !== 'maintenance'),
      PLACEMENT_ACCESS,
    ),
  ).toEqual([]);
  expect(calls.some((c) => c.family === 'allocations' && c.index === 'gsi1' && c.pk?.startsWith('CONSALLOC#'))).toBe(true);
});
