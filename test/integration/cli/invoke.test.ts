/**
 * `npm run invoke -- FUNCTION EVENT.json` (scripts/invoke.ts): one handler run on an
 * API Gateway v2 event as `sam local invoke` runs it — the entry module cdk/ bundles,
 * the result alone on stdout — against a table in DynamoDB Local.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTable } from '../harness.js';

const ROOT = join(__dirname, '..', '..', '..');
let env: Record<string, string>;

beforeAll(async () => {
  await useTable();
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    DDB_ENDPOINT: process.env.DDB_ENDPOINT!,
    TABLE_NAME: process.env.TABLE_NAME!,
    AWS_REGION: 'local',
  };
});

function invoke(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/invoke.ts'), ...args], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 90_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run invoke', () => {
  it('runs a handler on a request it builds, routed as API Gateway routes it, and prints only the result', () => {
    const r = invoke('placement-traits', '--method', 'PUT', '--path', '/traits/CUSTOM_INVOKED', '--header', 'openstack-api-version: placement 1.39');
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toMatch(/\/traits\/CUSTOM_INVOKED$/);
    // the function's own log line went to stderr
    expect(r.stderr).toContain('CUSTOM_INVOKED');
  });

  it('runs a handler on an API Gateway v2 event file, by the template’s logical id too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-invoke-'));
    const file = join(dir, 'event.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: '2.0',
        routeKey: 'ANY /traits',
        rawPath: '/traits',
        rawQueryString: 'name=startswith:CUSTOM_INVOKED',
        headers: { host: 'example.com', 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
        requestContext: { http: { method: 'GET', path: '/traits', sourceIp: '192.0.2.1' }, stage: '$default', requestId: 'r1' },
        isBase64Encoded: false,
      }),
    );
    for (const name of ['placement-traits', 'PlacementtraitsFn1CD9A117']) {
      const r = invoke(name, file);
      expect(r.code, r.stderr).toBe(0);
      const res = JSON.parse(r.stdout);
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ traits: ['CUSTOM_INVOKED'] });
    }
  });

  it('runs the bare-metal drivers function (no table access) as API Gateway would', () => {
    const r = invoke('baremetal-drivers', '--method', 'GET', '--path', '/v1/drivers', '--header', 'x-openstack-ironic-api-version: 1.80');
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).drivers.map((d: { name: string; type: string }) => [d.name, d.type])).toEqual([['fake-hardware', 'dynamic']]);
  });

  it('lists the functions and refuses a name it does not know', () => {
    const list = invoke('--list');
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        'placement-allocation-candidates',
        'baremetal-nodes',
        'baremetal-drivers',
        'baremetal-node-vifs',
        'baremetal-step-reserve-node',
        'maintenance',
      ]),
    );
    const bad = invoke('placement-nope', '--method', 'GET', '--path', '/');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no function placement-nope');
  });
});
