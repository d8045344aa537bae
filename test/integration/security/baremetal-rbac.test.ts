/**
 * The bare-metal API as deployed: identity from the API Gateway authorizer (Keystone
 * mode), Ironic's secure-RBAC defaults, the real family Lambda handlers against
 * DynamoDB Local. Owner / lessee scoping of nodes (visibility, list filtering,
 * field-level update rules), system scope, and the identity fields a client must not
 * be able to forge with headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { useTable } from '../harness.js';
import { authorizerContext } from '../../../functions/authorizer/keystone.js';

type Who = { userId?: string; projectId?: string; roles: string[]; systemScope?: string; projectName?: string; isAdminProject?: string };
const SYSTEM_ADMIN: Who = { userId: 'sa', roles: ['admin', 'member', 'reader'], systemScope: 'all' };
const SYSTEM_READER: Who = { userId: 'sr', roles: ['reader'], systemScope: 'all' };
const OWNER_MEMBER: Who = { userId: 'om', projectId: 'proj-owner', roles: ['member', 'reader'], projectName: 'owner' };
const OWNER_READER: Who = { userId: 'or', projectId: 'proj-owner', roles: ['reader'], projectName: 'owner' };
const LESSEE_MEMBER: Who = { userId: 'lm', projectId: 'proj-lessee', roles: ['member', 'reader'], projectName: 'lessee' };
const LESSEE_READER: Who = { userId: 'lr', projectId: 'proj-lessee', roles: ['reader'], projectName: 'lessee' };
const OTHER_MEMBER: Who = { userId: 'xm', projectId: 'proj-other', roles: ['member', 'reader'], projectName: 'other' };
const SERVICE_ELSEWHERE: Who = { userId: 'svc', projectId: 'proj-other', roles: ['service'], projectName: 'other' };
const SERVICE_PROJECT: Who = { userId: 'svc', projectId: 'proj-service', roles: ['service'], projectName: 'service' };

const saved = { ...process.env };
let families: Record<string, (e: APIGatewayProxyEventV2, c: Context) => Promise<any>>;
const context = {
  functionName: 'bm',
  awsRequestId: 'r',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:1:function:bm',
  memoryLimitInMB: '128',
  functionVersion: '1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

async function call(
  family: string,
  who: Who,
  method: string,
  path: string,
  opts: { body?: unknown; query?: string; headers?: Record<string, string> } = {},
) {
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: opts.query ?? '',
    headers: {
      'x-openstack-ironic-api-version': '1.80',
      host: 'bm.example.com',
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    requestContext: {
      accountId: '1',
      apiId: 'a',
      domainName: 'bm.example.com',
      domainPrefix: 'bm',
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
      // what the Keystone Lambda authorizer puts in the context (functions/authorizer/keystone.ts)
      authorizer: {
        lambda: authorizerContext({
          userId: who.userId ?? '',
          projectId: who.projectId,
          roles: who.roles,
          systemScope: who.systemScope,
          projectName: who.projectName,
          projectDomainId: 'default',
          isAdminProject: who.isAdminProject === undefined || who.isAdminProject === '' ? undefined : who.isAdminProject === 'true',
          source: 'keystone',
        }),
      },
    },
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
  const res = await families[family]!(event, context);
  return { status: res.statusCode as number, json: res.body ? JSON.parse(res.body) : undefined, text: String(res.body ?? '') };
}

let node: string;
let unowned: string;
beforeAll(async () => {
  await useTable({ AUTH_STRATEGY: 'authorizer', POWERTOOLS_METRICS_DISABLED: 'true' });
  delete process.env.BAREMETAL_POLICY_MODE; // behind an authorizer the default is secure-rbac
  families = {
    nodes: (await import('../../../functions/baremetal/nodes.js')).handler,
    allocations: (await import('../../../functions/baremetal/allocations.js')).handler,
  };
  const a = await call('nodes', SYSTEM_ADMIN, 'POST', '/v1/nodes', {
    body: {
      driver: 'fake-hardware',
      name: `rbac-${randomUUID().slice(0, 8)}`,
      owner: 'proj-owner',
      lessee: 'proj-lessee',
      resource_class: 'rbac-rc',
    },
  });
  expect(a.status, a.text).toBe(201);
  node = a.json.uuid;
  const b = await call('nodes', SYSTEM_ADMIN, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: 'rbac-rc' } });
  expect(b.status, b.text).toBe(201);
  unowned = b.json.uuid;
});
afterAll(() => {
  process.env = saved;
});

describe('bare metal behind an authorizer (secure RBAC)', () => {
  it('requests without an authorizer identity are refused', async () => {
    const ev = await call('nodes', { roles: [] }, 'GET', `/v1/nodes/${node}`);
    // an authorizer context naming no user is no identity at all
    expect(ev.status).toBe(401);
  });

  it('only system-scoped admins create nodes', async () => {
    for (const who of [OWNER_MEMBER, SYSTEM_READER, LESSEE_MEMBER]) {
      const r = await call('nodes', who, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware' } });
      expect(r.status, JSON.stringify(who)).toBe(403);
    }
  });

  it('owner and lessee see the node; another project gets 404; the system reader sees everything', async () => {
    for (const who of [OWNER_MEMBER, OWNER_READER, LESSEE_MEMBER, LESSEE_READER, SYSTEM_READER]) {
      expect((await call('nodes', who, 'GET', `/v1/nodes/${node}`)).status, who.userId).toBe(200);
    }
    const other = await call('nodes', OTHER_MEMBER, 'GET', `/v1/nodes/${node}`);
    expect(other.status).toBe(404);
    expect(other.text).toContain('could not be found');
    expect((await call('nodes', OWNER_MEMBER, 'GET', `/v1/nodes/${unowned}`)).status).toBe(404);
    expect((await call('nodes', SYSTEM_READER, 'GET', `/v1/nodes/${unowned}`)).status).toBe(200);
  });

  it('lists are filtered to owned and leased nodes for project tokens', async () => {
    const uuids = async (who: Who) => ((await call('nodes', who, 'GET', '/v1/nodes')).json.nodes as Array<{ uuid: string }>).map((n) => n.uuid);
    expect(await uuids(OWNER_READER)).toEqual([node]);
    expect(await uuids(LESSEE_READER)).toEqual([node]);
    expect(await uuids(OTHER_MEMBER)).toEqual([]);
    expect((await uuids(SYSTEM_READER)).sort()).toEqual([node, unowned].sort());
  });

  it('field-level updates: the owner member renames, the lessee member may not, readers never', async () => {
    const patch = (who: Who, value: string) =>
      call('nodes', who, 'PATCH', `/v1/nodes/${node}`, { body: [{ op: 'replace', path: '/description', value }] });
    expect((await patch(OWNER_MEMBER, 'by owner')).status).toBe(200);
    const lessee = await call('nodes', LESSEE_MEMBER, 'PATCH', `/v1/nodes/${node}`, {
      body: [{ op: 'replace', path: '/name', value: 'lessee-name' }],
    });
    expect(lessee.status).toBe(403);
    expect((await patch(OWNER_READER, 'by reader')).status).toBe(403);
    const owner = await call('nodes', LESSEE_MEMBER, 'PATCH', `/v1/nodes/${node}`, {
      body: [{ op: 'replace', path: '/owner', value: 'proj-lessee' }],
    });
    expect(owner.status).toBe(403);
    const after = await call('nodes', SYSTEM_READER, 'GET', `/v1/nodes/${node}`);
    expect(after.json).toMatchObject({ description: 'by owner', owner: 'proj-owner', lessee: 'proj-lessee' });
    expect(after.json.name).not.toBe('lessee-name');
  });

  it('a forged X-Project-Name does not make a service-role caller the service project', async () => {
    const forged = { 'x-project-name': 'service', 'x-is-admin-project': 'True', 'x-project-domain-id': 'default' };
    expect((await call('nodes', SERVICE_ELSEWHERE, 'GET', `/v1/nodes/${unowned}`, { headers: forged })).status).toBe(404);
    const list = await call('nodes', SERVICE_ELSEWHERE, 'GET', '/v1/nodes', { headers: forged });
    expect(list.json.nodes).toEqual([]);
    // the verified service project is the service role (system-member powers, Ironic's service_role)
    expect((await call('nodes', SERVICE_PROJECT, 'GET', `/v1/nodes/${unowned}`)).status).toBe(200);
  });

  it('allocations belong to the caller project and are invisible to others', async () => {
    const c = await call('allocations', OWNER_MEMBER, 'POST', '/v1/allocations', {
      body: { resource_class: 'rbac-rc', name: `alloc-${randomUUID().slice(0, 8)}` },
    });
    expect(c.status, c.text).toBe(201);
    expect(c.json.owner).toBe('proj-owner');
    const id = c.json.uuid;
    expect((await call('allocations', OWNER_READER, 'GET', `/v1/allocations/${id}`)).status).toBe(200);
    expect((await call('allocations', OTHER_MEMBER, 'GET', `/v1/allocations/${id}`)).status).toBe(404);
    expect((await call('allocations', OTHER_MEMBER, 'DELETE', `/v1/allocations/${id}`)).status).toBe(404);
    expect((await call('allocations', SYSTEM_READER, 'GET', `/v1/allocations/${id}`)).status).toBe(200);
    const other = await call('allocations', OTHER_MEMBER, 'POST', '/v1/allocations', { body: { resource_class: 'rbac-rc', owner: 'proj-owner' } });
    expect(other.status).toBe(403);
  });
});
