/**
 * Identity fails closed in Lambda: the real handlers of both APIs, run as in AWS
 * (AWS_LAMBDA_FUNCTION_NAME set), with a reader's Keystone context and the headers an
 * attacker adds (x-auth-token: admin, x-roles: admin,service). A missing or misspelt
 * AUTH_STRATEGY, or header identity (noauth2) without the explicit test-only switch,
 * identifies nobody: every request but the version documents is a 500 with a generic
 * body, the reason in the log. Only AUTH_STRATEGY=authorizer serves, from the verified
 * identity alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTable } from '../harness.js';
import { deployedApi, ks } from './lambda-events.js';
import { resetConfig } from '../../../functions/config.js';
import { captureOutput, type CapturedOutput } from '../../capture-output.js';

const saved = { ...process.env };
const READER = ks({ userId: 'r', projectId: 'proj-a', roles: ['reader'] });
const FORGED = { 'x-auth-token': 'admin', 'x-roles': 'admin,service', 'x-project-id': 'proj-a' };
const BM_FORGED = { 'x-roles': 'admin', 'openstack-system-scope': 'all', 'x-project-id': 'proj-a' };
let placement: Awaited<ReturnType<typeof deployedApi>>;
let bm: Awaited<ReturnType<typeof deployedApi>>;
let output: CapturedOutput;

beforeAll(async () => {
  await useTable({ POWERTOOLS_METRICS_DISABLED: 'true', PLACEMENT_POLICY_MODE: 'secure-rbac' });
  delete process.env.BAREMETAL_POLICY_MODE;
  placement = await deployedApi('placement');
  bm = await deployedApi('baremetal');
  output = captureOutput();
});
afterAll(() => {
  output.restore();
  process.env = saved;
  resetConfig();
});

function environment(env: Record<string, string | undefined>) {
  for (const k of ['AUTH_STRATEGY', 'BERTH_INSECURE_NOAUTH', 'AWS_LAMBDA_FUNCTION_NAME']) delete process.env[k];
  for (const [k, v] of Object.entries(env)) if (v !== undefined) process.env[k] = v;
  resetConfig();
}

const IN_LAMBDA = { AWS_LAMBDA_FUNCTION_NAME: 'berth-placement-resource-providers' };

describe('identity configuration in AWS fails closed', () => {
  for (const [label, env, reason] of [
    ['AUTH_STRATEGY missing', { ...IN_LAMBDA }, 'AUTH_STRATEGY is not set'],
    ['AUTH_STRATEGY misspelt', { ...IN_LAMBDA, AUTH_STRATEGY: 'Authorizer' }, 'not a known strategy'],
    ['AUTH_STRATEGY unknown', { ...IN_LAMBDA, AUTH_STRATEGY: 'keystone' }, 'not a known strategy'],
    ['header identity without the test-only switch', { ...IN_LAMBDA, AUTH_STRATEGY: 'noauth2' }, 'BERTH_INSECURE_NOAUTH'],
  ] as const) {
    it(`${label}: every API request is refused with a generic 500, the version documents still answer`, async () => {
      environment(env);
      const before = output.text.length;
      const p = await placement(READER, 'GET', '/resource_providers', { headers: FORGED });
      expect(p.status, p.text).toBe(500);
      expect(p.text).not.toContain('AUTH_STRATEGY');
      expect(p.json.errors[0].request_id).toMatch(/^req-/);
      expect(p.json.errors[0].detail).toContain(p.json.errors[0].request_id);
      const b = await bm(READER, 'GET', '/v1/nodes', { headers: BM_FORGED });
      expect(b.status, b.text).toBe(500);
      expect(b.text).not.toContain('AUTH_STRATEGY');
      expect(b.text).toContain(b.headers['openstack-request-id']!);
      expect(output.text.slice(before)).toContain(reason);
      expect((await placement(READER, 'GET', '/')).status).toBe(200);
      expect((await bm(READER, 'GET', '/v1')).status).toBe(200);
    });
  }

  it('AUTH_STRATEGY=authorizer serves the verified identity only: the forged headers change nothing', async () => {
    environment({ ...IN_LAMBDA, AUTH_STRATEGY: 'authorizer' });
    const p = await placement(READER, 'GET', '/resource_providers', { headers: FORGED });
    expect(p.status, p.text).toBe(403);
    const b = await bm(READER, 'GET', '/v1/nodes', { headers: BM_FORGED });
    expect(b.status, b.text).toBe(200);
    expect(b.json.nodes).toEqual([]); // a reader of proj-a, not a system admin
    const create = await bm(READER, 'POST', '/v1/nodes', { body: { driver: 'fake-hardware' }, headers: BM_FORGED });
    expect(create.status).toBe(403);
  });

  it('header identity in AWS only with the explicit test-only switch; locally it stays the default', async () => {
    environment({ ...IN_LAMBDA, AUTH_STRATEGY: 'noauth2', BERTH_INSECURE_NOAUTH: 'true' });
    expect((await placement({ none: true }, 'GET', '/resource_providers', { headers: { 'x-auth-token': 'admin' } })).status).toBe(200);
    environment({});
    expect((await placement({ none: true }, 'GET', '/resource_providers', { headers: { 'x-auth-token': 'admin' } })).status).toBe(200);
    expect((await bm({ none: true }, 'GET', '/v1/nodes')).status).toBe(200);
    // a misspelt strategy fails closed locally too
    environment({ AUTH_STRATEGY: 'noauth' });
    expect((await placement({ none: true }, 'GET', '/resource_providers', { headers: { 'x-auth-token': 'admin' } })).status).toBe(500);
  });
});
