/**
 * Operator policy overrides end to end: a policy.yaml (PLACEMENT_POLICY_FILE) defines a
 * custom rule and rewires Placement rules to it; requests over HTTP follow the file,
 * scope types of the registered defaults still apply, and untouched rules keep their
 * defaults.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPlacement, type Api } from '../harness.js';
import { resetConfig } from '../../../functions/config.js';

let api: Api;
const dir = mkdtempSync(join(tmpdir(), 'berth-policy-'));
const file = join(dir, 'policy.yaml');
writeFileSync(
  file,
  [
    '# operators of the "ops" project may read providers; nobody may create them',
    '"ops_reader": "role:reader and project_id:ops"',
    '"placement:resource_providers:list": "rule:ops_reader or rule:admin_api"',
    "'placement:resource_providers:create': '!'",
    'placement:traits:list: "@"',
    '',
  ].join('\n'),
);
const saved = { ...process.env };

const who = {
  opsReader: { 'x-auth-token': 'u', 'x-roles': 'reader', 'x-project-id': 'ops' },
  otherReader: { 'x-auth-token': 'u', 'x-roles': 'reader', 'x-project-id': 'elsewhere' },
  systemOpsReader: { 'x-auth-token': 'u', 'x-roles': 'reader', 'openstack-system-scope': 'all' },
  service: { 'x-auth-token': 'u', 'x-roles': 'service', 'x-project-id': 'service_project_id' },
  admin: { 'x-auth-token': 'u', 'x-roles': 'admin', 'x-project-id': 'admin_project_id' },
  nobody: { 'x-auth-token': 'u', 'x-roles': 'member', 'x-project-id': 'p' },
};
const as = (h: Record<string, string>, method: string, path: string, body?: unknown) => api.req(method, path, { token: '', headers: h, body });

beforeAll(async () => {
  api = await startPlacement({ PLACEMENT_POLICY_MODE: 'secure-rbac', PLACEMENT_POLICY_FILE: file });
});
afterAll(async () => {
  for (const k of ['PLACEMENT_POLICY_MODE', 'PLACEMENT_POLICY_FILE', 'PLACEMENT_POLICY_OVERRIDES']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
    resetConfig();
  }
  await api.close();
});

describe('PLACEMENT_POLICY_FILE', () => {
  it('a custom rule grants what the defaults refuse, and only to its persona', async () => {
    expect((await as(who.opsReader, 'GET', '/resource_providers')).status).toBe(200);
    expect((await as(who.admin, 'GET', '/resource_providers')).status).toBe(200);
    const other = await as(who.otherReader, 'GET', '/resource_providers');
    expect(other.status).toBe(403);
    expect(other.json.errors[0].detail).toContain('Policy does not allow placement:resource_providers:list to be performed.');
    // the override replaced admin_or_service: the service role no longer lists
    expect((await as(who.service, 'GET', '/resource_providers')).status).toBe(403);
    // the registered rule's scope_types still apply to an overridden rule
    expect((await as(who.systemOpsReader, 'GET', '/resource_providers')).status).toBe(403);
  });

  it('"!" refuses everyone, and nothing is created', async () => {
    for (const h of [who.admin, who.service]) {
      const r = await as(h, 'POST', '/resource_providers', { name: 'should-not-exist' });
      expect(r.status).toBe(403);
    }
    expect((await as(who.admin, 'GET', '/resource_providers?name=should-not-exist')).json.resource_providers).toEqual([]);
  });

  it('"@" opens a rule to any authenticated project token; other rules keep their defaults', async () => {
    expect((await as(who.nobody, 'GET', '/traits')).status).toBe(200);
    expect((await api.req('GET', '/traits', { token: '', headers: { accept: 'application/json' } })).status).toBe(401);
    expect((await as(who.nobody, 'GET', '/resource_classes')).status).toBe(403);
    expect((await as(who.service, 'GET', '/resource_classes')).status).toBe(200);
  });

  it('PLACEMENT_POLICY_OVERRIDES is layered over the file', async () => {
    process.env.PLACEMENT_POLICY_OVERRIDES = JSON.stringify({ 'placement:resource_classes:list': 'role:member' });
    resetConfig();
    try {
      expect((await as(who.nobody, 'GET', '/resource_classes')).status).toBe(200);
      expect((await as(who.service, 'GET', '/resource_classes')).status).toBe(403);
      expect((await as(who.opsReader, 'GET', '/resource_providers')).status).toBe(200);
    } finally {
      delete process.env.PLACEMENT_POLICY_OVERRIDES;
      resetConfig();
    }
  });
});
