/**
 * The per-project limit's IAM (cdk/lib/permissions.ts RATE_LIMIT_ACCESS) against what the
 * handlers really do with RATE_LIMIT on: while the Placement workflow and a round of
 * bare-metal requests run (recorded per family, per item, as IAM authorises it), every
 * bucket write of a family must be allowed by its API's bucket rule, and that rule must
 * allow exactly the bucket writes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { client, useTable, type Api } from '../harness.js';
import { calls, denied, serveRecorded } from './ddb-recorder.js';
import { placementWorkflow } from './placement-workflow.js';
import { PLACEMENT_ACCESS, RATE_LIMIT_ACCESS, baremetalFamilyRules, type AccessRule } from '../../../cdk/lib/permissions.js';
import { FAMILY_ACTIONS } from '../../../cdk/lib/baremetal.js';

let placement: Api;
let baremetalUrl: string;
const servers: Server[] = [];

beforeAll(async () => {
  // a budget no workflow reaches: every request takes a token, none is refused
  await useTable({ RATE_LIMIT: '500:1000000' });
  const { handlersOf } = await import('../../../functions/http/family.js');
  const { PLACEMENT_ROUTES, PLACEMENT_DEFAULT_FAMILY } = await import('../../../functions/placement/routes.js');
  const { PLACEMENT_FAMILY_MODULES } = await import('../../../functions/placement/index.js');
  const p = await serveRecorded('placement', PLACEMENT_ROUTES, handlersOf(PLACEMENT_FAMILY_MODULES) as never, PLACEMENT_DEFAULT_FAMILY);
  const { BAREMETAL_ROUTES, BAREMETAL_DEFAULT_FAMILY } = await import('../../../functions/baremetal/routes.js');
  const { BAREMETAL_FAMILY_MODULES } = await import('../../../functions/baremetal/index.js');
  const b = await serveRecorded('baremetal', BAREMETAL_ROUTES, handlersOf(BAREMETAL_FAMILY_MODULES) as never, BAREMETAL_DEFAULT_FAMILY);
  servers.push(p.server, b.server);
  placement = client(p.url, async () => undefined);
  baremetalUrl = b.url;
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections?.();
    await new Promise((r) => s.close(r));
  }
});

const withBuckets = (grants: Record<string, AccessRule[]>, api: 'placement' | 'baremetal') =>
  Object.fromEntries(Object.entries(grants).map(([f, rules]) => [f, f === 'root' ? rules : [...rules, ...RATE_LIMIT_ACCESS[api]]]));

it('Placement: every family’s requests, its bucket’s included, are allowed by its rules with the bucket rule', async () => {
  calls.length = 0;
  expect(await placementWorkflow(placement)).toBeGreaterThan(50);
  const placementCalls = calls.filter((c) => !c.family.startsWith('baremetal'));
  const buckets = placementCalls.filter((c) => c.pk?.startsWith('RATE#'));
  expect(buckets.length).toBeGreaterThan(50);
  expect(new Set(buckets.map((c) => c.action))).toEqual(new Set(['dynamodb:UpdateItem']));
  expect(buckets.every((c) => c.pk!.startsWith('RATE#placement#'))).toBe(true);
  // every bucket write is allowed with the bucket rule, and that rule allows nothing else: the
  // calls refused without it are exactly the bucket writes (whatever else iam-usage.test.ts
  // finds about the families' own rules is the same with or without it)
  const withRule = denied(placementCalls, withBuckets(PLACEMENT_ACCESS, 'placement'));
  expect(withRule.filter((d) => d.includes('RATE#'))).toEqual([]);
  const without = denied(placementCalls, PLACEMENT_ACCESS);
  const added = without.filter((d) => !withRule.includes(d));
  expect(added.length).toBeGreaterThan(5);
  expect(added.every((d) => d.endsWith('dynamodb:UpdateItem RATE#…'))).toBe(true);
  expect(withRule.every((d) => without.includes(d))).toBe(true);
});

it('bare metal: each family’s requests are allowed by its actions on bare-metal items and its API’s buckets, never Placement’s', async () => {
  calls.length = 0;
  const req = (method: string, path: string, body?: unknown) =>
    fetch(baremetalUrl + path, {
      method,
      headers: {
        'x-openstack-ironic-api-version': '1.80',
        'x-project-id': 'iam-project',
        'x-roles': 'admin',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = await req('POST', '/v1/nodes', { driver: 'fake-hardware', name: `iam-${Date.now()}` });
  expect(created.status).toBe(201);
  const node = ((await created.json()) as { uuid: string }).uuid;
  for (const [m, p] of [
    ['GET', '/v1/nodes'],
    ['GET', `/v1/nodes/${node}`],
    ['GET', `/v1/nodes/${node}/traits`],
    ['GET', `/v1/nodes/${node}/states`],
    ['GET', `/v1/nodes/${node}/vifs`],
    ['GET', '/v1/allocations'],
    ['GET', '/v1/drivers'],
  ] as const) {
    expect((await req(m, p)).status, `${m} ${p}`).toBeLessThan(500);
  }
  const grants = Object.fromEntries(Object.entries(FAMILY_ACTIONS).map(([f, actions]) => [f, baremetalFamilyRules(f, actions)]));
  // only the bare-metal server served since the reset
  const bm = [...calls];
  const buckets = bm.filter((c) => c.pk?.startsWith('RATE#'));
  expect(buckets.length).toBeGreaterThanOrEqual(8);
  expect(buckets.every((c) => c.pk!.startsWith('RATE#baremetal#') && c.action === 'dynamodb:UpdateItem')).toBe(true);
  expect(denied(bm, withBuckets(grants, 'baremetal'))).toEqual([]);
});
